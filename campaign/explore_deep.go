package campaign

import (
	"context"
	"slices"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// Deep exploration: every execution of a scenario (three
// processes and more) within a bound of choices (non-zero decisions:
// scheduling picks other than the first runnable process, crashes, power
// losses) and a fault budget, depth first, with a visited-state cache and
// sleep-set partial-order reduction over independent steps.
//
// An execution is a decision list, run from the start (a run cannot be
// snapshotted: processes are coroutines); its children deviate from it in
// one more decision after its last non-zero one, and answer 0 past it. The
// simulator's step observer (sim.World.ObserveSteps) says, for each step,
// the process chosen, the runnable set it was chosen from, its operation,
// the decisions it consumed and the world's state key, so the explorer
// knows each step's branch points without probing: the pick (the step's
// first decision when two or more processes were runnable: value v runs
// Runnable[v]) and its fault draws (after the pick and the clock draw: a
// power loss when enabled, then the chosen process's crash).
//
// Children are explored in reverse order of their positions (the latest
// step first; within a step, its faults, then its picks in value order), so
// when a pick of step s is explored, the subtrees of every pick before it
// at s are complete: that is what makes sleep sets sound.
//
// Sleep sets (Godefroid 1996). At a step s where processes A (the default)
// and then B were explored, the execution that picks C starts with A and B
// asleep: A's step, B's step (as each ran at s, their footprints) stay asleep
// while every step executed after them is independent of them, and a pick of
// an asleep process is pruned (its subtree is a reordering of one already
// explored). When the default pick itself is asleep, the rest of the
// execution is such a reordering, and its later branch points are pruned.
// Independence (Independent) is conservative: two steps of different
// processes, both filesystem calls, on unrelated paths (or both reads),
// neither of which moved the history, the workload's ledgers or the process
// set, and neither a fault.
//
// The cache. At every step's end the world's state key (sim/statekey.go:
// the filesystems, the process tables, the clock, each process's pending
// operation and observation chain, the history, the workload's ledgers, the
// step and decision counts) is looked up; if an earlier execution reached it
// with at least the same choice and fault budget left and a sleep set that
// is a subset of this one's, everything this execution could branch into
// after that step was explored from there already, so its later branch
// points are pruned. A world whose workload feeds no key is never cached.

// DeepOptions bounds a deep exploration.
type DeepOptions struct {
	// Catalog holds the scenario's engine; Spec is the scenario (its Seed,
	// Decisions and Scheduler are ignored). Its fault plan should enable
	// only the crash (and the power loss) fault: other faults' draws are
	// not branch points and stay 0.
	Catalog *Catalog
	Spec    Spec
	// ChoicesMax bounds the non-zero decisions of an execution; FaultsMax
	// the crashes and power losses among them.
	ChoicesMax int
	FaultsMax  int
	// DecisionsMax bounds the positions at which the exploration branches.
	DecisionsMax int
	// RunsMax bounds the executions (0: none); Duration the wall time.
	RunsMax  int
	Duration time.Duration
	// StopAtFirst ends the exploration at the first failure.
	StopAtFirst bool
	// Cache and POR turn on the visited-state cache and the sleep sets.
	Cache bool
	POR   bool
	// QuietCrashes skips the crash of a process at a step that directly
	// follows a quiet step of the same process (a read, a clock read, an
	// identity or an inspection that recorded nothing: quietStep): killed
	// there or one step earlier, before the quiet step, the world is the
	// same, one step later (the POR's caveat: times move by a microsecond).
	QuietCrashes bool
	// Sticky runs the scenario under sim.SchedulerSticky: the default
	// schedule keeps the running process while it is runnable, so a
	// choice is a preemption and lets the process it picks run on; without
	// it the default is the first runnable process at every step.
	Sticky bool
	// Independent decides whether two steps commute; nil means
	// Independent. Tests plant a wrong rule through it.
	Independent func(a, b Footprint) bool
	// Progress, when not nil, gets the running result every
	// ProgressEvery (default 10 s).
	Progress      func(DeepResult)
	ProgressEvery time.Duration
	// OnExecution, when not nil, sees each execution's list (trailing
	// zeros cut) and finding.
	OnExecution func(list []uint32, finding Finding)
}

// DeepResult reports a deep exploration.
type DeepResult struct {
	// Executions counts the executions run (started); Steps their steps.
	Executions int `json:"executions"`
	Steps      int `json:"steps"`
	// States counts the distinct state keys seen (0 without the cache, or
	// when the workload feeds no key); Keyed says it does.
	States int  `json:"states"`
	Keyed  bool `json:"keyed"`
	// Branches counts the branch points within the bounds at the steps
	// each execution reached.
	Branches int `json:"branches"`
	// HaltedCache counts the executions ended early at a state an earlier
	// one had explored from (the rest of the run and every branch point
	// after it pruned by the cache); HaltedPOR those ended early because
	// the default step was asleep (a reordering of an explored execution);
	// SkippedPOR the picks of an asleep process never run.
	HaltedCache int `json:"halted_cache"`
	HaltedPOR   int `json:"halted_por"`
	SkippedPOR  int `json:"skipped_por"`
	// SkippedQuiet counts the crash points QuietCrashes did not branch at.
	SkippedQuiet int `json:"skipped_quiet_crashes"`
	// Mismatches counts children whose run did not answer their last
	// decision as asked (a branch point guessed wrong); they are not run
	// further.
	Mismatches int `json:"mismatches"`
	// ChoicesReached and FaultsReached are the largest counts explored;
	// StepsMax the longest execution.
	ChoicesReached int `json:"choices_reached"`
	FaultsReached  int `json:"faults_reached"`
	StepsMax       int `json:"steps_max"`
	// Complete is true when every execution within the bounds was run or
	// pruned; Stopped says why not ("runs", "duration", "first failure",
	// "interrupted").
	Complete bool    `json:"complete"`
	Stopped  string  `json:"stopped,omitempty"`
	Seconds  float64 `json:"seconds"`
	// Failures counts failing executions; the first is kept.
	Failures       int      `json:"failures"`
	Found          bool     `json:"found"`
	FoundAt        int      `json:"found_at,omitempty"`
	Finding        Finding  `json:"finding"`
	Counterexample []uint32 `json:"counterexample,omitempty"`
}

// PrunedShare is the share of the executions (run or skipped) that the
// cache and the sleep sets cut: halted early, or (POR) never run.
func (r DeepResult) PrunedShare() (cache, por float64) {
	total := r.Executions + r.SkippedPOR
	if total == 0 {
		return 0, 0
	}
	return float64(r.HaltedCache) / float64(total), float64(r.HaltedPOR+r.SkippedPOR) / float64(total)
}

// ExploreDeep explores the scenario's executions within the bounds.
func ExploreDeep(ctx context.Context, o DeepOptions) (DeepResult, error) {
	e, ctx, cancel, err := o.Catalog.exploreEngine(ctx, o.Spec.Engine, o.Duration)
	defer cancel()
	if err != nil {
		return DeepResult{}, err
	}
	if o.Independent == nil {
		o.Independent = Independent
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = 10 * time.Second
	}
	x := &deepExplorer{engine: e, o: o, ctx: ctx, cache: map[uint64][]cacheEntry{}, states: map[uint64]struct{}{},
		started: time.Now()}
	x.lastProgress = x.started
	x.node(deepNode{d: -1})
	x.result.Complete = x.result.Stopped == ""
	x.result.States = len(x.states)
	x.result.Seconds = time.Since(x.started).Seconds()
	return x.result, nil
}

type deepExplorer struct {
	engine       *Engine
	o            DeepOptions
	ctx          context.Context
	result       DeepResult
	cache        map[uint64][]cacheEntry
	states       map[uint64]struct{}
	started      time.Time
	lastProgress time.Time
}

// cacheEntry is a visited state: the budgets left and the sleep set (a
// bit per process ID) it was explored with.
type cacheEntry struct {
	choicesLeft, faultsLeft int
	sleep                   uint64
}

// deepNode is an execution to run: its list ends with its deviation, at
// index d (-1 for the default execution).
type deepNode struct {
	list    []uint32
	d       int
	choices int
	faults  int
	// fault says the deviation is a fault (its sleep set is empty after
	// it); sleep is the sleep set before the deviation's step.
	fault bool
	sleep []Footprint
}

// deepStep is one observed step.
type deepStep struct {
	info      sim.StepInfo
	runnable  []int
	footprint Footprint
	// pick and faults are the step's branch points (decision indexes; pick
	// -1 when only one process was runnable); crash is the crash draw's
	// index among them (-1: none), and quietCrash says the step directly
	// follows a quiet step of the same process (QuietCrashes).
	pick       int
	faults     []int
	crash      int
	quietCrash bool
	// prevCrash is the crash draw of the step before (the same process's,
	// when quietCrash).
	prevCrash int
}

func (x *deepExplorer) stop() bool {
	switch {
	case x.result.Stopped != "":
	case x.o.StopAtFirst && x.result.Found:
		x.result.Stopped = "first failure"
	case x.o.RunsMax > 0 && x.result.Executions >= x.o.RunsMax:
		x.result.Stopped = "runs"
	case x.ctx.Err() == context.DeadlineExceeded:
		x.result.Stopped = "duration"
	case x.ctx.Err() != nil:
		x.result.Stopped = "interrupted"
	}
	return x.result.Stopped != ""
}

// node runs n and explores its children; it returns the footprint of n's
// deviation step (for its later siblings' sleep sets) and whether it ran.
func (x *deepExplorer) node(n deepNode) (Footprint, bool) {
	if x.stop() {
		return Footprint{}, false
	}
	scan, ok := x.run(n)
	if !ok || scan.sd >= len(scan.steps) {
		return Footprint{}, ok
	}
	deviation := scan.steps[scan.sd].footprint
	if n.fault {
		deviation.Visible = true
	}
	x.children(n, scan.steps, scan.sd, len(scan.steps)-1, scan.sleeps)
	return deviation, true
}

// deepScan follows one execution as it runs (the step observer): it
// records each step, computes the sleep set before each step from the
// deviation on, looks each state up in the cache (recording the new ones),
// and halts the run where the rest is covered.
type deepScan struct {
	x        *deepExplorer
	n        deepNode
	world    *sim.World
	steps    []deepStep
	sleeps   [][]Footprint
	sleep    []Footprint
	previous sim.StepInfo
	// sd is the deviation's step (len(steps) until it is reached).
	sd        int
	reached   bool
	powerloss bool
	crash     bool
	sticky    bool
	halted    string
}

func (c *deepScan) observe(info sim.StepInfo) bool {
	x, n := c.x, c.n
	last := -1
	if c.sticky && len(c.steps) > 0 {
		last = c.previous.Proc
	}
	step := observedStep(info, c.previous, last, c.powerloss, c.crash)
	if s := len(c.steps); s > 0 && c.steps[s-1].info.Proc == step.info.Proc {
		step.quietCrash = quietStep(c.steps[s-1]) && c.steps[s-1].crash >= 0
		step.prevCrash = c.steps[s-1].crash
	}
	c.previous = step.info
	c.steps = append(c.steps, step)
	c.sleeps = append(c.sleeps, nil)
	s := len(c.steps) - 1
	if info.Decisions <= n.d {
		return false
	}
	if !c.reached {
		c.reached, c.sd = true, s
		if x.o.POR && !n.fault {
			c.sleep = n.sleep
		}
	}
	c.sleeps[s] = c.sleep
	if x.o.POR && s > c.sd && asleep(c.sleep, info.Proc) {
		c.halted = "por"
		return true
	}
	if x.o.POR {
		c.sleep = x.filterSleep(c.sleep, step.footprint)
		if s == c.sd && n.fault {
			c.sleep = nil
		}
	}
	if !x.o.Cache {
		return false
	}
	key := c.world.StateKey()
	if key == 0 {
		return false
	}
	x.result.Keyed = true
	x.states[key] = struct{}{}
	entry := cacheEntry{choicesLeft: x.o.ChoicesMax - n.choices, faultsLeft: x.o.FaultsMax - n.faults, sleep: sleepMask(c.sleep)}
	if x.covered(key, entry) {
		c.halted = "cache"
		return true
	}
	x.cache[key] = append(x.cache[key], entry)
	return false
}

// covered reports whether a cache entry of key dominates entry.
func (x *deepExplorer) covered(key uint64, entry cacheEntry) bool {
	for _, e := range x.cache[key] {
		if e.choicesLeft >= entry.choicesLeft && e.faultsLeft >= entry.faultsLeft && e.sleep&^entry.sleep == 0 {
			return true
		}
	}
	return false
}

// branchable counts a step's pick alternatives and faults within bounds.
func (x *deepExplorer) branchable(n deepNode, step deepStep) (picks, faults int) {
	if n.choices >= x.o.ChoicesMax {
		return 0, 0
	}
	if step.pick > n.d && step.pick < x.o.DecisionsMax {
		picks = len(step.runnable) - 1
	}
	if n.faults < x.o.FaultsMax {
		for _, f := range step.faults {
			if x.faultBranch(n, step, f) {
				faults++
			}
		}
	}
	return picks, faults
}

// faultBranch reports whether the fault draw f of step is a branch point
// of n: after n's deviation, within the bound, and not a quiet crash.
func (x *deepExplorer) faultBranch(n deepNode, step deepStep, f int) bool {
	if f <= n.d || f >= x.o.DecisionsMax {
		return false
	}
	// The crash one step earlier (the same process's, before its quiet
	// step) is then a branch point of n too, or (itself quiet) the one
	// before it, and so on: the earliest of the run is branched at.
	return !(x.o.QuietCrashes && step.quietCrash && f == step.crash && step.prevCrash > n.d && step.prevCrash < x.o.DecisionsMax)
}

// children explores n's children at steps cut down to sd.
func (x *deepExplorer) children(n deepNode, steps []deepStep, sd, cut int, sleeps [][]Footprint) {
	for s := cut; s >= sd; s-- {
		step := steps[s]
		picks, faults := x.branchable(n, step)
		x.result.Branches += picks + faults
		if x.o.QuietCrashes && step.quietCrash && step.crash > n.d && n.choices < x.o.ChoicesMax && n.faults < x.o.FaultsMax &&
			!x.faultBranch(n, step, step.crash) {
			x.result.SkippedQuiet++
		}
		if faults > 0 {
			for i := len(step.faults) - 1; i >= 0; i-- {
				if f := step.faults[i]; x.faultBranch(n, step, f) {
					x.node(deepNode{list: x.childList(n, steps, f, 1), d: f, choices: n.choices + 1, faults: n.faults + 1, fault: true})
				}
			}
		}
		if picks == 0 {
			continue
		}
		done := slices.Clone(sleeps[s])
		done = append(done, step.footprint)
		for v := 1; v < len(step.runnable); v++ {
			if x.stop() {
				return
			}
			proc := step.runnable[v]
			if x.o.POR && asleep(sleeps[s], proc) {
				x.result.SkippedPOR++
				continue
			}
			footprint, ran := x.node(deepNode{list: x.childList(n, steps, step.pick, uint32(v)), d: step.pick,
				choices: n.choices + 1, faults: n.faults, sleep: slices.Clone(done)})
			if ran && x.o.POR {
				done = append(done, footprint)
			}
		}
	}
}

// childList is n's recorded list up to index at (whose answers were all 0
// after n's deviation), then value.
func (x *deepExplorer) childList(n deepNode, steps []deepStep, at int, value uint32) []uint32 {
	list := make([]uint32, at+1)
	copy(list, n.list)
	list[at] = value
	return list
}

// filterSleep keeps the asleep steps independent of the executed one.
func (x *deepExplorer) filterSleep(sleep []Footprint, executed Footprint) []Footprint {
	var kept []Footprint
	for _, u := range sleep {
		if u.Proc != executed.Proc && x.o.Independent(u, executed) {
			kept = append(kept, u)
		}
	}
	return kept
}

func asleep(sleep []Footprint, proc int) bool {
	for _, u := range sleep {
		if u.Proc == proc {
			return true
		}
	}
	return false
}

func sleepMask(sleep []Footprint) uint64 {
	var mask uint64
	for _, u := range sleep {
		mask |= 1 << (uint(u.Proc) % 64)
	}
	return mask
}

// run runs n's list under a scan, judges it unless the scan halted it
// (its verdict is then an explored execution's), and returns the scan.
func (x *deepExplorer) run(n deepNode) (*deepScan, bool) {
	spec := x.o.ExecutionSpec(n.list)
	cfg := spec.Config(x.engine, nil)
	inner := cfg.Setup
	var scan *deepScan
	cfg.Setup = func(w *sim.World) error {
		scan = &deepScan{x: x, n: n, world: w, powerloss: spec.Faults.Get("powerloss") > 0, crash: spec.Faults.Get("crash") > 0,
			sticky: x.o.Sticky}
		w.ObserveSteps(scan.observe)
		// The prefix before the deviation is replayed: its steps need no
		// workload key (the deviation step's Ledger flag then reads as
		// changed, which only makes it more dependent).
		w.WorkloadKeyFrom(n.d)
		return inner(w)
	}
	result := sim.Run(cfg)
	if m := len(n.list); m > 0 && (len(result.Decisions) < m || result.Decisions[m-1] != n.list[m-1]) {
		x.result.Mismatches++
		return nil, false
	}
	x.result.Executions++
	x.result.Steps += result.Steps
	x.result.StepsMax = max(x.result.StepsMax, result.Steps)
	x.result.ChoicesReached = max(x.result.ChoicesReached, n.choices)
	x.result.FaultsReached = max(x.result.FaultsReached, n.faults)
	if !scan.reached {
		scan.sd = len(scan.steps)
	}
	switch scan.halted {
	case "cache":
		x.result.HaltedCache++
	case "por":
		x.result.HaltedPOR++
	default:
		x.judge(n, result)
	}
	x.progress()
	return scan, true
}

// ExecutionSpec is the spec that runs one execution of the exploration:
// the scenario with the list as its decisions (answered 0 past its end),
// under the exploration's scheduler. Replaying a counterexample is running
// ExecutionSpec(Counterexample).
func (o DeepOptions) ExecutionSpec(list []uint32) Spec {
	spec := o.Spec.clone()
	spec.Seed, spec.Scheduler, spec.Decisions = 1, sim.SchedulerRandom, list
	if o.Sticky {
		spec.Scheduler = sim.SchedulerSticky
	}
	if spec.Decisions == nil {
		spec.Decisions = []uint32{}
	}
	spec.Tags, spec.Keys, spec.ThenDraw = nil, nil, false
	return spec
}

// judge judges a run that was not halted.
func (x *deepExplorer) judge(n deepNode, result sim.Result) {
	finding, _ := judge(x.engine, result, false)
	if x.o.OnExecution != nil {
		x.o.OnExecution(trimZeros(slices.Clone(n.list)), finding)
	}
	if !finding.OK() {
		x.result.Failures++
		if !x.result.Found {
			x.result.Found, x.result.FoundAt, x.result.Finding = true, x.result.Executions, finding
			x.result.Counterexample = trimZeros(slices.Clone(n.list))
		}
	}
}

// stickyOrder is runnable with last moved first (a copy).
func stickyOrder(runnable []int, last int) []int {
	order := make([]int, 0, len(runnable))
	if slices.Contains(runnable, last) {
		order = append(order, last)
	}
	for _, id := range runnable {
		if id != last {
			order = append(order, id)
		}
	}
	return order
}

func (x *deepExplorer) progress() {
	if x.o.Progress == nil || time.Since(x.lastProgress) < x.o.ProgressEvery {
		return
	}
	x.lastProgress = time.Now()
	snapshot := x.result
	snapshot.States = len(x.states)
	snapshot.Seconds = time.Since(x.started).Seconds()
	x.o.Progress(snapshot)
}

// observedStep turns an observed step into its branch points and
// footprint. A step's decisions are: the pick (when two or more processes
// were runnable), the clock draw, the power-loss draw (when enabled), then
// the chosen process's crash draw (when enabled and it was still alive),
// then whatever its code draws. Under the sticky scheduler the process
// that ran last (last, -1 for none) is answer 0 when runnable: runnable is
// put in the scheduler's order, so answer v runs runnable[v].
func observedStep(info, previous sim.StepInfo, last int, powerloss, crash bool) deepStep {
	step := deepStep{info: info, runnable: stickyOrder(info.Runnable, last), pick: -1, crash: -1}
	step.info.Runnable = step.runnable
	step.info.Exits = slices.Clone(info.Exits)
	next := info.Start
	if len(info.Runnable) > 1 {
		step.pick = next
		next++
	}
	next++ // the clock draw
	killed := false
	for _, e := range info.Exits {
		killed = killed || e.Reason == sim.ExitPowerLoss
	}
	if powerloss && next < info.Decisions {
		step.faults = append(step.faults, next)
		next++
	}
	if crash && !killed && next < info.Decisions {
		step.faults = append(step.faults, next)
		step.crash = next
	}
	step.footprint = footprintOf(step.info, previous)
	return step
}

// quietKinds are the operations that change nothing another process, the
// history or a ledger can see: reads, clock reads, identities, inspections.
var quietKinds = map[string]bool{"lstat": true, "stat": true, "readlink": true, "readdir": true, "fstatat": true, "read": true,
	"fstat": true, "readdirent": true, "now": true, "monotonic": true, "current": true, "inspect": true}

// quietStep reports whether a step was quiet: a quiet operation that
// recorded nothing into the history or the ledgers and ended no process.
// Killing its process before it or just after it leaves the same world.
func quietStep(step deepStep) bool {
	f := step.footprint
	return quietKinds[step.info.Kind] && !f.History && !f.Ledger && len(step.info.Exits) == 0
}
