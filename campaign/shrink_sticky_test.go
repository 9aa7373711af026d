package campaign

import (
	"fmt"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

// runToyEngine fails a run in which the last of its clients makes run
// Stat calls while the first has made none: a failure of one process
// running a stretch of steps while others could run. A random schedule
// pays a choice per such step (the last client is never the first
// runnable), a sticky one a single preemption.
func runToyEngine(run int) *Engine {
	return &Engine{
		Name: "toyrun", Doc: "shrink test: one process's run of steps", Hidden: true, StepsMax: 2_000,
		WorkloadVersion: 1,
		Params:          []Param{{Name: "processes", Default: 3, Min: 3, Max: 3, Fixed: true}},
		Setup: func(params Params) func(w *sim.World) error {
			return func(w *sim.World) error {
				volume := w.AddVolume("disk")
				host := w.AddHost(sim.HostSpec{Name: "alpha", PIDMax: 64, Volume: volume})
				calls := make([]int, params["processes"])
				for i := range calls {
					body := func(p *sim.Proc) {
						for range 3 * run {
							_, _ = p.FS().Stat("/")
							calls[i]++
						}
					}
					if _, err := w.Spawn(host, sim.ProcSpec{Name: fmt.Sprintf("client-%d", i), UID: 1000}, body); err != nil {
						return err
					}
				}
				w.Invariant("run", func() error {
					if last := calls[len(calls)-1]; last >= run && calls[0] == 0 {
						return fmt.Errorf("the last client made %d calls before the first made one", last)
					}
					return nil
				})
				return nil
			}
		},
		Check: toyCheck,
	}
}

// toyRunFailure searches seeds of the toy under scheduler until one
// fails, and returns a shrinker on that failure (its list recorded).
func toyRunFailure(t *testing.T, catalog *Catalog, scheduler string) *shrinker {
	t.Helper()
	o := Options{Catalog: catalog, Engines: []string{"toyrun"}, Scheduler: scheduler, Faults: FaultSetting{}}
	want := Finding{Outcome: sim.OutcomeViolation, Class: "invariant run"}
	e, err := catalog.Lookup("toyrun")
	require.NoError(t, err)
	for seed := uint64(1); seed <= 5000; seed++ {
		spec, err := o.SpecFor("toyrun", seed)
		require.NoError(t, err)
		result := sim.Run(spec.Config(e, nil))
		if finding, _ := judge(e, result, false); finding.Same(want) {
			s := &shrinker{engine: e, want: want, runsMax: 1000, stalled: true}
			spec.adopt(result)
			s.current, s.result, s.best = spec, result, spec
			return s
		}
	}
	t.Fatalf("no %v in 5000 seeds of toyrun under %s", want, scheduler)
	return nil
}

// requireReplayedCurrent holds a pass to what try guarantees: the current
// spec is what its own run recorded (the shrinker's result is that run),
// and a fresh replay of it finds the same failure. A pass that adopted a
// candidate without running it leaves the old result behind.
func requireReplayedCurrent(t *testing.T, s *shrinker) {
	t.Helper()
	fresh := sim.Run(s.current.Config(s.engine, nil))
	finding, _ := judge(s.engine, fresh, false)
	require.True(t, finding.Same(s.want), "the current spec finds %v", finding)
	require.Equal(t, s.current.Decisions, trimZeros(fresh.Decisions), "the current list is what its replay draws")
	require.Equal(t, s.current.Decisions, trimZeros(s.result.Decisions), "the shrinker's result is the current spec's run")
}

// streamChoices counts the current list's choices whose stream key has prefix.
func streamChoices(s Spec, prefix string) int {
	n := 0
	for i, v := range s.Decisions {
		if v != 0 && len(s.Keys[s.Tags[i]]) >= len(prefix) && s.Keys[s.Tags[i]][:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

// TestShrinkPassesOnAConstructedFailure runs each pass of
// shrink_sticky.go once on the toy's failure and checks what it must have
// done, and that what it adopted was replayed.
func TestShrinkPassesOnAConstructedFailure(t *testing.T) {
	const run = 8
	catalog := NewCatalog(runToyEngine(run))
	for _, tc := range []struct {
		name, scheduler string
		pass            func(*shrinker) bool
		check           func(t *testing.T, before, after Spec)
	}{
		{"sticky from random", "random", (*shrinker).passSticky, func(t *testing.T, before, after Spec) {
			require.Equal(t, sim.SchedulerSticky, after.Scheduler)
			require.GreaterOrEqual(t, streamChoices(before, "sched"), run, "a random schedule picks the last client each time")
			require.LessOrEqual(t, streamChoices(after, "sched"), streamChoices(before, "sched"))
		}},
		{"sticky from pct", "pct", (*shrinker).passSticky, func(t *testing.T, before, after Spec) {
			require.Equal(t, sim.SchedulerSticky, after.Scheduler)
			require.Less(t, streamChoices(after, "sched"), streamChoices(before, "sched"), "no priorities")
		}},
		{"stream tails", "random", (*shrinker).passStreamTails, func(t *testing.T, before, after Spec) {
			require.Positive(t, streamChoices(before, "step/"), "clock steps no failure needs")
			require.Zero(t, streamChoices(after, "step/"), "every clock stream zeroed")
			require.GreaterOrEqual(t, streamChoices(after, "sched"), run, "the picks it needs are kept")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := toyRunFailure(t, catalog, tc.scheduler)
			before, runs := s.current.clone(), s.runs
			require.True(t, tc.pass(s), "the pass adopted a candidate")
			require.Greater(t, s.runs, runs, "candidates were run")
			requireReplayedCurrent(t, s)
			tc.check(t, before, s.current)
		})
	}
}

// TestStickyReencodingRunsTheSameSteps: a random or PCT run re-encoded
// for the sticky scheduler runs the same processes in the same order,
// with every other stream's decisions unchanged.
func TestStickyReencodingRunsTheSameSteps(t *testing.T) {
	for _, scheduler := range []string{"random", "pct"} {
		o := Options{Catalog: testCatalog, Engines: []string{"toylock-buggy"}, Scheduler: scheduler, Faults: swarm(t)}
		e, err := testCatalog.Lookup("toylock-buggy")
		require.NoError(t, err)
		for seed := uint64(1); seed <= 20; seed++ {
			spec, err := o.SpecFor("toylock-buggy", seed)
			require.NoError(t, err)
			s := &shrinker{engine: e}
			steps, result := s.observeSteps(spec)
			sticky := spec.clone()
			sticky.Scheduler = sim.SchedulerSticky
			sticky.Decisions, sticky.Tags, sticky.Keys = stickyList(result.Decisions, result.DecisionTags, result.StreamKeys, steps)
			again, replayed := s.observeSteps(sticky)
			require.Equal(t, procsOf(steps), procsOf(again), "%s seed %d: the same schedule", scheduler, seed)
			require.Equal(t, result.Hash, replayed.Hash, "%s seed %d: the same run", scheduler, seed)
			require.Equal(t, result.Outcome, replayed.Outcome)
		}
	}
}

func procsOf(steps []stickyStep) []int {
	procs := make([]int, len(steps))
	for i, step := range steps {
		procs[i] = step.proc
	}
	return procs
}

// TestStickyAnswerInvertsThePick: for every runnable set, last process
// and target, the answer makes sim's sticky pick choose the target.
func TestStickyAnswerInvertsThePick(t *testing.T) {
	for _, tc := range []struct {
		runnable   []int
		last, proc int
		want       uint32
	}{
		{[]int{4, 7, 9}, -1, 4, 0}, // first step: the first runnable is 0
		{[]int{4, 7, 9}, -1, 9, 2},
		{[]int{4, 7, 9}, 7, 7, 0}, // run last again
		{[]int{4, 7, 9}, 7, 4, 1}, // before last: index + 1
		{[]int{4, 7, 9}, 7, 9, 2}, // after last: its index
		{[]int{4, 7, 9}, 3, 7, 1}, // last not runnable: the plain index
		{[]int{4, 7, 9}, 4, 9, 2},
		{[]int{4, 7, 9}, 9, 4, 1},
	} {
		require.Equal(t, tc.want, stickyAnswer(tc.runnable, tc.last, tc.proc), "%v last %d proc %d", tc.runnable, tc.last, tc.proc)
		require.Equal(t, tc.proc, tc.runnable[stickyPick(tc.runnable, tc.last, tc.want)])
	}
}

// stickyPick is sim's stickyScheduler.pick, on process IDs.
func stickyPick(runnable []int, last int, v uint32) int {
	current := -1
	for i, p := range runnable {
		if p == last {
			current = i
		}
	}
	switch {
	case current < 0:
		return int(v)
	case v == 0:
		return current
	case int(v)-1 >= current:
		return int(v)
	}
	return int(v) - 1
}

// TestShrinkReachesTheOnePreemptionAFailureNeeds: the toy's failure, found
// by a random schedule, costs at least run choices as picks; the shrink
// re-encodes it as preemptions and keeps one or two.
func TestShrinkReachesTheOnePreemptionAFailureNeeds(t *testing.T) {
	const run = 8
	catalog := NewCatalog(runToyEngine(run))
	s := toyRunFailure(t, catalog, "random")
	shrunk, err := catalog.Shrink(s.current, s.want, ShrinkOptions{RunsMax: 1000})
	require.NoError(t, err)
	t.Logf("%d choices to %d in %d runs, scheduler %v", shrunk.ChoicesBefore, shrunk.ChoicesAfter, shrunk.Runs, shrunk.Spec.Scheduler)
	require.Equal(t, sim.SchedulerSticky, shrunk.Spec.Scheduler)
	require.LessOrEqual(t, shrunk.ChoicesAfter, 2)
}
