package sim

import (
	"slices"
	"testing"
)

// streamsSetup spawns two processes, a and b, that each make 40 Lstat
// calls (a one more first when extra is set) and note which failed.
func streamsSetup(extra bool, failed map[string][]bool) func(w *World) error {
	return func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		for _, name := range []string{"a", "b"} {
			if _, err := w.Spawn(h, ProcSpec{Name: name}, func(p *Proc) {
				if extra && name == "a" {
					_, _ = p.FS().Lstat("/")
				}
				for range 40 {
					_, err := p.FS().Lstat("/")
					failed[name] = append(failed[name], err != nil)
				}
			}); err != nil {
				return err
			}
		}
		return nil
	}
}

// streamsRun runs two processes that each make 40 Lstat calls under a 20%
// fserror fault, the first one making one extra call first when extra is
// set, and returns which of each process's calls failed and the result.
func streamsRun(t *testing.T, seed uint64, scheduler SchedulerKind, extra bool) (map[string][]bool, Result) {
	t.Helper()
	var plan FaultPlan
	plan.Set(FaultFSError, 0.2)
	failed := map[string][]bool{}
	r := Run(Config{Seed: seed, Scheduler: scheduler, Faults: &plan, Setup: streamsSetup(extra, failed)})
	if r.Outcome != OutcomeOK {
		t.Fatalf("%v: %s", r.Outcome, r.Message)
	}
	return failed, r
}

// An extra FS call in one process moves only that process's later
// decisions: the other process's calls fail exactly as before (its io
// stream is its own), whatever the interleaving. With one shared stream
// the extra call's draw shifted every later answer of every process.
func TestAnExtraCallInOneProcessKeepsTheOthersFaults(t *testing.T) {
	moved := 0
	for seed := uint64(1); seed <= 20; seed++ {
		for _, scheduler := range []SchedulerKind{SchedulerRandom, SchedulerPCT} {
			before, r1 := streamsRun(t, seed, scheduler, false)
			after, r2 := streamsRun(t, seed, scheduler, true)
			if !slices.Equal(before["b"], after["b"]) {
				t.Fatalf("seed %d %v: b's faults moved with a's extra call:\n%v\n%v", seed, scheduler, before["b"], after["b"])
			}
			if !slices.Equal(before["a"], after["a"]) {
				moved++
			}
			if slices.Equal(r1.Decisions, r2.Decisions) {
				t.Fatalf("seed %d: the extra call changed no decision", seed)
			}
		}
	}
	if moved == 0 {
		t.Fatal("a's own later faults never moved: the test does not exercise a's stream")
	}
}

// A keyed run's recorded list, with its stream tags, replays bit-exactly
// (in draw order it also replays as one stream while the code is
// unchanged). Replayed on code with a's extra call, the tags keep b's faults
// where they were.
func TestKeyedListReplaysWithItsTags(t *testing.T) {
	failedBefore, seeded := streamsRun(t, 7, SchedulerRandom, false)
	if len(seeded.StreamKeys) == 0 || len(seeded.DecisionTags) != len(seeded.Decisions) {
		t.Fatalf("keys %v, %d tags for %d decisions", seeded.StreamKeys, len(seeded.DecisionTags), len(seeded.Decisions))
	}
	var plan FaultPlan
	plan.Set(FaultFSError, 0.2)
	replay := func(keys []string, extra bool) (map[string][]bool, Result) {
		failed := map[string][]bool{}
		r := Run(Config{Replay: seeded.Decisions, ReplayTags: seeded.DecisionTags, ReplayKeys: keys,
			Scheduler: SchedulerRandom, Faults: &plan, Setup: streamsSetup(extra, failed)})
		return failed, r
	}
	_, keyed := replay(seeded.StreamKeys, false)
	if keyed.Hash != seeded.Hash || !slices.Equal(keyed.Decisions, seeded.Decisions) ||
		!slices.Equal(keyed.DecisionTags, seeded.DecisionTags) {
		t.Fatalf("keyed replay: hash %016x, recorded %016x", keyed.Hash, seeded.Hash)
	}
	if _, single := replay(nil, false); single.Hash != seeded.Hash {
		t.Fatalf("the list in draw order replays as one stream to %016x, not %016x", single.Hash, seeded.Hash)
	}
	if failed, _ := replay(seeded.StreamKeys, true); !slices.Equal(failed["b"], failedBefore["b"]) {
		t.Fatalf("tagged replay with a's extra call moved b's faults:\n%v\n%v", failedBefore["b"], failed["b"])
	}
}
