package sim

import (
	"context"
	"testing"
	"time"
)

// TestStopPausesAProcess: under a certain stop fault the first process
// chosen is stopped at its first step; while stopped it does not run, the
// other process sees it stopped (state T in its table entry, live), and it
// runs again only after at least stopMin of virtual time, continued.
func TestStopPausesAProcess(t *testing.T) {
	var stopped *Proc
	var stoppedAt, firstRunAt int64 = -1, -1
	seenStopped := false
	plan := FaultPlan{}
	plan.Set(FaultStop, 1)
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		var procs []*Proc
		body := func(p *Proc) {
			if p == stopped && firstRunAt < 0 {
				firstRunAt = w.Now()
			}
			for range 3 {
				for _, q := range procs {
					if q != p && q.Stopped() && q.Table().Stopped && q.Alive() {
						seenStopped = true
					}
				}
				_ = p.Clock().Sleep(context.Background(), time.Millisecond)
			}
		}
		for _, name := range []string{"a", "b"} {
			p, err := w.Spawn(h, ProcSpec{Name: name}, body)
			if err != nil {
				return err
			}
			procs = append(procs, p)
		}
		w.OnStop(func(p *Proc) {
			stopped, stoppedAt = p, w.Now()
			w.StopFaults() // one stop only
		})
		return nil
	}
	r := Run(Config{Seed: 3, StepsMax: 100, Scheduler: SchedulerRandom, Faults: &plan, Setup: setup})
	if r.Outcome != OutcomeOK {
		t.Fatalf("%v: %s", r.Outcome, r.Message)
	}
	if stopped == nil || firstRunAt < stoppedAt+int64(stopMin) {
		t.Fatalf("stopped at %d, first ran at %d: want it at least %v later", stoppedAt, firstRunAt, stopMin)
	}
	if !seenStopped || r.Probes["stop"] != 1 || r.Probes["stop-continued"] != 1 || stopped.Table().Stopped {
		t.Fatalf("the other saw it stopped: %v; probes %v", seenStopped, r.Probes)
	}
}
