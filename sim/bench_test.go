package sim

import (
	"fmt"
	"testing"

	"github.com/leasekit/leasekit/lease"
)

// benchSetup: three processes on one host, each looping over cheap FS calls
// (stat, create/truncate, write, fsync, close, rename, and now and then a
// directory fsync) for rounds rounds.
func benchSetup(rounds int) func(w *World) error {
	return func(w *World) error {
		volume := w.AddVolume("disk")
		mkdirAll(volume, "/d")
		h := w.AddHost(HostSpec{Name: "alpha", Volume: volume})
		for i := 0; i < 3; i++ {
			name := fmt.Sprintf("/d/f%d", i)
			if _, err := w.Spawn(h, ProcSpec{}, func(p *Proc) {
				fsys := p.FS()
				payload := []byte("payload")
				for round := 0; round < rounds; round++ {
					_, _ = fsys.Lstat(name)
					f, err := fsys.OpenFile(name+".tmp", lease.O_CREATE|lease.O_WRONLY|lease.O_TRUNC, 0o600)
					if err != nil {
						continue
					}
					_, _ = f.Write(payload)
					_ = f.Sync()
					_ = f.Close()
					_ = fsys.Rename(name+".tmp", name)
					if round%16 == 0 {
						if dir, err := fsys.OpenFile("/d", lease.O_RDONLY, 0); err == nil {
							_ = dir.Sync()
							_ = dir.Close()
						}
					}
				}
			}); err != nil {
				return err
			}
		}
		return nil
	}
}

func BenchmarkSteps(b *testing.B) {
	const rounds = 2000 // 3 processes x ~6.2 calls x 2000 rounds = ~37k steps per run
	for _, bench := range []struct {
		name string
		plan *FaultPlan
	}{{"nofaults", &FaultPlan{}}, {"hotfaults", hotPlan()}} {
		b.Run(bench.name, func(b *testing.B) {
			b.ReportAllocs()
			steps := 0
			for i := 0; b.Loop(); i++ {
				r := Run(Config{Seed: uint64(i), StepsMax: 50_000, Faults: bench.plan, Setup: benchSetup(rounds)})
				if r.Outcome == OutcomeViolation {
					b.Fatalf("%s", r.Message)
				}
				steps += r.Steps
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64(steps)/float64(b.N), "steps/run")
		})
	}
}

// BenchmarkSeeds runs the small fault-heavy churn workload: seeds per second.
func BenchmarkSeeds(b *testing.B) {
	b.ReportAllocs()
	steps := 0
	for i := 0; b.Loop(); i++ {
		r := Run(churnConfig(uint64(i), nil))
		steps += r.Steps
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}
