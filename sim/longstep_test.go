package sim

import (
	"strings"
	"testing"
)

// TestIntnOrLongAnswersAReplayedLongValue: a drawing source answers as
// Intn would, below n; a replayed answer below long is given as it is
// (and recorded so), one at or above long modulo n, as Intn gives it.
func TestIntnOrLongAnswersAReplayedLongValue(t *testing.T) {
	drawn, twin := NewDecisions(9).Stream("step/a"), NewDecisions(9).Stream("step/a")
	for i := range 1000 {
		if got, want := drawn.IntnOrLong(stepTimeMax, StepTimeLong), twin.Intn(stepTimeMax); got != want {
			t.Fatalf("draw %d: IntnOrLong %d, Intn %d", i, got, want)
		}
	}
	list := []uint32{1000, 7, StepTimeLong + 3}
	replayed, err := ReplayKeyedDecisions(list, []uint16{0, 0, 0}, []string{"step/a"}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	stream := replayed.Stream("step/a")
	for i, want := range []int{1000, 7, (StepTimeLong + 3) % stepTimeMax} {
		if got := stream.IntnOrLong(stepTimeMax, StepTimeLong); got != want {
			t.Fatalf("replayed answer %d: %d, want %d", i, got, want)
		}
	}
	if got := replayed.Recorded(); len(got) != 3 || got[0] != 1000 || got[2] != (StepTimeLong+3)%stepTimeMax {
		t.Fatalf("recorded %v", got)
	}
}

// TestAReplayedClockDecisionTakesALongStep: a process that reads its
// clock at every step; raising its first clock decision by 5,000 in a
// replay moves every later reading by 5 ms, and the run's recorded list
// carries the raised decision, so it replays to the same hash.
func TestAReplayedClockDecisionTakesALongStep(t *testing.T) {
	var last int64
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, err := w.Spawn(h, ProcSpec{Name: "a"}, func(p *Proc) {
			for range 5 {
				last = p.Clock().Now().UnixMicro()
			}
		})
		return err
	}
	drawn := Run(Config{Seed: 4, StepsMax: 100, Scheduler: SchedulerRandom, Setup: setup})
	drawnLast := last
	first := -1
	for i, tag := range drawn.DecisionTags {
		if strings.HasPrefix(drawn.StreamKeys[tag], "step/a") {
			first = i
			break
		}
	}
	if drawn.Outcome != OutcomeOK || first < 0 {
		t.Fatalf("%v %s; first clock decision at %d", drawn.Outcome, drawn.Message, first)
	}
	list := append([]uint32(nil), drawn.Decisions...)
	list[first] += 5000
	replay := func() Result {
		return Run(Config{Replay: list, ReplayTags: drawn.DecisionTags, ReplayKeys: drawn.StreamKeys,
			Scheduler: SchedulerRandom, StepsMax: 100, Setup: setup})
	}
	long := replay()
	if long.Outcome != OutcomeOK || last-drawnLast != 5000 {
		t.Fatalf("%v; the last reading moved by %d µs, want 5000", long.Outcome, last-drawnLast)
	}
	if long.Decisions[first] != list[first] || replay().Hash != long.Hash {
		t.Fatalf("recorded %d for %d; hashes %016x, %016x", long.Decisions[first], list[first], long.Hash, replay().Hash)
	}
}

// TestShortStepsReplayAClockDecisionModuloItsDrawnRange: with
// ReplayShortSteps a replayed clock decision past the drawn range answers
// modulo it, as Intn does, and is recorded so; exhaustive enumeration
// probes a decision's alternatives by raising its value until the run
// stops answering it back, which without this would try 2^20 clock values
// per step (the explore hang of f8e8b74).
func TestShortStepsReplayAClockDecisionModuloItsDrawnRange(t *testing.T) {
	run := func(list []uint32, short bool) Result {
		return Run(Config{Replay: list, ReplayShortSteps: short, Scheduler: SchedulerRandom, StepsMax: 100,
			Setup: func(w *World) error {
				h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
				_, err := w.Spawn(h, ProcSpec{Name: "a"}, func(p *Proc) { p.Clock().Now() })
				return err
			}})
	}
	const raised = stepTimeMax + 7
	zeros := run([]uint32{}, false).Decisions
	clock := -1
	for i := range zeros {
		list := make([]uint32, i+1)
		list[i] = raised
		if got := run(list, false).Decisions; len(got) > i && got[i] == raised {
			clock = i
			break
		}
	}
	if clock < 0 {
		t.Fatalf("no decision of %d answers %d back: no long clock step", len(zeros), raised)
	}
	list := make([]uint32, clock+1)
	list[clock] = raised
	if got := run(list, true).Decisions; len(got) <= clock || got[clock] != raised%stepTimeMax {
		t.Fatalf("short steps: decision %d recorded as %v, want %d", clock, got, raised%stepTimeMax)
	}
}
