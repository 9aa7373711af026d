package sim

import (
	"slices"
	"testing"
)

// TestStickySchedulerKeepsTheRunningProcess: answer 0 picks the process
// that ran last while it is runnable, answer v the v-th other one in spawn
// order; with no last process it is the plain index.
func TestStickySchedulerKeepsTheRunningProcess(t *testing.T) {
	procs := []*Proc{{id: 1}, {id: 2}, {id: 3}}
	for _, c := range []struct {
		last   *Proc
		answer uint32
		want   int
	}{
		{nil, 0, 0}, {nil, 2, 2},
		{procs[1], 0, 1}, {procs[1], 1, 0}, {procs[1], 2, 2},
		{procs[2], 0, 2}, {procs[2], 1, 0}, {procs[2], 2, 1},
		{&Proc{id: 9}, 1, 1},
	} {
		s := &stickyScheduler{decisions: ReplayDecisions([]uint32{c.answer}), last: c.last}
		if got := s.pick(0, procs); got != c.want {
			t.Errorf("last %v answer %d: picked %d, want %d", c.last, c.answer, got, c.want)
		}
	}
}

// observedRun runs the toy lock of this package's tests (two clients) on
// list under the sticky scheduler with a step observer and a workload key,
// returning each step's state key; halt, when >= 0, halts the run at that
// step.
func observedRun(t *testing.T, list []uint32, halt int) ([]uint64, Result) {
	t.Helper()
	l := &toyLock{}
	inner := l.setup(2)
	var keys []uint64
	result := Run(Config{Seed: 1, Replay: list, Scheduler: SchedulerSticky, StepsMax: 5000, Setup: func(w *World) error {
		w.ObserveSteps(func(info StepInfo) bool {
			keys = append(keys, w.StateKey())
			return info.Step == halt
		})
		if err := inner(w); err != nil {
			return err
		}
		w.SetStateKey(func() uint64 { return uint64(l.inside) })
		return nil
	}})
	return keys, result
}

// TestStateKeyRepeatsAndHalts: the state key is a function of the state
// (two runs of one list give the same keys, every one non-zero), it moves
// with the state (a preemption changes the later keys), and an observer's
// halt ends the run after that step with HaltedMessage.
func TestStateKeyRepeatsAndHalts(t *testing.T) {
	a, result := observedRun(t, []uint32{}, -1)
	b, _ := observedRun(t, []uint32{}, -1)
	if result.Outcome != OutcomeOK || !slices.Equal(a, b) || slices.Contains(a, 0) || len(a) == 0 {
		t.Fatalf("two runs of one list: outcome %v, keys equal %v, a zero key %v", result.Outcome, slices.Equal(a, b), slices.Contains(a, 0))
	}
	if c, _ := observedRun(t, []uint32{1}, -1); slices.Equal(a, c) {
		t.Fatal("a preemption at the first step did not move the keys")
	}
	halted, result := observedRun(t, []uint32{}, 3)
	if result.Message != HaltedMessage || result.Outcome != OutcomeOK || !slices.Equal(a[:4], halted) {
		t.Fatalf("halted at step 3: %v %q, keys %v, want %v", result.Outcome, result.Message, halted, a[:4])
	}
}
