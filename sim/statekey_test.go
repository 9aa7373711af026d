package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
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
		require.Equal(t, c.want, s.pick(0, procs), "last %v answer %d", c.last, c.answer)
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
	require.Equal(t, OutcomeOK, result.Outcome)
	require.Equal(t, a, b)
	require.NotContains(t, a, uint64(0))
	c, _ := observedRun(t, []uint32{1}, -1)
	require.NotEqual(t, a, c, "a preemption at the first step moves the keys")
	halted, result := observedRun(t, []uint32{}, 3)
	require.Equal(t, HaltedMessage, result.Message)
	require.Equal(t, OutcomeOK, result.Outcome)
	require.Len(t, halted, 4)
	require.True(t, slices.Equal(a[:4], halted))
}
