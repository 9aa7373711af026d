package campaign

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// Bounded exhaustive exploration: every decision list of a small scenario
// up to a bound, instead of random seeds. A run is a function of its
// decision list (answers past the end are 0), so the executions of a
// scenario are the lists without trailing zeros; exploring them in order of
// their number of non-zero decisions ("choices": a scheduling choice other
// than the first runnable process, a crash point, a fault) enumerates every
// schedule and crash point with at most ChoicesMax deviations from the
// default run, breadth first, so the first failure found has the fewest
// choices, and the same one every time.
//
// The number of alternatives of a decision is learned without a hook in
// the simulator: replaying value v at position j, the run records v % n for
// Intn(n) and 1 for a Chance; a recorded value other than v means v is past
// the last alternative, and the values of j are exhausted.

// ExploreOptions bounds an exploration.
type ExploreOptions struct {
	// Catalog holds the scenario's engine.
	Catalog *Catalog
	// Spec is the scenario: engine, knobs, fault plan (its Seed, Decisions
	// and Scheduler are ignored: the random scheduler reads the list).
	Spec Spec
	// ChoicesMax bounds the non-zero decisions of an execution.
	ChoicesMax int
	// DecisionsMax bounds the positions at which the exploration branches
	// (a decision past it always answers 0).
	DecisionsMax int
	// ValuesMax bounds the alternatives tried at one position (0 included);
	// zero means every alternative. Scheduling picks and crash points have
	// few; a workload's own draws (an operation out of 100) may have many.
	ValuesMax int
	// RunsMax bounds the runs (0: none); Duration bounds the wall time.
	RunsMax  int
	Duration time.Duration
	// StopAtFirst ends the exploration at the first failure.
	StopAtFirst bool
	// OnExecution, when not nil, sees each execution's list (trailing
	// zeros cut) and finding, in exploration order.
	OnExecution func(list []uint32, finding Finding)
}

// ExploreResult reports an exploration.
type ExploreResult struct {
	// Executions counts the distinct executions run; Probes counts the
	// runs that only showed a position's values were exhausted.
	Executions int `json:"executions"`
	Probes     int `json:"probes"`
	// States counts distinct per-step world hashes over every execution;
	// FinalStates the distinct final hashes.
	States      int `json:"states"`
	FinalStates int `json:"final_states"`
	// StepsMax is the longest execution; DecisionsLongest its decision count.
	StepsMax         int `json:"steps_max"`
	DecisionsLongest int `json:"decisions_longest"`
	// ChoicesReached is the largest choice count explored; Complete is true
	// when every execution within the bounds was run.
	ChoicesReached int     `json:"choices_reached"`
	Complete       bool    `json:"complete"`
	Seconds        float64 `json:"seconds"`
	// Failures counts failing executions; the first is kept.
	Failures       int      `json:"failures"`
	Found          bool     `json:"found"`
	FoundAt        int      `json:"found_at,omitempty"`
	Finding        Finding  `json:"finding"`
	Counterexample []uint32 `json:"counterexample,omitempty"`
}

// exploreEngine looks up an exploration's engine and bounds ctx by its wall
// time limit (none when limit is 0); the caller defers cancel.
func (c *Catalog) exploreEngine(ctx context.Context, engine string, limit time.Duration) (*Engine, context.Context, context.CancelFunc, error) {
	e, err := c.Lookup(engine)
	if err != nil || limit <= 0 {
		return e, ctx, func() {}, err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	return e, ctx, cancel, nil
}

// Explore enumerates the scenario's executions within the bounds.
func Explore(ctx context.Context, o ExploreOptions) (ExploreResult, error) {
	e, ctx, cancel, err := o.Catalog.exploreEngine(ctx, o.Spec.Engine, o.Duration)
	defer cancel()
	if err != nil {
		return ExploreResult{}, err
	}
	x := &explorer{engine: e, options: o, states: map[uint64]bool{}, finals: map[uint64]bool{}, started: time.Now()}
	x.result.Complete = true
	x.run(nil)
	level := []node{x.node(0)}
	for choices := 0; choices < o.ChoicesMax && len(level) > 0 && !x.stopped(ctx); choices++ {
		var next []node
		for _, parent := range level {
			next = x.children(ctx, parent, next)
			if x.stopped(ctx) {
				break
			}
		}
		level = next
	}
	if x.stopped(ctx) {
		x.result.Complete = false
	}
	x.result.States, x.result.FinalStates = len(x.states), len(x.finals)
	x.result.Seconds = time.Since(x.started).Seconds()
	return x.result, nil
}

type explorer struct {
	engine  *Engine
	options ExploreOptions
	result  ExploreResult
	states  map[uint64]bool
	finals  map[uint64]bool
	started time.Time
	// last is the recorded list of the last run.
	last []uint32
}

func (x *explorer) stopped(ctx context.Context) bool {
	o := x.options
	runs := x.result.Executions + x.result.Probes
	return ctx.Err() != nil || (o.RunsMax > 0 && runs >= o.RunsMax) || (o.StopAtFirst && x.result.Found)
}

// node is an execution to branch from: the length of its list (without
// trailing zeros), and what its run recorded, cut at DecisionsMax.
type node struct {
	length   int
	recorded []uint32
}

// node returns the last run as a node of a list of the given length.
func (x *explorer) node(length int) node {
	return node{length: length, recorded: slices.Clone(x.last[:min(len(x.last), x.options.DecisionsMax)])}
}

// children runs every child of parent (its list with one more non-zero
// decision, after the parent's last one) and appends them to expand.
func (x *explorer) children(ctx context.Context, parent node, expand []node) []node {
	recorded := parent.recorded
	for j := parent.length; j < len(recorded); j++ {
		for v := uint32(1); x.options.ValuesMax == 0 || int(v) < x.options.ValuesMax; v++ {
			if x.stopped(ctx) {
				return expand
			}
			child := append(slices.Clone(recorded[:j]), v)
			if !x.run(child) {
				break
			}
			expand = append(expand, x.node(len(child)))
		}
	}
	return expand
}

// run replays list and judges it; it reports false (a probe) when the last
// value of list is past its position's alternatives.
func (x *explorer) run(list []uint32) bool {
	spec := x.options.Spec.clone()
	spec.Seed, spec.Scheduler, spec.Decisions = 1, sim.SchedulerRandom, list
	if spec.Decisions == nil {
		spec.Decisions = []uint32{}
	}
	cfg := spec.Config(x.engine, nil)
	cfg.HashStream = true
	// A child's last value is probed until the run answers it back: a
	// clock decision must stop at its drawn range, not at StepTimeLong.
	cfg.ReplayShortSteps = true
	result := sim.Run(cfg)
	x.last = result.Decisions
	if n := len(list); n > 0 && (len(result.Decisions) < n || result.Decisions[n-1] != list[n-1]) {
		x.result.Probes++
		return false
	}
	x.result.Executions++
	for _, h := range result.HashStream {
		x.states[h] = true
	}
	x.finals[result.Hash] = true
	x.result.StepsMax = max(x.result.StepsMax, result.Steps)
	x.result.DecisionsLongest = max(x.result.DecisionsLongest, len(result.Decisions))
	x.result.ChoicesReached = max(x.result.ChoicesReached, Choices(list))
	finding, _ := judge(x.engine, result, false)
	if x.options.OnExecution != nil {
		x.options.OnExecution(trimZeros(slices.Clone(list)), finding)
	}
	if !finding.OK() {
		x.result.Failures++
		if !x.result.Found {
			x.result.Found, x.result.FoundAt, x.result.Finding = true, x.result.Executions, finding
			x.result.Counterexample = trimZeros(slices.Clone(list))
		}
	}
	return true
}

// ExploreScenario returns the small scenario `leasesim explore` enumerates
// for the engine: its Explore knobs (two processes, no respawn), crash
// points at every step (no other fault), so the default execution is each
// process running its operations in turn.
func (e *Engine) ExploreScenario() Spec {
	spec := Spec{Engine: e.Name, Seed: 1, Scheduler: sim.SchedulerRandom, PCTDepth: 3, PCTSteps: pctStepsDefault,
		StepsMax: stepsMaxDefault, Params: Params{}}
	spec.Faults.Set("crash", 0.01)
	maps.Copy(spec.Params, e.Explore)
	return spec
}
