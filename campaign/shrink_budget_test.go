package campaign

import (
	"fmt"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

// clockToyEngine fails a run whose virtual clock reaches deadline while its
// clients still work: a failure that needs time to pass, which only the
// steps' clock decisions buy (each at most 49 µs beyond the step's 1 µs).
// Its clients' picks by the random scheduler are choices no failure needs.
func clockToyEngine(deadline time.Duration) *Engine {
	return &Engine{
		Name: "toyclock", Doc: "shrink test: a clock that must reach a deadline", Hidden: true, StepsMax: 5_000,
		WorkloadVersion: 1,
		Params:          []Param{{Name: "processes", Default: 4, Min: 1, Max: 8}, {Name: "steps", Default: 200, Min: 1, Max: 1000}},
		Setup: func(params Params) func(w *sim.World) error {
			return func(w *sim.World) error {
				volume := w.AddVolume("disk")
				host := w.AddHost(sim.HostSpec{Name: "alpha", PIDMax: 64, Volume: volume})
				working := params["processes"]
				for i := range params["processes"] {
					body := func(p *sim.Proc) {
						defer func() { working-- }()
						for range params["steps"] {
							_, _ = p.FS().Stat("/")
						}
					}
					if _, err := w.Spawn(host, sim.ProcSpec{Name: fmt.Sprintf("client-%d", i), UID: 1000}, body); err != nil {
						return err
					}
				}
				start := w.Now()
				w.Invariant("deadline", func() error {
					if working == params["processes"] && time.Duration(w.Now()-start) >= deadline {
						return fmt.Errorf("the clock reached %v with every client still working", time.Duration(w.Now()-start))
					}
					return nil
				})
				return nil
			}
		},
		Check: toyCheck,
	}
}

// TestShrinkConcentratesTheTimeAFailureNeeds: a failure that needs 1.5 ms of
// virtual time before the first of 4 clients finishes its 100 steps, found
// by a random schedule with hundreds of choices (process picks, clock
// steps), shrinks to the few clock decisions that buy the time: at most
// one long step (a replayed clock decision asks for up to
// sim.StepTimeLong µs), plus one, within 1,500 runs; with steps of at most
// 49 µs it took (1.5 ms - 100 steps of 1 µs) / 49 µs of them.
func TestShrinkConcentratesTheTimeAFailureNeeds(t *testing.T) {
	catalog := NewCatalog(clockToyEngine(1500 * time.Microsecond))
	o := Options{Catalog: catalog, Engines: []string{"toyclock"}, Scheduler: "random", Faults: FaultSetting{},
		Params: Params{"steps": 100}}
	spec, err := o.SpecFor("toyclock", 1)
	require.NoError(t, err)
	want := Finding{Outcome: sim.OutcomeViolation, Class: "invariant deadline"}
	shrunk, err := catalog.Shrink(spec, want, ShrinkOptions{RunsMax: 1500})
	require.NoError(t, err)
	t.Logf("%d decisions (%d choices) to %d (%d choices) in %d runs", shrunk.DecisionsBefore, shrunk.ChoicesBefore,
		shrunk.DecisionsAfter, shrunk.ChoicesAfter, shrunk.Runs)
	require.Greater(t, shrunk.ChoicesBefore, 100, "a large list to begin with")
	require.True(t, shrunk.Finding.Same(want))
	require.LessOrEqual(t, shrunk.ChoicesAfter, 2)
}

// TestConcentrateKeepsTheSum: the sum of a group's values moves onto its
// first positions, up to the longest replayed step at a time.
func TestConcentrateKeepsTheSum(t *testing.T) {
	list := []uint32{10, 0, 30, 7, 40, 0, 2}
	require.True(t, concentrate(list, []int{0, 2, 3, 4, 6}))
	require.Equal(t, []uint32{89, 0, 0, 0, 0, 0, 0}, list)
	const most = sim.StepTimeLong - 1
	require.False(t, concentrate([]uint32{most, most}, []int{0, 1}), "no fewer positions")
	big := []uint32{most, 5, most, 1}
	require.True(t, concentrate(big, []int{0, 1, 2, 3}))
	require.Equal(t, []uint32{most, most, 6, 0}, big, "split at the longest step")
}
