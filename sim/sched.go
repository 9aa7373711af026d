package sim

import (
	"fmt"
	"math"
)

// SchedulerKind selects how the next process is chosen.
type SchedulerKind int

const (
	// SchedulerDrawn draws Random or PCT from the run's decisions.
	SchedulerDrawn SchedulerKind = iota
	// SchedulerRandom picks uniformly among the runnable processes.
	SchedulerRandom
	// SchedulerPCT is probabilistic concurrency testing (Burckhardt et al.
	// 2010): random distinct priorities, the highest runnable runs, and at
	// depth-1 random change points the running process drops below all others.
	SchedulerPCT
	// SchedulerSticky keeps running the process that ran the last step
	// while it is runnable (answer 0); an answer v > 0 preempts it for the
	// v-th other runnable process in spawn order. With it an explorer's
	// choices are preemptions (a context-bounded search, as CHESS's), and
	// one choice lets a process run a whole window of steps.
	SchedulerSticky
)

func (k SchedulerKind) String() string {
	switch k {
	case SchedulerDrawn:
		return "drawn"
	case SchedulerRandom:
		return "random"
	case SchedulerPCT:
		return "pct"
	case SchedulerSticky:
		return "sticky"
	}
	return fmt.Sprintf("SchedulerKind(%d)", int(k))
}

// scheduler picks the next process among the runnable ones.
type scheduler interface {
	// admit is called once per process, in spawn order.
	admit(p *Proc)
	// pick returns an index into runnable, which is non-empty and in spawn order.
	pick(step int, runnable []*Proc) int
	// ran is told which process ran at step.
	ran(step int, p *Proc)
}

// streamSched is the scheduler's decision stream.
const streamSched = "sched"

type randomScheduler struct{ decisions *Decisions }

func (s *randomScheduler) admit(*Proc) {}

func (s *randomScheduler) pick(_ int, runnable []*Proc) int { return s.decisions.Intn(len(runnable)) }

func (s *randomScheduler) ran(int, *Proc) {}

// stickyScheduler is SchedulerSticky.
type stickyScheduler struct {
	decisions *Decisions
	last      *Proc
}

func (s *stickyScheduler) admit(*Proc) {}

func (s *stickyScheduler) pick(_ int, runnable []*Proc) int {
	v := s.decisions.Intn(len(runnable))
	current := -1
	for i, p := range runnable {
		if p == s.last {
			current = i
		}
	}
	switch {
	case current < 0:
		return v
	case v == 0:
		return current
	case v-1 >= current:
		return v
	}
	return v - 1
}

func (s *stickyScheduler) ran(_ int, p *Proc) { s.last = p }

// pctPriorityRange is the range initial priorities are drawn from, above the
// change-point priorities 0..depth-2.
const pctPriorityRange = 1 << 20

type pctScheduler struct {
	decisions *Decisions
	depth     int
	// changePoints[i] is the step at which the running process gets
	// priority depth-2-i.
	changePoints []int
}

func newPCTScheduler(d *Decisions, depth, stepsExpected int) *pctScheduler {
	if depth < 1 || stepsExpected < 1 {
		panic(fmt.Sprintf("sim: PCT depth %d over %d steps", depth, stepsExpected))
	}
	s := &pctScheduler{decisions: d, depth: depth}
	for i := 0; i < depth-1; i++ {
		s.changePoints = append(s.changePoints, d.Intn(stepsExpected))
	}
	return s
}

func (s *pctScheduler) admit(p *Proc) {
	p.priority = s.depth + s.decisions.Intn(pctPriorityRange)
}

// pick returns the highest priority; ties go to the earliest spawned, so an
// all-zero replay is the boring "first runnable" schedule.
func (s *pctScheduler) pick(_ int, runnable []*Proc) int {
	best := 0
	for i, p := range runnable {
		if p.priority > runnable[best].priority {
			best = i
		}
	}
	return best
}

func (s *pctScheduler) ran(step int, p *Proc) {
	for i, point := range s.changePoints {
		if point == step {
			p.priority = s.depth - 2 - i
		}
	}
}

// PCTBound is the probability PCT guarantees of hitting one given bug of
// depth d in a run of k steps with n processes: 1/(n * k^(d-1)).
func PCTBound(n, k, d int) float64 {
	if n < 1 || k < 1 || d < 1 {
		return 0
	}
	return 1 / (float64(n) * math.Pow(float64(k), float64(d-1)))
}
