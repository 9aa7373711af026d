package campaign

import (
	"math"
	"slices"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// What made the largest shrunk lists large was not only the clock: it was
// the schedule. A random schedule's pick is an index into the runnable
// processes, 0 the first of them, so every step of any other process is a
// choice. A failure that needs the third process to run a few hundred steps
// while the first waits (a zombie's threads working, a reclaimer's scan)
// keeps hundreds of picks no pass can zero: zeroing one hands that step to
// the first process. PCT's priorities are choices too (one per process).
//
// The sticky scheduler (sim.SchedulerSticky) answers 0 for "the process
// that ran the last step runs again" and v > 0 for a preemption. The same
// interleaving, re-encoded for it, costs a choice per context switch, and a
// zeroed choice then means "no preemption here", which keeps the processes'
// relative order: the later passes remove the switches the failure does not
// need, and a process's run of a hundred steps is free.

// stickySchedStream is sim's scheduler stream key.
const stickySchedStream = "sched"

// stickyStep is what re-encoding needs of one step: the process that ran
// and the runnable processes it was picked from (in pick order), and where
// in the recorded list the step's decisions start.
type stickyStep struct {
	proc     int
	runnable []int
	start    int
}

// passSticky re-encodes the current schedule (random or PCT) as the sticky
// scheduler's preemptions: the same steps by the same processes, so every
// other stream's decisions stay as they are. The candidate is replayed like
// every other: it is adopted only if it still finds the failure.
func (s *shrinker) passSticky() bool {
	if s.exhausted() || !s.stickyTurn() || s.current.Keys == nil ||
		(s.current.Scheduler != sim.SchedulerRandom && s.current.Scheduler != sim.SchedulerPCT) {
		return false
	}
	steps, result := s.observeSteps(s.current)
	s.runs++
	if finding, _ := judge(s.engine, result, false); !finding.Same(s.want) {
		return false // the observed run must be the current one's
	}
	c := s.current.clone()
	c.Scheduler = sim.SchedulerSticky
	c.Decisions, c.Tags, c.Keys = stickyList(result.Decisions, result.DecisionTags, result.StreamKeys, steps)
	return s.try(c)
}

// stickyTurn reports whether passSticky may run: once the found
// scheduler's rounds stalled, or half of the run budget or time is spent.
func (s *shrinker) stickyTurn() bool {
	return s.stalled || 2*s.runs >= s.runsMax || (!s.halfway.IsZero() && time.Now().After(s.halfway))
}

// observeSteps runs spec with a step observer and returns every step's
// process, runnable set and first decision, and the run's result.
func (s *shrinker) observeSteps(spec Spec) ([]stickyStep, sim.Result) {
	cfg := spec.Config(s.engine, nil)
	inner := cfg.Setup
	var steps []stickyStep
	cfg.Setup = func(w *sim.World) error {
		w.ObserveSteps(func(info sim.StepInfo) bool {
			steps = append(steps, stickyStep{proc: info.Proc, runnable: slices.Clone(info.Runnable), start: info.Start})
			return false
		})
		w.WorkloadKeyFrom(math.MaxInt) // no state keys: only the schedule is wanted
		return inner(w)
	}
	result := sim.Run(cfg)
	return steps, result
}

// stickyList is list (with its stream tags and keys) with the scheduler
// stream's decisions replaced by the sticky scheduler's answers that pick
// each step's process again: one answer at the start of each step that had
// more than one runnable process, and every other stream's decisions where
// they were.
func stickyList(list []uint32, tags []uint16, keys []string, steps []stickyStep) ([]uint32, []uint16, []string) {
	keys = slices.Clone(keys)
	sched := slices.Index(keys, stickySchedStream)
	if sched < 0 {
		sched = len(keys)
		keys = append(keys, stickySchedStream)
	}
	var outList []uint32
	var outTags []uint16
	copyOthers := func(from, to int) {
		for i := from; i < to; i++ {
			if int(tags[i]) != sched {
				outList, outTags = append(outList, list[i]), append(outTags, tags[i])
			}
		}
	}
	position, last := 0, -1
	for _, step := range steps {
		if step.start < position || step.start > len(list) {
			panic("campaign: a step starts before the previous one ended")
		}
		copyOthers(position, step.start)
		position = step.start
		if len(step.runnable) > 1 {
			outList, outTags = append(outList, stickyAnswer(step.runnable, last, step.proc)), append(outTags, uint16(sched))
		}
		last = step.proc
	}
	copyOthers(position, len(list))
	end := len(outList)
	for end > 0 && outList[end-1] == 0 {
		end--
	}
	return outList[:end], outTags[:end], keys
}

// stickyAnswer is the sticky scheduler's answer that picks proc among
// runnable when last ran the step before (sim's stickyScheduler.pick,
// inverted): 0 to run last again; otherwise proc's index among the
// runnable processes other than last, plus one.
func stickyAnswer(runnable []int, last, proc int) uint32 {
	target := slices.Index(runnable, proc)
	if target < 0 {
		panic("campaign: the process that ran was not runnable")
	}
	current := slices.Index(runnable, last)
	switch {
	case current < 0:
		return uint32(target)
	case target == current:
		return 0
	case target > current:
		return uint32(target)
	}
	return uint32(target + 1)
}

// passStreamTails zeroes each stream's later decisions at once: for each
// stream holding choices (in key order), a binary search for the shortest
// prefix of that stream's own decisions that still fails, the rest of the
// stream zeroed. passPrefix cuts the whole list at one point, so a stream
// whose choices all lie early (a process that ends, or a fault stream)
// keeps no later choices, but every stream with one late needed choice
// keeps all of its earlier ones; one stream at a time (the tail a guided
// search appended to a parent's list, a busy process's clock steps after
// the event that matters) costs a few runs per stream.
func (s *shrinker) passStreamTails() bool {
	if s.current.Keys == nil {
		return false
	}
	progress := false
	for tag := range s.current.Keys {
		if s.exhausted() {
			break
		}
		if s.zeroStreamTail(uint16(tag)) {
			progress = true
		}
	}
	return progress
}

// zeroStreamTail binary-searches the fewest choices of stream tag, counted
// from its first, that the failure needs, zeroing the stream's others.
func (s *shrinker) zeroStreamTail(tag uint16) bool {
	choicesOf := func() []int {
		return s.choiceIndices(func(i int, _ uint32) bool { return s.current.Tags[i] == tag })
	}
	low, high := 0, len(choicesOf())
	progress := false
	for low < high && !s.exhausted() {
		middle := (low + high) / 2
		indices := choicesOf()
		if middle >= len(indices) {
			break
		}
		c := s.current.clone()
		for _, i := range indices[middle:] {
			c.Decisions[i] = 0
		}
		if s.try(c) {
			progress = true
			high = min(middle, len(choicesOf()))
		} else {
			low = middle + 1
		}
	}
	return progress
}
