// Package campaign runs leasekit's simulation campaigns: many seeded runs of
// a workload (an "engine") over a worker pool, sharded across machines,
// summarised in a report that merges; failing runs are shrunk to a minimal
// decision list and written as seed files that replay bit-exactly.
//
// cmd/leasesim is a thin command line over this package.
package campaign

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/leasekit/leasekit/sim"
)

// Param is one workload knob an engine takes (processes, operations per
// process, ...). Shrinking lowers each towards Min while the failure persists.
type Param struct {
	Name    string
	Default int
	Min     int
	Max     int
	Doc     string
	// Fixed knobs are not lowered by shrinking (a layout choice, where a
	// lower number is not a simpler run).
	Fixed bool
}

// Params holds workload knob values by name.
type Params map[string]int

// Verdict is an engine's judgement of a finished run's history.
type Verdict struct {
	// OK is true when the history is linearizable (or not checked).
	OK bool
	// Message explains a failed check; it is stable across reruns (no
	// durations, no map order) so shrinking can compare it.
	Message string
	// Visualize, when not nil, writes porcupine's HTML visualization of
	// the checked history.
	Visualize func(w io.Writer) error
}

// Engine is a workload the campaign can run: how to build a world for one
// run, and how to check the history it records.
type Engine struct {
	Name string
	// Doc is one line shown by `leasesim run --help`.
	Doc string
	// Params lists the workload knobs, in print order.
	Params []Param
	// StepsMax is the step budget of one run; zero means stepsMaxDefault.
	StepsMax int
	// Setup returns the Config.Setup of one run with the given knobs. The
	// returned function runs once per run (twice under RunTwice) and must
	// reset any state it closes over.
	Setup func(params Params) func(w *sim.World) error
	// Check judges the history of a run that ended without a violation;
	// nil means the history is not checked.
	Check func(result sim.Result, visualize bool) Verdict
	// Hidden engines are left out of "all" (self-test engines).
	Hidden bool
}

// stepsMaxDefault is the per-run step budget when an engine names none.
const stepsMaxDefault = 20_000

var (
	registryMutex sync.Mutex
	registry      = map[string]*Engine{}
)

// Register adds an engine. It panics on a duplicate or malformed engine:
// registration happens at init time, and a bad table is a programming error.
func Register(e *Engine) {
	if e.Name == "" || strings.ContainsAny(e.Name, " /=,") || e.Setup == nil {
		panic(fmt.Sprintf("campaign: malformed engine %q", e.Name))
	}
	for _, p := range e.Params {
		if p.Min > p.Default || (p.Max != 0 && p.Default > p.Max) {
			panic(fmt.Sprintf("campaign: engine %s param %s: min %d default %d max %d", e.Name, p.Name, p.Min, p.Default, p.Max))
		}
	}
	registryMutex.Lock()
	defer registryMutex.Unlock()
	if _, ok := registry[e.Name]; ok {
		panic(fmt.Sprintf("campaign: engine %s registered twice", e.Name))
	}
	registry[e.Name] = e
}

// Lookup returns the named engine.
func Lookup(name string) (*Engine, error) {
	registryMutex.Lock()
	defer registryMutex.Unlock()
	if e, ok := registry[name]; ok {
		return e, nil
	}
	if name == "admission" || name == "dirlease" {
		return nil, &UsageError{Message: fmt.Sprintf("unknown engine %q: its simulator workload is not registered yet; registered: %s",
			name, strings.Join(namesLocked(true), ", "))}
	}
	return nil, &UsageError{Message: fmt.Sprintf("unknown engine %q; registered: %s", name, strings.Join(namesLocked(true), ", "))}
}

// Names returns the registered engine names, sorted; hidden ones only when
// all is true.
func Names(all bool) []string {
	registryMutex.Lock()
	defer registryMutex.Unlock()
	return namesLocked(all)
}

func namesLocked(all bool) []string {
	names := make([]string, 0, len(registry))
	for name, e := range registry {
		if all || !e.Hidden {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// ResolveEngines turns a comma-separated --engine value into engine names;
// "all" is every visible registered engine.
func ResolveEngines(spec string) ([]string, error) {
	var names []string
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == "all" {
			names = append(names, Names(false)...)
			continue
		}
		if _, err := Lookup(name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil, &UsageError{Message: "no engine registered"}
	}
	return names, nil
}

// DefaultParams returns the engine's default knob values.
func (e *Engine) DefaultParams() Params {
	params := Params{}
	for _, p := range e.Params {
		params[p.Name] = p.Default
	}
	return params
}

// param returns the named Param.
func (e *Engine) param(name string) (Param, bool) {
	for _, p := range e.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// checkParams validates knob values against the engine's table.
func (e *Engine) checkParams(params Params) error {
	for name, value := range params {
		p, ok := e.param(name)
		if !ok {
			return &UsageError{Message: fmt.Sprintf("engine %s has no knob %q", e.Name, name)}
		}
		if value < p.Min || (p.Max != 0 && value > p.Max) {
			return &UsageError{Message: fmt.Sprintf("engine %s knob %s=%d out of range [%d, %d]", e.Name, name, value, p.Min, p.Max)}
		}
	}
	return nil
}

// UsageError is bad input from the user: an unknown engine, a malformed
// flag or seed file. The command line exits with ExitUsage.
type UsageError struct{ Message string }

func (e *UsageError) Error() string { return e.Message }
