package campaign

import (
	"fmt"
	"math/bits"
	"reflect"
	"sort"
	"sync"

	"github.com/leasekit/leasekit/sim"
)

// CoveragePoint is one abstract coverage point a run reached (a hash of what
// it saw), and At, the number of decisions drawn when it was reached (-1:
// unknown), where guided search aims its mutations when the point is new.
type CoveragePoint struct {
	Hash uint64
	At   int
}

// OperationCoverage is the part of DefaultCoverage taken at operation
// boundaries, from what every run records under sim's Config.Coverage
// (every point but the call trace's; Options.Signal "operations" guides
// by it alone):
//
//   - each probe fired, and its count's power-of-two bucket (as AFL buckets
//     edge counts);
//   - each operation's class: its name and outcome, the outcome being the
//     enum-like fields of its output (kind, refusal reason: the bool and
//     8-bit fields of a struct), "?" when cut short;
//   - each lane's pair of consecutive operation classes (an edge);
//   - each operation's class with each directory's shape when it returned
//     (simfs Shapes: entry names with identifiers folded, types, size
//     classes, whether the durable entries differ), so a new layout of a
//     directory after a known outcome counts;
//   - the run's outcome and failure class, and the directory shapes at its
//     end.
//
// Go code coverage is not part of it: counters exist only in a -cover
// build, and reading and clearing them per run (runtime/coverage) writes
// and parses every counter of the binary, which costs more than a run.
func OperationCoverage(result sim.Result) []CoveragePoint {
	return operationCoverage(make([]CoveragePoint, 0, 3*len(result.History)+2*len(result.Probes)+2), result)
}

// The signals Options.Signal names.
const (
	SignalCalls      = "calls"
	SignalOperations = "operations"
)

// DefaultCoverage is the coverage signal of an engine without its own
// (Engine.Coverage): OperationCoverage and CallCoverage.
func DefaultCoverage(result sim.Result) []CoveragePoint {
	points := make([]CoveragePoint, 0, 3*len(result.History)+2*len(result.Probes)+2+2*len(result.Calls))
	return callCoverage(operationCoverage(points, result), result)
}

// CallCoverage is the call trace's part of DefaultCoverage (sim's
// Result.Calls: every process's environment calls, each as its operation,
// call kind, folded path and result, and each edge from the process's
// previous call): each point or edge, and with its hit count's bucket
// (1, 2, 3, 4-7, 8-15, ..., as AFL buckets edge counts), at the decision
// count where it was first hit and where its bucket was reached, so a
// mutation aims at the decisions just before the event inside an
// operation that made the run new.
func CallCoverage(result sim.Result) []CoveragePoint {
	return callCoverage(make([]CoveragePoint, 0, 2*len(result.Calls)), result)
}

func callCoverage(points []CoveragePoint, result sim.Result) []CoveragePoint {
	for _, c := range result.Calls {
		points = append(points, CoveragePoint{mix(callSalt, c.Hash), c.At},
			CoveragePoint{mix(mix(callCountSalt, c.Hash), uint64(hitBucket(c.Hits))), c.BucketAt})
	}
	return points
}

// hitBucket is AFL's bucket of a hit count: 1, 2, 3, then powers of two.
func hitBucket(hits int) int {
	if hits <= 3 {
		return hits
	}
	return 2 + bits.Len(uint(hits))
}

func operationCoverage(points []CoveragePoint, result sim.Result) []CoveragePoint {
	names := make([]string, 0, len(result.Probes))
	for name := range result.Probes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		at, ok := result.ProbeAt[name]
		if !ok {
			at = -1
		}
		points = append(points, CoveragePoint{hashOf("probe", name), at},
			CoveragePoint{hashOf("probe-count", name, bits.Len(uint(result.Probes[name]))), at})
	}
	last := map[int]uint64{}
	for _, op := range result.History {
		class := opClass(op)
		points = append(points, CoveragePoint{class, op.Decision},
			CoveragePoint{mix(mix(edgeSalt, last[op.Lane]), class), op.Decision})
		for _, shape := range op.Shapes {
			points = append(points, CoveragePoint{mix(mix(shapeSalt, class), shape), op.Decision})
		}
		last[op.Lane] = class
	}
	end := len(result.Decisions)
	points = append(points, CoveragePoint{hashOf("outcome", result.Outcome.String(), Class(result.Message)), end})
	for _, shape := range result.Shapes {
		points = append(points, CoveragePoint{mix(endSalt, shape), end})
	}
	return points
}

var (
	edgeSalt  = hashOf("edge")
	shapeSalt = hashOf("shape-after")
	endSalt   = hashOf("shape-end")

	callSalt      = hashOf("call")
	callCountSalt = hashOf("call-count")
)

// opClass hashes an operation's name and outcome.
func opClass(op sim.Operation) uint64 {
	if op.Unknown {
		return hashOf("op", op.Op, "?")
	}
	return mix(hashOf("op", op.Op), outputClass(op.Output))
}

// outputClass hashes the enum-like part of an output: a struct's bool and
// 8-bit fields (a kind, a refusal reason; not epochs, names or times), a
// bool's value, else the type's name.
func outputClass(output any) uint64 {
	if output == nil {
		return hashOf("nil")
	}
	v := reflect.ValueOf(output)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	h := hashOf(v.Type().String())
	switch v.Kind() {
	case reflect.Bool:
		return mix(h, boolBit(v.Bool()))
	case reflect.Struct:
		for _, i := range enumFields(v.Type()) {
			f := v.Field(i)
			if f.Kind() == reflect.Bool {
				h = mix(h, boolBit(f.Bool()))
			} else if f.CanUint() {
				h = mix(h, f.Uint())
			} else {
				h = mix(h, uint64(f.Int()))
			}
		}
	}
	return h
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// enumFieldsCache holds each struct type's enum-like field indices.
var enumFieldsCache sync.Map

func enumFields(t reflect.Type) []int {
	if cached, ok := enumFieldsCache.Load(t); ok {
		return cached.([]int)
	}
	var fields []int
	for i := range t.NumField() {
		switch t.Field(i).Type.Kind() {
		case reflect.Bool, reflect.Uint8, reflect.Int8:
			fields = append(fields, i)
		}
	}
	enumFieldsCache.Store(t, fields)
	return fields
}

// hashOf hashes the printed parts (FNV-1a).
func hashOf(parts ...any) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, part := range parts {
		for _, c := range []byte(fmt.Sprint(part)) {
			h = (h ^ uint64(c)) * 0x100000001b3
		}
		h = (h ^ 0xff) * 0x100000001b3
	}
	return h
}

// mix folds v into h.
func mix(h, v uint64) uint64 { return splitmix(h ^ v) }

// coverageOf is the engine's signal of a run, and how many of its points
// (the first) are OperationCoverage's: the rest are CallCoverage's. An
// engine's own signal is all operation points.
func coverageOf(e *Engine, result sim.Result) ([]CoveragePoint, int) {
	if e.Coverage != nil {
		points := e.Coverage(result)
		return points, len(points)
	}
	points := operationCoverage(make([]CoveragePoint, 0, 3*len(result.History)+2*len(result.Probes)+2+2*len(result.Calls)), result)
	n := len(points)
	return callCoverage(points, result), n
}
