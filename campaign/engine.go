// Package campaign runs leasekit's simulation campaigns: many seeded runs of
// an engine's workload (an Engine value, listed in a Catalog) over a worker
// pool, sharded across machines, summarised in a report that merges;
// failing runs are shrunk to a minimal decision list and written as seed
// files that replay bit-exactly.
//
// Package leasesim is the command line over this package, and
// cmd/leasesim runs it over leasekit's engines.
package campaign

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
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
	// Explain, when not nil, says in words why the history failed its
	// check (Engine.ExplainHistory); the replay report prints it.
	Explain func() string
}

// Engine is the one definition of an engine the harness runs: how to build
// a world for one run, its knobs and step budget, how to check the history
// it records, which probes its campaigns must fire, and how its history maps
// to porcupine operations and the model that checks them. It is a plain
// value: a workload package builds one (workload/leasework.Engine, ...),
// and a command lists the engines it knows in a Catalog; nothing registers
// itself.
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
	// nil means the history is not checked. HistoryVerdict builds its
	// answer for a porcupine check.
	Check func(result sim.Result, visualize bool) Verdict
	// History maps a run's history to porcupine operations and the model
	// that checks them (visualizations and failure artifacts use it); nil
	// for an engine without a porcupine model.
	History func(history []sim.Operation) ([]porcupine.Operation, porcupine.Model)
	// Probes are the probes a campaign of the engine with every fault
	// enabled must fire at least once (MissingProbes).
	Probes []string
	// Explore holds the knobs of the small scenario `leasesim explore`
	// enumerates (ExploreScenario): two processes, no respawn.
	Explore Params
	// Hidden engines are left out of "all" (self-test engines).
	Hidden bool
	// WorkloadVersion is the version of the engine's workload, recorded in
	// every seed file written for it (Provenance): a developer bumps it
	// when the workload's code changes what a run of a given input does, so
	// a drifted seed file says whether its workload moved.
	WorkloadVersion int
	// Coverage scores a run for guided search (Options.Search "guided",
	// guided.go): the distinct points it reached, each with the decision
	// count at which it was reached. nil means DefaultCoverage (probes,
	// operation outcomes, on-disk shapes).
	Coverage func(result sim.Result) []CoveragePoint
}

// stepsMaxDefault is the per-run step budget when an engine names none.
const stepsMaxDefault = 20_000

// validate panics on a malformed engine: engine tables are code, and a bad
// one is a programming error.
func (e *Engine) validate() {
	if e.Name == "" || strings.ContainsAny(e.Name, " /=,") || e.Setup == nil {
		panic(fmt.Sprintf("campaign: malformed engine %q", e.Name))
	}
	for _, p := range e.Params {
		if p.Min > p.Default || (p.Max != 0 && p.Default > p.Max) {
			panic(fmt.Sprintf("campaign: engine %s param %s: min %d default %d max %d", e.Name, p.Name, p.Min, p.Default, p.Max))
		}
	}
}

// Catalog is the set of engines a command (or a test) knows, by name: seed
// files and flags name an engine, and every operation that resolves a name
// is a Catalog method. It is built from an explicit list (NewCatalog) and
// never changes.
type Catalog struct {
	engines map[string]*Engine
}

// NewCatalog returns the catalog of engines. It panics on a malformed
// engine or a name given twice (a programming error in the list).
func NewCatalog(engines ...*Engine) *Catalog {
	c := &Catalog{engines: make(map[string]*Engine, len(engines))}
	for _, e := range engines {
		e.validate()
		if _, ok := c.engines[e.Name]; ok {
			panic(fmt.Sprintf("campaign: engine %s listed twice", e.Name))
		}
		c.engines[e.Name] = e
	}
	return c
}

// Lookup returns the named engine.
func (c *Catalog) Lookup(name string) (*Engine, error) {
	if c == nil {
		return nil, &UsageError{Message: fmt.Sprintf("engine %q: no engine catalog given", name)}
	}
	if e, ok := c.engines[name]; ok {
		return e, nil
	}
	return nil, &UsageError{Message: fmt.Sprintf("unknown engine %q; known: %s", name, strings.Join(c.Names(true), ", "))}
}

// Names returns the engine names, sorted; hidden ones only when all is
// true.
func (c *Catalog) Names(all bool) []string {
	if c == nil {
		return nil
	}
	names := make([]string, 0, len(c.engines))
	for name, e := range c.engines {
		if all || !e.Hidden {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// ResolveEngines turns a comma-separated --engine value into engine names;
// "all" is every visible engine.
func (c *Catalog) ResolveEngines(spec string) ([]string, error) {
	var names []string
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == "all" {
			names = append(names, c.Names(false)...)
			continue
		}
		if _, err := c.Lookup(name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil, &UsageError{Message: "no engine known"}
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
