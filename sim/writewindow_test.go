package sim

import (
	"testing"

	"github.com/leasekit/leasekit/lease"
)

// writeWindowScenario: a writer on alpha (its volume alone) writes a file
// and fsyncs it; beta, on a volume of its own, only runs. fresh chooses
// whether the open creates the file (O_EXCL: a temp).
type writeWindowScenario struct {
	fresh      bool
	synced     bool
	writerLost bool
}

func (s *writeWindowScenario) setup(w *World) error {
	disk := w.AddVolume("disk")
	mkdirAll(disk, "/d")
	alpha := w.AddHost(HostSpec{Name: "alpha", Volume: disk})
	beta := w.AddHost(HostSpec{Name: "beta", Volume: w.AddVolume("other")})
	flag := lease.O_CREATE | lease.O_WRONLY
	if s.fresh {
		flag |= lease.O_EXCL
	}
	if _, err := w.Spawn(alpha, ProcSpec{Name: "writer"}, func(p *Proc) {
		file, err := p.FS().OpenFile("/d/t", flag, 0o600)
		if err != nil {
			return
		}
		if _, err := file.Write([]byte(`{"id":7}`)); err == nil && file.Sync() == nil {
			s.synced = true
		}
		_ = file.Close()
	}); err != nil {
		return err
	}
	if _, err := w.Spawn(beta, ProcSpec{Name: "bystander"}, func(p *Proc) {
		for i := 0; i < 20; i++ {
			_, _ = p.FS().Lstat("/")
		}
	}); err != nil {
		return err
	}
	w.OnExit(func(p *Proc, reason ExitReason) {
		if reason == ExitPowerLoss && p.host == alpha && !s.synced {
			s.writerLost = true
		}
	})
	return nil
}

// TestWriteWindowAimsPowerLoss: with the plan's power-loss probability at
// 1/writeWindowBoost, a write of a new file makes the next power-loss draw
// certain and aimed at the writer's host, before its fsync; an open that
// does not create the file opens no window.
func TestWriteWindowAimsPowerLoss(t *testing.T) {
	plan := &FaultPlan{}
	plan.Set(FaultPowerLoss, 1.0/writeWindowBoost)
	for _, fresh := range []bool{true, false} {
		aimed := 0
		for seed := uint64(1); seed <= 40; seed++ {
			s := &writeWindowScenario{fresh: fresh}
			r := Run(Config{Seed: seed, StepsMax: 500, Faults: plan, Setup: s.setup})
			if r.Outcome != OutcomeOK {
				t.Fatalf("fresh=%v seed %d: %v %s", fresh, seed, r.Outcome, r.Message)
			}
			if r.Probes[ProbePowerLossInWriteWindow] == 0 {
				continue
			}
			aimed++
			if !fresh {
				t.Fatalf("seed %d: a power loss aimed at the write of a file the open did not create", seed)
			}
			if !s.writerLost || s.synced {
				t.Fatalf("seed %d: the aimed power loss did not strike the writer before its fsync (lost %v, synced %v)",
					seed, s.writerLost, s.synced)
			}
		}
		// The boost makes the window's probability 1, so every seed's writer
		// is struck there, unless an unboosted draw struck earlier: most
		// seeds must be aimed (a probability read once per run, not per
		// step, aims almost none).
		if fresh && aimed < 30 {
			t.Fatalf("a power loss was aimed at a new file's write window in %d of 40 seeds (want 30 or more: the window's probability is 1)", aimed)
		}
	}
}
