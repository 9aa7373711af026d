package campaign

import (
	"fmt"
	"io"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// Shrinking works on a run's input, never its output: the workload knobs
// (processes, operations), the fault plan, and the recorded decision list.
// A candidate is accepted iff its run finds the same failure (same outcome,
// same Class). Every accepted candidate's decision list is replaced by what
// its run actually consumed, with trailing zeros cut (answers past the end
// of a replayed list are 0 anyway), so lists only get shorter or simpler.
//
// Passes (in this order, repeated until a round makes no progress or the
// run budget is spent; the order is fixed, so shrinking is reproducible):
//
//  1. step budget: a violation, or a failed liveness check, needs no more
//     steps than it took (only while shrinking, to make candidates cheap;
//     the result keeps the original);
//  2. faults: turn each enabled fault off;
//  3. knobs: lower each workload knob to its minimum, half-way, or by one;
//     then, for each smaller knob or fault turned off that did not fit the
//     old list, and for the PCT scheduler in place of the random one, search
//     a few fresh seeds of that input (passReseed);
//  4. schedule: re-encode a random or PCT schedule as the sticky
//     scheduler's preemptions, the same run (passSticky), once the rounds
//     in the found scheduler stall or half the run budget or time is spent;
//  5. decisions: keep a prefix (binary search); keep a prefix of each
//     stream's choices (passStreamTails); zero (then clamp) every
//     value above a threshold, for thresholds from 32 down; move the time
//     that clock decisions buy onto fewer of them (passConcentrate); zero
//     sets of choices (delta debugging over the non-zero decisions,
//     passChoices); then for chunk sizes halving from half the list
//     to one, delete chunks that hold a choice; then halve single values.
//
// The size that matters to a reader is the number of non-zero decisions
// ("choices"): each is one place where the run deviates from the boring
// default (the first runnable process runs, no fault fires, the clock moves
// the least). Zero decisions inside the list only keep later choices
// aligned.

// ShrinkResult is the outcome of a shrink.
type ShrinkResult struct {
	Spec    Spec
	Finding Finding
	Result  sim.Result
	// Runs is the number of runs spent.
	Runs int
	// DecisionsBefore/After are list lengths; ChoicesBefore/After count the
	// non-zero decisions.
	DecisionsBefore, DecisionsAfter int
	ChoicesBefore, ChoicesAfter     int
}

// ShrinkRunsDefault is the default run budget of one shrink.
const ShrinkRunsDefault = 10_000

// ShrinkOptions bounds a shrink.
type ShrinkOptions struct {
	// RunsMax is the run budget; zero means ShrinkRunsDefault. The run
	// budget keeps shrinking reproducible.
	RunsMax int
	// Time, when positive, also stops the shrink after this long (then the
	// result depends on the machine's speed; the file records the runs).
	Time time.Duration
	// Log, when not nil, receives a line per accepted candidate.
	Log io.Writer
	// KeepProbes, when set, are probes every accepted candidate must hit
	// too (a reseed keeps the recorded probe set while it shrinks).
	KeepProbes []string
}

// Choices counts the non-zero decisions of a list.
func Choices(list []uint32) int {
	n := 0
	for _, v := range list {
		if v != 0 {
			n++
		}
	}
	return n
}

type shrinker struct {
	engine   *Engine
	want     Finding
	current  Spec
	result   sim.Result
	runs     int
	runsMax  int
	deadline time.Time
	log      io.Writer
	keep     []string
	// best is the smallest spec adopted so far (shrinkSize): a pass may
	// adopt a larger one on the way to a smaller (passSticky re-encodes
	// the schedule, which the later passes then cut), and the shrink
	// returns best if the way did not lead below it.
	best Spec
	// stalled: the rounds in the found scheduler made no more progress;
	// halfway: half of the time limit (zero without one). passSticky waits
	// for one of them, or half of the run budget: a re-encoded schedule
	// shrinks on a path of its own, which for a small list can end above
	// where the found scheduler's path would have.
	stalled bool
	halfway time.Time
}

// Shrink minimises spec while it keeps finding want. spec.Decisions may be
// nil (a seeded run): it is run once to record its decisions. It returns an
// error if the spec does not reproduce want to begin with.
func (c *Catalog) Shrink(spec Spec, want Finding, options ShrinkOptions) (ShrinkResult, error) {
	e, err := c.Lookup(spec.Engine)
	if err != nil {
		return ShrinkResult{}, err
	}
	if want.OK() {
		panic("campaign: Shrink of a passing run")
	}
	runsMax := options.RunsMax
	if runsMax <= 0 {
		runsMax = ShrinkRunsDefault
	}
	s := &shrinker{engine: e, want: want, runsMax: runsMax, log: options.Log, keep: options.KeepProbes}
	if options.Time > 0 {
		s.deadline = time.Now().Add(options.Time)
		s.halfway = time.Now().Add(options.Time / 2)
	}
	result := sim.Run(spec.Config(e, nil))
	s.runs++
	if finding, _ := judge(e, result, false); !finding.Same(want) {
		return ShrinkResult{}, fmt.Errorf("campaign: spec does not reproduce %v; it finds %v", want, finding)
	}
	s.current = spec.clone()
	s.current.adopt(result)
	s.result = result
	s.best = s.current
	before := s.current.Decisions
	for s.round() {
	}
	if !s.stalled && !s.exhausted() {
		s.stalled = true // the sticky schedule's turn (passSticky)
		for s.round() {
		}
	}
	if sizeOf(s.best).less(s.size()) {
		s.current = s.best
	}
	final, finding := s.finalBudget(spec.StepsMax)
	if !finding.Same(want) && (want.CheckTimedOut() || finding.CheckTimedOut()) {
		return ShrinkResult{}, fmt.Errorf("campaign: the shrunk spec finds %v, not %v: a history check that runs out of time depends on the machine's load, not only on the run", finding, want)
	}
	if !finding.Same(want) {
		panic(fmt.Sprintf("campaign: shrunk spec finds %v, not %v", finding, want))
	}
	return ShrinkResult{Spec: s.current, Finding: finding, Result: final, Runs: s.runs,
		DecisionsBefore: len(result.Decisions), DecisionsAfter: len(s.current.Decisions),
		ChoicesBefore: Choices(before), ChoicesAfter: Choices(s.current.Decisions)}, nil
}

// finalBudget gives the shrunk spec back the original step budget when it
// still finds the failure with it, and returns that run. The budget was
// cut only to make candidate runs cheap; with the whole budget, fixed code
// can go on to pass instead of stopping with a step-budget finding. But a
// failure the cut run found in a partial history (a history check at the
// budget) can give way, with the whole budget, to another failure found
// later: then the cut budget stays, since the seed must reproduce what it
// was shrunk for.
func (s *shrinker) finalBudget(original int) (sim.Result, Finding) {
	cut := s.current.StepsMax
	s.current.StepsMax = original
	final := sim.Run(s.current.Config(s.engine, nil))
	finding, _ := judge(s.engine, final, false)
	if finding.Same(s.want) || cut == original {
		return final, finding
	}
	s.current.StepsMax = cut
	final = sim.Run(s.current.Config(s.engine, nil))
	finding, _ = judge(s.engine, final, false)
	return final, finding
}

// round runs every pass once and reports whether any made progress (and
// budget remains).
// A pass's adopted candidate may be no smaller (the same failure in
// another way): only a lower shrinkSize counts, or rounds would go on
// trading equal lists until the budget ran out.
func (s *shrinker) round() bool {
	before := s.size()
	for i, pass := range []func() bool{s.passSteps, s.passFaults, s.passParams, s.passReseed, s.passSticky, s.passPrefix, s.passStreamTails,
		s.passLarge, s.passConcentrate, s.passChoices, s.passChunks, s.passHalve} {
		if s.exhausted() {
			return false
		}
		if s.log != nil {
			fmt.Fprintf(s.log, "pass %d at run %d: %+v\n", i, s.runs, s.size())
		}
		pass()
	}
	return s.size().less(before) && !s.exhausted()
}

func (s *shrinker) exhausted() bool {
	return s.runs >= s.runsMax || (!s.deadline.IsZero() && time.Now().After(s.deadline))
}

// try runs a candidate and adopts it if it finds the same failure.
func (s *shrinker) try(candidate Spec) bool {
	if s.exhausted() {
		return false
	}
	s.runs++
	result := sim.Run(candidate.Config(s.engine, nil))
	finding, _ := judge(s.engine, result, false)
	if !finding.Same(s.want) || len(lostProbes(s.keep, result)) > 0 {
		return false
	}
	candidate.adopt(result)
	s.current = candidate
	s.result = result
	if sizeOf(candidate).less(sizeOf(s.best)) {
		s.best = candidate
	}
	if s.log != nil {
		fmt.Fprintf(s.log, "run %d: %d decisions, %d choices, %d steps\n", s.runs, len(candidate.Decisions),
			Choices(candidate.Decisions), result.Steps)
	}
	return true
}

func (s *shrinker) passSteps() bool {
	// A violation, or a liveness check that failed (not the step budget
	// running out), needs no more steps than it took.
	stepBudget := s.want.Outcome == sim.OutcomeLiveness && s.want.Class == Class("step budget")
	if s.want.Outcome == sim.OutcomeNondeterminism || stepBudget || s.result.Step < 0 {
		return false
	}
	stepsMax := s.result.Step + 1
	if stepsMax >= s.current.StepsMax {
		return false
	}
	c := s.current.clone()
	c.StepsMax = stepsMax
	return s.try(c)
}

func (s *shrinker) passFaults() bool {
	progress := false
	for _, name := range faultNames {
		if s.current.Faults.Get(name) == 0 {
			continue
		}
		c := s.current.clone()
		c.Faults.Set(name, 0)
		if s.try(c) {
			progress = true
		}
	}
	return progress
}

func (s *shrinker) passParams() bool {
	progress := false
	for _, p := range s.engine.Params {
		if p.Fixed {
			continue
		}
		value, ok := s.current.Params[p.Name]
		if !ok {
			value = p.Default
		}
		for _, next := range []int{p.Min, (p.Min + value) / 2, value - 1} {
			if next >= value || next < p.Min {
				continue
			}
			c := s.current.clone()
			c.Params[p.Name] = next
			if s.try(c) || s.try(clampDecisions(c, next)) {
				progress = true
				value = next
			}
		}
	}
	return progress
}

// reseedTries is how many fresh seeds passReseed tries per smaller input.
const reseedTries = 12

// passReseed lowers knobs and turns faults off where passParams and
// passFaults could not: a smaller workload shifts every later decision, so
// the old list rarely fits it. Instead it searches afresh: seeded runs of
// the smaller input (seeds derived from the current one, so the search is
// reproducible), adopting the first that finds the same failure, with its
// recorded decisions. Later passes then shrink those.
func (s *shrinker) passReseed() bool {
	progress := false
	var candidates []Spec
	if s.current.Scheduler == sim.SchedulerRandom {
		// A random schedule spends a choice on every pick of a non-first
		// process; a PCT schedule is a few priorities and change points.
		c := s.current.clone()
		c.Scheduler = sim.SchedulerPCT
		candidates = append(candidates, c)
	}
	for _, p := range s.engine.Params {
		value := s.current.Params[p.Name]
		if p.Fixed || value <= p.Min {
			continue
		}
		for _, next := range []int{p.Min, (p.Min + value) / 2, value - 1} {
			if next < value && next >= p.Min {
				c := s.current.clone()
				c.Params[p.Name] = next
				candidates = append(candidates, c)
			}
		}
	}
	for _, name := range faultNames {
		if s.current.Faults.Get(name) > 0 {
			c := s.current.clone()
			c.Faults.Set(name, 0)
			candidates = append(candidates, c)
		}
	}
	for _, c := range candidates {
		if s.exhausted() || !s.smaller(c) {
			continue
		}
		tries := uint64(reseedTries)
		if c.Scheduler != s.current.Scheduler {
			tries *= 2
		}
		for try := uint64(1); try <= tries && !s.exhausted(); try++ {
			fresh := c.clone()
			fresh.seeded()
			fresh.Seed = splitmix(c.Seed ^ try)
			if s.try(fresh) {
				progress = true
				break
			}
		}
	}
	return progress
}

// smaller reports whether c's knobs and faults are still each at most the
// current ones (a reseed adopted earlier in the pass may have gone lower),
// and its scheduler is not a step back from PCT to random.
func (s *shrinker) smaller(c Spec) bool {
	if c.Scheduler == sim.SchedulerRandom && s.current.Scheduler == sim.SchedulerPCT {
		return false
	}
	for name, value := range c.Params {
		if value > s.current.Params[name] {
			return false
		}
	}
	for _, name := range faultNames {
		if c.Faults.Get(name) > 0 && s.current.Faults.Get(name) == 0 {
			return false
		}
	}
	return true
}

// passPrefix binary-searches the shortest prefix that still fails.
func (s *shrinker) passPrefix() bool {
	low, high := 0, len(s.current.Decisions)
	progress := false
	for low < high && !s.exhausted() {
		middle := (low + high) / 2
		c := s.current.clone()
		c.truncate(middle)
		if s.try(c) {
			progress = true
			high = min(middle, len(s.current.Decisions))
		} else {
			low = middle + 1
		}
	}
	return progress
}

// clockMax bounds the values passLarge treats as clock steps
// (a step takes up to 50 µs, drawn below 50). Larger values are PCT
// priorities and change points or fault details, and are left alone: they
// change the schedule wholesale.
const clockMax = 64

// passLarge zeroes, across the whole list at once, every value in [k,
// clockMax), for k from 32 down to 2, then clamps such values to k. They are
// mostly clock steps and rarely matter; process picks are small. Each
// candidate is one run and keeps the list aligned.
func (s *shrinker) passLarge() bool {
	progress := false
	for _, clamp := range []bool{false, true} {
		for k := uint32(32); k >= 1 && !s.exhausted(); k /= 2 {
			if k == 1 && !clamp {
				continue // zeroing every value >= 1 is zeroing the list
			}
			c := s.current.clone()
			changed := false
			for i, v := range c.Decisions {
				switch {
				case v >= clockMax:
				case v >= k && !clamp:
					c.Decisions[i], changed = 0, true
				case v > k && clamp:
					c.Decisions[i], changed = k, true
				}
			}
			if changed && s.try(c) {
				progress = true
			}
		}
	}
	return progress
}

// passChunks works through chunk sizes from half the list down to one,
// deleting chunks that hold a choice from the end backwards (later
// decisions matter least to earlier ones). Deleting, unlike zeroing
// (passChoices), moves a stream's later decisions up to earlier draws:
// sometimes the same failure with fewer choices. Chunks of zeros only are
// left to passPrefix and the trailing-zero cut: deleting each of them
// cost a run per position of a list of thousands.
func (s *shrinker) passChunks() bool {
	progress := false
	for size := max(len(s.current.Decisions)/2, 1); size >= 1 && !s.exhausted(); size /= 2 {
		if s.deleteChunks(size) {
			progress = true
		}
	}
	return progress
}

func (s *shrinker) deleteChunks(size int) bool {
	progress := false
	for end := len(s.current.Decisions); end-size >= 0 && !s.exhausted(); {
		if Choices(s.current.Decisions[end-size:end]) > 0 {
			c := s.current.clone()
			c.cut(end-size, end)
			if s.try(c) {
				progress = true
			}
		}
		end = min(end-size, len(s.current.Decisions))
	}
	return progress
}

// passHalve halves each remaining choice.
func (s *shrinker) passHalve() bool {
	progress := false
	for i := 0; i < len(s.current.Decisions) && !s.exhausted(); i++ {
		if s.current.Decisions[i] <= 1 {
			continue
		}
		c := s.current.clone()
		c.Decisions[i] /= 2
		if s.try(c) {
			progress = true
		}
	}
	return progress
}

// clampDecisions is the second try of a lowered knob: with fewer processes a
// pick of "the last process" is out of range and would wrap round to
// another, so every decision is clamped to the new count minus one.
func clampDecisions(c Spec, count int) Spec {
	c = c.clone()
	limit := uint32(max(count-1, 1))
	for i, v := range c.Decisions {
		c.Decisions[i] = min(v, limit)
	}
	return c
}

func trimZeros(list []uint32) []uint32 {
	end := len(list)
	for end > 0 && list[end-1] == 0 {
		end--
	}
	return append([]uint32{}, list[:end]...)
}

// faultNames lists the simulator's faults in plan order.
var faultNames = []string{sim.FaultCrash, sim.FaultPowerLoss, sim.FaultPIDChurn, sim.FaultZombie, sim.FaultUpgrade,
	sim.FaultEACCES, sim.FaultFSError, sim.FaultCorrupt, sim.FaultRenameRace, sim.FaultClockStep, sim.FaultProcfs, sim.FaultStop, sim.FaultCotenant}
