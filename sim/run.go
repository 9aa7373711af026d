package sim

import (
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
)

// Config describes one run.
type Config struct {
	// Seed seeds the decisions (unless Replay is set).
	Seed uint64
	// Replay, when not nil, is a recorded decision list to replay instead
	// of drawing from Seed.
	Replay []uint32
	// ReplayThenDraw, with Replay, draws from Seed once the replayed list
	// is used up instead of answering 0: a recorded run's prefix with a
	// fresh tail (how reseeding perturbs a drifted seed's list). The run
	// records every answer, so its recorded list replays it alone.
	ReplayThenDraw bool
	// ReplayTags and ReplayKeys give each Replay answer's stream (Result's
	// DecisionTags and StreamKeys). Without them Replay is a single-stream
	// list: every site draws from it in order (a list recorded before the
	// streams were keyed, or an exhaustive enumeration).
	ReplayTags []uint16
	ReplayKeys []string
	// ReplayShortSteps answers a replayed step-clock decision modulo its
	// drawn range, as drawing does, instead of honouring a long step
	// (StepTimeLong): exhaustive enumeration tries each decision's
	// alternatives, and a clock decision's are the drawn ones; a long step
	// is the shrinker's, and enumerating 2^20 of them per step is a hang.
	ReplayShortSteps bool
	// StepsMax is the step budget; running out of it while processes are
	// still alive is a Liveness finding. Zero means stepsMaxDefault.
	StepsMax int
	// Scheduler selects the scheduler; the zero value draws it per run.
	Scheduler SchedulerKind
	// PCTDepth is PCT's bug depth d; zero means pctDepthDefault.
	PCTDepth int
	// PCTSteps is PCT's expected run length k, over which it spreads its
	// change points; zero means StepsMax. A k near the real run length
	// wastes fewer change points past the end.
	PCTSteps int
	// Faults is the fault plan; nil draws a swarm plan from the decisions.
	Faults *FaultPlan
	// Filesystem makes each volume's filesystem; nil means SimfsFilesystem.
	Filesystem FilesystemFactory
	// Setup builds the world: volumes, hosts, processes, invariants, hooks.
	// It runs once per run (twice under RunTwice), so any workload state it
	// closes over must be reset by it, or the runs diverge.
	Setup func(w *World) error
	// Trace, when not nil, receives a line per step and per fault.
	Trace io.Writer
	// HashStream keeps the per-step hash stream in the result.
	HashStream bool
	// StateHashPeriod is how often, in steps, the full state hashes of the
	// volumes and hosts are folded into the stream (they cost time linear in
	// the state). Zero means stateHashPeriodDefault; RunTwice uses
	// stateHashPeriodCheck to find a divergence sooner.
	StateHashPeriod int
	// Coroutines, when not nil, lends the run its process coroutines (see
	// Coroutines); nil gives the run its own, stopped when it ends.
	Coroutines *Coroutines
	// Coverage records what guided search scores a run by (coverage.go):
	// each operation's decision count and the volumes' shape when it
	// returned, each probe's first firing, the shape at the end, and the
	// call trace's points and edges (Result.Calls).
	Coverage bool
}

const (
	stepsMaxDefault        = 100_000
	pctDepthDefault        = 3
	stateHashPeriodDefault = 4096
	stateHashPeriodCheck   = 64
	// stepTimeMax bounds the simulated time (in µs) a drawn step takes,
	// beyond 1 µs.
	stepTimeMax = 50
	// StepTimeLong bounds the time (in µs) a replayed step's clock decision
	// may ask for (Decisions.IntnOrLong): drawing stays below stepTimeMax,
	// the shrinker puts many steps' time into one.
	StepTimeLong = 1 << 20
	// churnMax bounds how many PIDs one churn fault burns.
	churnMax = 4096
	// clockStepSecondsMax bounds one wall-clock step.
	clockStepSecondsMax = 3600
)

// Outcome classifies a run.
type Outcome int

const (
	// OutcomeOK: every process finished, no invariant failed.
	OutcomeOK Outcome = iota + 1
	// OutcomeViolation: an invariant failed or a process panicked.
	OutcomeViolation
	// OutcomeLiveness: the step budget ran out, or a liveness check failed.
	OutcomeLiveness
	// OutcomeNondeterminism: two runs of one input diverged.
	OutcomeNondeterminism
)

func (o Outcome) String() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeViolation:
		return "violation"
	case OutcomeLiveness:
		return "liveness"
	case OutcomeNondeterminism:
		return "nondeterminism"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Operation is one workload operation in the history.
type Operation struct {
	// Lane is the client id: one per process incarnation, so each lane is
	// sequential.
	Lane int
	Proc string
	Op   string
	// Input and Output are workload values; Output is nil when Unknown.
	Input  any
	Output any
	// Call and Return are simulated ns. A call cut short by a crash (or by
	// the end of the run) has Unknown set and Return at the cut.
	Call, Return int64
	Unknown      bool
	// CallOrder and ReturnOrder rank the call and the return among every
	// call, return and event of the run, in the order they happened: one
	// step's events share a simulated time, so only these order them.
	CallOrder, ReturnOrder int
	// Decision is the number of decisions drawn when the operation
	// returned (or was cut short); Shapes are the volumes' directory
	// shapes then. Both are set only under Config.Coverage (coverage.go).
	Decision int
	Shapes   []uint64
}

// Result is the outcome of a run.
type Result struct {
	Seed uint64
	// Knobs are the key=value settings the run drew or was given, in
	// print order.
	Knobs []string
	// Steps is the number of steps run.
	Steps   int
	Outcome Outcome
	Message string
	// Step is the step at which a Violation, Liveness or Nondeterminism
	// finding was made (-1 when OK).
	Step      int
	History   []Operation
	Decisions []uint32
	// DecisionTags[i] is Decisions[i]'s stream, an index into StreamKeys
	// (both nil for a single-stream replay); replay them with Config's
	// ReplayTags and ReplayKeys.
	DecisionTags []uint16
	StreamKeys   []string
	Probes       map[string]int
	// Hash is the last value of the per-step hash stream.
	Hash       uint64
	HashStream []uint64
	// Processes is the number of processes spawned.
	Processes int
	// PCTBound is PCT's guaranteed probability of finding a bug of the
	// configured depth (0 for the random scheduler).
	PCTBound float64
	// InlineSteps counts the steps a process ran on its own coroutine,
	// without switching to the main loop (step.go): a speed figure only,
	// always 0 in a traced run, and never part of what a run is.
	InlineSteps int
	// ProbeAt is each probe's decision count at its first firing, and
	// Shapes the volumes' directory shapes at the end: only under
	// Config.Coverage.
	ProbeAt map[string]int
	Shapes  []uint64
	// Calls is the run's call coverage (coverage.go): each distinct point
	// of a process's environment calls and each edge between a process's
	// consecutive points, with hit counts: only under Config.Coverage.
	Calls []CallHit
}

// ProbeLines returns the probes as sorted "name=count" lines.
func (r Result) ProbeLines() []string {
	lines := make([]string, 0, len(r.Probes))
	for name, count := range r.Probes {
		lines = append(lines, fmt.Sprintf("%s=%d", name, count))
	}
	slices.Sort(lines)
	return lines
}

// Run executes one run to completion, a finding, or the step budget. A
// panic of the harness's own code during the run (a workload's hook or
// invariant, an engine call a hook makes, the simulator itself) is a
// finding too, a violation whose message starts "the harness panicked":
// a campaign of a million seeds keeps going and saves the seed, and its
// replay panics the same way.
func Run(cfg Config) (ran Result) {
	w, result := newWorld(cfg)
	defer w.shutdown()
	if cfg.Setup == nil {
		panic("sim: Config.Setup is nil")
	}
	defer func() {
		if value := recover(); value != nil {
			ran = w.finish(result, OutcomeViolation, w.harnessPanicked(value))
		}
	}()
	if err := cfg.Setup(w); err != nil {
		return w.finish(result, OutcomeViolation, fmt.Sprintf("setup: %v", err))
	}
	if cfg.HashStream {
		w.stream = make([]uint64, 0, 1024)
	}
	w.inline = cfg.Trace == nil
	outcome, message := w.runSteps()
	result.HashStream = w.stream
	return w.finish(result, outcome, message)
}

func newWorld(cfg Config) (*World, *Result) {
	if cfg.StepsMax == 0 {
		cfg.StepsMax = stepsMaxDefault
	}
	if cfg.PCTDepth == 0 {
		cfg.PCTDepth = pctDepthDefault
	}
	if cfg.PCTSteps == 0 {
		cfg.PCTSteps = cfg.StepsMax
	}
	if cfg.Filesystem == nil {
		cfg.Filesystem = SimfsFilesystem
	}
	if cfg.StateHashPeriod == 0 {
		cfg.StateHashPeriod = stateHashPeriodDefault
	}
	w := &World{config: cfg, probes: make(map[string]int, probesCapInitial), trace: cfg.Trace, coroutines: &coroutinePool{}}
	if cfg.Coverage {
		w.probeAt = map[string]int{}
		w.calls = newCallCoverage()
	}
	if cfg.Coroutines != nil {
		w.coroutines = &cfg.Coroutines.pool
	}
	if cfg.Replay != nil {
		w.decisions = ReplayDecisions(cfg.Replay)
		if cfg.ReplayThenDraw {
			w.decisions.drawAfterReplay(cfg.Seed)
		}
		if cfg.ReplayKeys != nil {
			d, err := ReplayKeyedDecisions(cfg.Replay, cfg.ReplayTags, cfg.ReplayKeys, cfg.Seed, cfg.ReplayThenDraw)
			if err != nil {
				panic(err)
			}
			w.decisions = d
		}
		w.decisions.log.shortSteps = cfg.ReplayShortSteps
	} else {
		w.decisions = newRunDecisions(cfg.Seed)
	}
	result := &Result{Seed: cfg.Seed, Step: -1}
	if cfg.Replay != nil {
		result.Knobs = append(result.Knobs, fmt.Sprintf("replay=%d", len(cfg.Replay)))
	}
	kind := cfg.Scheduler
	if kind == SchedulerDrawn {
		kind = SchedulerRandom + SchedulerKind(w.decisions.Stream(streamSched).Intn(2))
	}
	result.Knobs = append(result.Knobs, fmt.Sprintf("seed=%d", cfg.Seed), fmt.Sprintf("steps_max=%d", cfg.StepsMax),
		fmt.Sprintf("scheduler=%v", kind))
	switch kind {
	case SchedulerRandom:
		w.scheduler = &randomScheduler{decisions: w.decisions.Stream(streamSched)}
	case SchedulerSticky:
		w.scheduler = &stickyScheduler{decisions: w.decisions.Stream(streamSched)}
	case SchedulerPCT:
		w.scheduler = newPCTScheduler(w.decisions.Stream(streamSched), cfg.PCTDepth, cfg.PCTSteps)
		result.Knobs = append(result.Knobs, fmt.Sprintf("pct_depth=%d", cfg.PCTDepth), fmt.Sprintf("pct_steps=%d", cfg.PCTSteps))
	default:
		panic(fmt.Sprintf("sim: scheduler %v", kind))
	}
	if cfg.Faults != nil {
		w.plan = *cfg.Faults
	} else {
		w.plan = DrawFaultPlan(w.decisions.Stream("plan"))
	}
	result.Knobs = append(result.Knobs, strings.Fields(w.plan.String())...)
	if w.trace != nil {
		for _, knob := range result.Knobs {
			fmt.Fprintln(w.trace, knob)
		}
	}
	return w, result
}

// finish fills in the result. It is called once.
func (w *World) finish(result *Result, outcome Outcome, message string) Result {
	result.Outcome = outcome
	result.Message = message
	result.Steps = w.stepsRun
	if outcome != OutcomeOK {
		result.Step = w.step
	}
	w.closeHistory()
	result.History = w.history
	result.Decisions = w.decisions.Recorded()
	result.DecisionTags, result.StreamKeys = w.decisions.Tags(), w.decisions.Keys()
	result.Probes = w.probes
	w.finishCoverage(result)
	result.Hash = w.hash
	result.Processes = w.procsTotal
	result.InlineSteps = w.inlineSteps
	if pct, ok := w.scheduler.(*pctScheduler); ok {
		result.PCTBound = PCTBound(max(w.procsTotal, 1), w.config.PCTSteps, pct.depth)
	}
	w.Tracef("end outcome=%v message=%q", outcome, message)
	return *result
}

// harnessPanicPrefix starts the message of a run the harness panicked in.
const harnessPanicPrefix = "the harness panicked"

// harnessPanicked is the message of a harness panic: its value and the
// stack, without the goroutine numbers and argument words that differ
// between two runs of one seed.
func (w *World) harnessPanicked(value any) string {
	return fmt.Sprintf("%s at step %d: %v\n%s", harnessPanicPrefix, w.step, value, stableStack(debug.Stack()))
}

// closeHistory marks every still-open operation unknown at the end of the run.
func (w *World) closeHistory() {
	for _, p := range w.procs {
		for _, handle := range p.openOps {
			w.history[handle].Unknown = true
			w.history[handle].Return = w.now
			w.history[handle].ReturnOrder = w.nextOrder()
		}
		p.openOps = p.openOps[:0]
	}
}

// shutdown stops every live coroutine, so a finished run leaks nothing.
func (w *World) shutdown() {
	for _, p := range w.procs {
		p.status = procDead
		w.unwind(p)
		if p.group == nil || p.group.live[0] == p { // threads share one view
			p.host.volume.fs.CloseAll(p.view)
		}
	}
	w.coroutines.assertIdle()
	if w.config.Coroutines == nil {
		w.coroutines.close()
	}
	clear(w.procs)
	w.procs = w.procs[:0]
	for _, h := range w.hosts {
		h.procs = nil
	}
}

// choose returns the process to run: the scheduler's pick among the runnable
// ones, after jumping the clock to the earliest wake-up if every live
// process sleeps.
func (w *World) choose() *Proc {
	w.collectRunnable()
	if len(w.runnable) == 0 {
		earliest := int64(-1)
		for _, p := range w.procs {
			if !p.sleeping {
				panic(fmt.Sprintf("sim: process %s neither runnable nor sleeping", p.name))
			}
			if earliest < 0 || p.wakeAt < earliest {
				earliest = p.wakeAt
			}
		}
		if earliest <= w.now {
			panic(fmt.Sprintf("sim: earliest wake-up %d is not after now %d", earliest, w.now))
		}
		if w.tracing() {
			w.Tracef("clock-jump to=%d", earliest)
		}
		w.now = earliest
		w.collectRunnable()
	}
	return w.runnable[w.scheduler.pick(w.step, w.runnable)]
}

// tracing reports whether the run writes a trace. The hot paths that
// trace (a spawn, an exit, a fault) ask it first: Tracef's arguments are
// boxed, an allocation each, even when it writes nothing.
func (w *World) tracing() bool { return w.trace != nil }

func (w *World) collectRunnable() {
	w.runnable = w.runnable[:0]
	for _, p := range w.procs {
		if !p.sleeping || p.wakeAt <= w.now {
			w.runnable = append(w.runnable, p)
		}
	}
}

// resume runs p from its scheduling point to the next one.
func (w *World) resume(p *Proc) {
	p.sleeping = false
	p.result = 0
	ev := p.pending
	if p.co == nil {
		p.co = w.coroutines.take(p)
	}
	w.running = p
	p.co.next()
	w.running = nil
	if w.inlinePanic != nil {
		w.coroutines.release(p.co) // its body is gone: the panic unwound it
		p.co = nil
		panic(w.inlinePanic.String())
	}
	if w.trace != nil {
		result := resultName(p.result)
		if p.resultText != "" {
			result, p.resultText = p.resultText, ""
		}
		w.Tracef("proc=%s op=%v path=%s%s result=%s", p.name, ev.kind, ev.path, p.traceExtra, result)
		p.traceExtra = ""
	}
	if !p.ended {
		return
	}
	w.coroutines.release(p.co)
	p.co = nil
	if p.panicked != nil {
		w.failure = fmt.Sprintf("process %s panicked at step %d: %v\n%s", p.name, w.step, p.panicked, p.panicStack)
	}
	w.retire(p, ExitFinished)
	w.exited(p, ExitFinished)
}

// exited runs the workload's exit hooks.
func (w *World) exited(p *Proc, reason ExitReason) {
	for _, f := range w.onExit {
		f(p, reason)
	}
}

func resultName(code uint64) string {
	switch {
	case code == 0:
		return "ok"
	case code == 1:
		return "error"
	}
	return syscall.Errno(code).Error()
}

// probesCapInitial sizes a run's probe counts: a default run of the
// engines fires 34 to 49 distinct probes on average, and growing the map
// there rehashed it three or four times per run.
const probesCapInitial = 64

// checkInvariants runs the workload's invariants.
func (w *World) checkInvariants() (Outcome, string) {
	w.noKills = "an invariant"
	defer func() { w.noKills = "" }()
	for _, inv := range w.invariants {
		err := inv.check()
		if err == nil {
			continue
		}
		if _, ok := err.(*LivenessError); ok {
			return OutcomeLiveness, fmt.Sprintf("step %d: liveness %s: %v", w.step, inv.name, err)
		}
		return OutcomeViolation, fmt.Sprintf("step %d: invariant %s: %v", w.step, inv.name, err)
	}
	return 0, ""
}

// hashStep folds the step into the hash stream.
func (w *World) hashStep(p *Proc, ev event) {
	// One multiply per field and one full mix per step: the fields are
	// folded into a running hash that mix64 finishes, as hashPath does.
	h := (w.hash ^ uint64(w.step)) * hashMultiplier
	h = (h ^ uint64(p.id)<<8 ^ uint64(ev.kind)) * hashMultiplier
	h = (h ^ hashPath(ev.path)) * hashMultiplier
	h = mix64(h ^ p.result ^ uint64(w.now)<<16 ^ uint64(p.status)<<60)
	if w.step == w.stateHashDue { // every StateHashPeriod steps, without a division
		w.stateHashDue += w.config.StateHashPeriod
		for _, v := range w.volumes {
			h = mix64(h ^ v.fs.Hash())
		}
		for _, host := range w.hosts {
			h = mix64(h ^ host.table.Hash())
		}
	}
	w.hash = h
}

// hashPath hashes a step's path eight bytes at a time, one multiply per
// word and one mix64 at the end: every step hashes one, and FNV's
// byte-at-a-time loop cost more than the rest of the step hash.
func hashPath(s string) uint64 {
	h := (uint64(len(s)) ^ 0x9e3779b97f4a7c15) * hashMultiplier
	for ; len(s) >= 16; s = s[16:] { // two words a turn: the same folds, half the loop
		h = (h ^ littleEndian64(s)) * hashMultiplier
		h = (h ^ littleEndian64(s[8:])) * hashMultiplier
	}
	if len(s) >= 8 {
		h = (h ^ littleEndian64(s)) * hashMultiplier
		s = s[8:]
	}
	// The last 0-7 bytes, little-endian (byte i at bits 8i), as four, two
	// and one byte loads rather than a loop of up to seven.
	var tail uint64
	shift := 0
	if len(s)&4 != 0 {
		tail = uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
		s, shift = s[4:], 32
	}
	if len(s)&2 != 0 {
		tail |= (uint64(s[0]) | uint64(s[1])<<8) << shift
		s, shift = s[2:], shift+16
	}
	if len(s)&1 != 0 {
		tail |= uint64(s[0]) << shift
	}
	return mix64(h ^ tail)
}

// hashMultiplier is an odd 64-bit constant (splitmix64's first): multiplying
// by it is a bijection that spreads low bits upward; mix64 finishes.
const hashMultiplier = 0xbf58476d1ce4e5b9

// littleEndian64 reads the first eight bytes of s as a little-endian word.
func littleEndian64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// RunTwice runs cfg twice and compares the per-step hash streams and the
// decision lists. On a mismatch it returns the first run's result with
// Outcome Nondeterminism and Step at the first diverging step; otherwise it
// returns the first run's result (with its hash stream).
func RunTwice(cfg Config) Result {
	cfg.HashStream = true
	if cfg.StateHashPeriod == 0 {
		cfg.StateHashPeriod = stateHashPeriodCheck
	}
	first := Run(cfg)
	cfg.Trace = nil
	second := Run(cfg)
	step := firstDivergence(first.HashStream, second.HashStream)
	if step < 0 && !slices.Equal(first.Decisions, second.Decisions) {
		step = min(len(first.HashStream), len(second.HashStream))
	}
	if step < 0 && (first.Outcome != second.Outcome || !sameMessage(first.Message, second.Message)) {
		step = len(first.HashStream)
	}
	if step >= 0 {
		first.Outcome = OutcomeNondeterminism
		first.Step = step
		first.Message = fmt.Sprintf("runs of seed %d diverge at step %d (%d and %d steps)",
			cfg.Seed, step, len(first.HashStream), len(second.HashStream))
	}
	return first
}

// sameMessage compares two runs' messages. A harness panic's stack is its
// own: raised on the main loop's side (a traced run) or on the coroutine
// of a process that ran the step inline (an untraced one), so two runs of
// one seed agree on its first line only.
func sameMessage(a, b string) bool {
	if strings.HasPrefix(a, harnessPanicPrefix) && strings.HasPrefix(b, harnessPanicPrefix) {
		a, _, _ = strings.Cut(a, "\n")
		b, _, _ = strings.Cut(b, "\n")
	}
	return a == b
}

// firstDivergence returns the first index at which a and b differ (a length
// difference counts at the shorter length), or -1.
func firstDivergence(a, b []uint64) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// Summary renders the result as key=value lines: the knobs, the outcome,
// the counts, then the probes in sorted order.
func (r Result) Summary() string {
	var b strings.Builder
	for _, knob := range r.Knobs {
		b.WriteString(knob)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "outcome=%v\nsteps=%d\nprocesses=%d\noperations=%d\ndecisions=%d\nhash=%016x\n",
		r.Outcome, r.Steps, r.Processes, len(r.History), len(r.Decisions), r.Hash)
	if r.PCTBound > 0 {
		fmt.Fprintf(&b, "pct_bound=%g\n", r.PCTBound)
	}
	if r.Outcome != OutcomeOK {
		fmt.Fprintf(&b, "step=%d\nmessage=%q\n", r.Step, r.Message)
	}
	for _, line := range r.ProbeLines() {
		b.WriteString("probe.")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
