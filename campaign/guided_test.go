package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/sim"
)

// vaultEngine is a toy engine with a planted deep bug: a vault whose dial
// every client turns, each turn a choice of vaultDigits; vaultStages right
// turns in a row (by any clients, a wrong one starts over) open it, which
// the invariant forbids. Each turn's outcome names the stage it reached, so
// each step towards the bug is a new coverage point; random search meets
// all of them together with probability vaultDigits^-vaultStages per turn.
func vaultEngine() *Engine {
	return stagedToyEngine("vault", Param{Name: "turns", Default: 12, Min: 1, Max: 100}, func(p *sim.Proc, stage *int) {
		op := p.Begin("turn", nil)
		if p.World().Decisions().Intn(vaultDigits) == (*stage*5+3)%vaultDigits {
			*stage++
		} else {
			*stage = 0
		}
		p.End(op, vaultTurn{Stage: uint8(*stage)})
	})
}

// stagedToyEngine is the skeleton of the guided-search toys: clients on one
// host each run turn as often as the loop parameter says, sharing a stage
// counter that the invariant name+"-closed" forbids to reach vaultStages.
func stagedToyEngine(name string, loop Param, turn func(p *sim.Proc, stage *int)) *Engine {
	return &Engine{
		Name: name, Hidden: true, StepsMax: 5_000, WorkloadVersion: 1,
		Params: []Param{{Name: "processes", Default: 3, Min: 1, Max: 8}, loop},
		Setup: func(params Params) func(w *sim.World) error {
			return func(w *sim.World) error {
				stage := 0
				volume := w.AddVolume("disk")
				host := w.AddHost(sim.HostSpec{Name: "alpha", PIDMax: 64, Volume: volume})
				for i := range params["processes"] {
					body := func(p *sim.Proc) {
						for range params[loop.Name] {
							turn(p, &stage)
						}
					}
					if _, err := w.Spawn(host, sim.ProcSpec{Name: fmt.Sprintf("client-%d", i), UID: 1000}, body); err != nil {
						return err
					}
				}
				w.Invariant(name+"-closed", func() error {
					if stage >= vaultStages {
						return fmt.Errorf("the %s opened after %d right turns", name, stage)
					}
					return nil
				})
				return nil
			}
		},
	}
}

const (
	vaultDigits = 8
	vaultStages = 7
)

type vaultTurn struct{ Stage uint8 }

// safeEngine is the vault with its stepping stones inside one operation: a
// client's "dial" turns the dial until a wrong turn, and each right turn
// checks the next tumbler (an Lstat of its path, which does not exist);
// every dial returns the same output and changes no file. So the only
// trace of how far a dial got is the call trace: guided search by the
// operation signal alone sees nothing between the events, as random
// search does, and the call signal sees each tumbler as a new point.
func safeEngine() *Engine {
	return stagedToyEngine("safe", Param{Name: "dials", Default: 8, Min: 1, Max: 100}, func(p *sim.Proc, stage *int) {
		op := p.Begin("dial", nil)
		for *stage < vaultStages && p.World().Decisions().Intn(vaultDigits) == (*stage*5+3)%vaultDigits {
			*stage++
			if _, err := p.FS().Lstat("/tumbler-" + safeTumblers[*stage-1:*stage]); err == nil {
				panic("safe: a tumbler exists")
			}
		}
		if *stage < vaultStages {
			*stage = 0
		}
		p.End(op, true)
	})
}

// safeTumblers name the tumblers' paths: no hex digits, so the call
// coverage's folding keeps each name its own.
const safeTumblers = "ghijklmnopqrstuvwxyz"

var vaultCatalog = NewCatalog(vaultEngine(), safeEngine(), SelfTestEngine())

func guidedOptions(engine string, seeds int) Options {
	return Options{Catalog: vaultCatalog, Engines: []string{engine}, Seeds: seeds, Workers: 2, BaseSeed: 1,
		Search: "guided", Faults: FaultSetting{Swarm: true}}
}

// TestGuidedSearch: the table of guided search's promises.
func TestGuidedSearch(t *testing.T) {
	const budget = 6000
	for _, c := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"finds the vault's deep bug that random search misses in the same runs", func(t *testing.T) {
			longtest.Require(t, "a guided hunt of up to 6,000 runs")
			random := guidedOptions("vault", budget)
			random.Search = "random"
			r, err := Run(context.Background(), random)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcomes["violation"] != 0 {
				t.Fatalf("random search found the deep bug in %d runs: %v", budget, r.Failures[0])
			}
			hunt, err := Hunt(context.Background(), HuntOptions{Campaign: guidedOptions("vault", 0), SeedsMax: budget,
				Shrink: ShrinkOptions{RunsMax: 3000}})
			if err != nil {
				t.Fatal(err)
			}
			if !hunt.Found || hunt.Class != "invariant vault-closed" {
				t.Fatalf("guided search did not find the deep bug in %d runs: %+v", budget, hunt)
			}
			t.Logf("guided: found after %d runs, shrunk to %d choices", hunt.Runs, hunt.ShrunkChoices)
			if hunt.ShrunkChoices > 15 || hunt.ShrunkChoices < vaultStages-1 {
				t.Fatalf("the guided failure shrank to %d choices, want %d to 15", hunt.ShrunkChoices, vaultStages-1)
			}
			finding, err := RerunHunt(guidedOptions("vault", 0), hunt)
			if err != nil || finding.Class != hunt.Class {
				t.Fatalf("the detecting input reruns to %v, %v", finding, err)
			}
		}},
		{"finds the safe's deep bug, whose steps are inside one operation, by the call signal and not without it", func(t *testing.T) {
			longtest.Require(t, "a guided hunt of up to 6,000 runs")
			for _, search := range []struct{ search, signal string }{{"random", ""}, {"guided", SignalOperations}} {
				o := guidedOptions("safe", budget)
				o.Search, o.Signal = search.search, search.signal
				r, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				if r.Outcomes["violation"] != 0 {
					t.Fatalf("%s search (signal %q) found the safe's bug in %d runs: %v", search.search, search.signal, budget, r.Failures[0])
				}
			}
			hunt, err := Hunt(context.Background(), HuntOptions{Campaign: guidedOptions("safe", 0), SeedsMax: budget,
				Shrink: ShrinkOptions{RunsMax: 3000}})
			if err != nil {
				t.Fatal(err)
			}
			if !hunt.Found || hunt.Class != "invariant safe-closed" {
				t.Fatalf("guided search by the call signal did not find the safe's bug in %d runs: %+v", budget, hunt)
			}
			t.Logf("guided by calls: found after %d runs, shrunk to %d choices", hunt.Runs, hunt.ShrunkChoices)
		}},
		{"shrinks a guided campaign's failure from its own input into a seed file that replays it", func(t *testing.T) {
			longtest.Require(t, "a guided hunt of up to 6,000 runs")
			o := guidedOptions("vault", budget)
			report, err := Run(context.Background(), o)
			if err != nil || len(report.Failures) == 0 {
				t.Fatalf("guided campaign of %d runs: %v, %v", budget, report, err)
			}
			dir := t.TempDir()
			if errs := ShrinkFailures(report, o, dir, 1, ShrinkOptions{RunsMax: 3000}, nil); len(errs) > 0 {
				t.Fatal(errs)
			}
			file, err := ReadSeedFile(report.Failures[0].SeedFile)
			if err != nil {
				t.Fatal(err)
			}
			_, finding, _, err := vaultCatalog.Execute(file.Spec, nil, false)
			if err != nil || finding.Class != "invariant vault-closed" || report.Failures[0].ChoicesShrunk > 15 {
				t.Fatalf("the seed file replays to %v (%v), %d choices", finding, err, report.Failures[0].ChoicesShrunk)
			}
		}},
		{"is deterministic for a campaign seed, whatever the workers", func(t *testing.T) {
			var corpora [][]string
			for _, workers := range []int{1, 2, 1} {
				o := guidedOptions("selftest", 200)
				o.Workers, o.Corpus = workers, NewCorpus()
				r, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				corpora = append(corpora, append(names(o.Corpus, "selftest"), fmt.Sprint(r.Coverage, r.Outcomes)))
			}
			if !slices.Equal(corpora[0], corpora[1]) || !slices.Equal(corpora[0], corpora[2]) {
				t.Fatalf("corpora differ:\n%v\n%v\n%v", corpora[0], corpora[1], corpora[2])
			}
			other := guidedOptions("selftest", 200)
			other.BaseSeed, other.Corpus = 2, NewCorpus()
			if _, err := Run(context.Background(), other); err != nil {
				t.Fatal(err)
			}
			if slices.Equal(names(other.Corpus, "selftest"), corpora[0][:len(corpora[0])-1]) {
				t.Fatal("another campaign seed kept the same corpus")
			}
		}},
		{"merges shards' corpora into their union, and resumes from it", func(t *testing.T) {
			dir := t.TempDir()
			var want []string
			for shard := range 2 {
				o := guidedOptions("selftest", 100)
				o.Shard, o.Shards, o.Corpus = shard, 2, NewCorpus()
				if _, err := Run(context.Background(), o); err != nil {
					t.Fatal(err)
				}
				if _, err := o.Corpus.Save(filepath.Join(dir, fmt.Sprint(shard))); err != nil {
					t.Fatal(err)
				}
				want = append(want, names(o.Corpus, "selftest")...)
			}
			slices.Sort(want)
			want = slices.Compact(want)
			merged := filepath.Join(dir, "merged")
			if _, err := MergeCorpus(merged, filepath.Join(dir, "0"), filepath.Join(dir, "1")); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(filepath.Join(merged, "selftest"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, entry := range entries {
				got = append(got, entry.Name())
			}
			if !slices.Equal(got, want) || len(want) < 2 {
				t.Fatalf("merged corpus %v, want the union %v", got, want)
			}
			loaded, err := LoadCorpus(merged, []string{"selftest"})
			if err != nil || loaded.Len() != len(want) {
				t.Fatalf("loaded %d entries (%v), want %d", loaded.Len(), err, len(want))
			}
			o := guidedOptions("selftest", 16)
			o.Corpus = loaded
			r, err := Run(context.Background(), o)
			if err != nil || r.Coverage["selftest"] == 0 {
				t.Fatalf("resumed campaign: %v, %v", r, err)
			}
		}},
	} {
		t.Run(c.name, c.run)
	}
}

func names(c *Corpus, engine string) []string {
	var list []string
	for _, spec := range c.Entries(engine) {
		list = append(list, corpusName(spec))
	}
	slices.Sort(list)
	return list
}
