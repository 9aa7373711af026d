package sim_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// lockPath is the toy lock: whoever creates it with O_EXCL holds it.
const lockPath = "/locks/lock"

// Two processes on one host take turns on an O_EXCL lock file while the
// fault plan kills the process about to run with some probability. The
// mutual-exclusion invariant is checked after every step. A kill inside the
// lock leaves the file behind, so the survivor gives up after its bounded
// retries (seed 22): the run still ends OK (no invariant failed), with the
// killed process's operation cut short (unknown) in the history. RunTwice
// runs the seed twice and compares the per-step hash streams, so OK also
// means the run is deterministic.
func ExampleRunTwice() {
	for _, seed := range []uint64{1, 22} {
		result := sim.RunTwice(sim.Config{
			Seed:      seed,
			StepsMax:  1000,
			Scheduler: sim.SchedulerRandom,
			Faults:    crashPlan(),
			Setup:     lockWorkload,
		})
		fmt.Printf("seed %d: %v after %d steps, %d processes\n", seed, result.Outcome, result.Steps, result.Processes)
		for _, op := range result.History {
			if op.Unknown {
				fmt.Printf("  %s %s: cut by a crash\n", op.Proc, op.Op)
			} else {
				fmt.Printf("  %s %s: %v\n", op.Proc, op.Op, op.Output)
			}
		}
	}
	// Output:
	// seed 1: ok after 15 steps, 2 processes
	//   client-a acquire: held
	//   client-b acquire: busy
	//   client-b acquire: held
	// seed 22: ok after 20 steps, 2 processes
	//   client-b acquire: cut by a crash
	//   client-a acquire: busy
	//   client-a acquire: busy
	//   client-a acquire: busy
	//   client-a acquire: busy
	//   client-a acquire: busy
}

// crashPlan injects only process crashes, at 2% per step.
func crashPlan() *sim.FaultPlan {
	plan := &sim.FaultPlan{}
	plan.Set(sim.FaultCrash, 0.02)
	return plan
}

// lockWorkload is the Setup: one volume, one host, two clients, and the
// invariant. Its state lives in the closure, so each run starts afresh.
func lockWorkload(w *sim.World) error {
	disk := w.AddVolume("disk")
	disk.FS().MkdirAll("/locks", 0o777, 0)
	host := w.AddHost(sim.HostSpec{Name: "alpha", PIDMax: 64, Volume: disk})
	inside := 0
	body := func(p *sim.Proc) {
		const attemptsMax = 5
		for range attemptsMax {
			op := p.Begin("acquire", p.Name())
			f, err := p.FS().OpenFile(lockPath, lease.O_CREATE|lease.O_EXCL|lease.O_WRONLY, 0o644)
			if errors.Is(err, fs.ErrExist) {
				p.End(op, "busy")
				if err := p.Clock().Sleep(context.Background(), 10*time.Millisecond); err != nil {
					panic(err)
				}
				continue
			}
			if err != nil {
				panic(err)
			}
			inside++
			_, _ = f.Write([]byte(p.Name()))
			_ = f.Close()
			p.Clock().Now() // work inside the lock: a scheduling point
			inside--
			_ = p.FS().Remove(lockPath)
			p.End(op, "held")
			return
		}
	}
	for _, name := range []string{"client-a", "client-b"} {
		if _, err := w.Spawn(host, sim.ProcSpec{Name: name, UID: 1000}, body); err != nil {
			return err
		}
	}
	w.Invariant("mutual-exclusion", func() error {
		if inside > 1 {
			return fmt.Errorf("%d holders at once", inside)
		}
		return nil
	})
	return nil
}
