package sim

import (
	"context"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// A process's record holds its clock reads with the steps they came after,
// and each PID it inspected with the answer and the table entry then.
func TestObservedRecordsClockReadsAndInspections(t *testing.T) {
	var before, after, final Observed
	var host *Host
	var stepsAtRead, stepsAtSecondRead int
	var self, absent Inspected
	var selfFound, absentFound, otherFound bool
	setup := func(w *World) error {
		v := w.AddVolume("disk")
		host = w.AddHost(HostSpec{Name: "alpha", Volume: v})
		_, err := w.Spawn(host, ProcSpec{Name: "a", UID: 1000}, func(p *Proc) {
			before = p.Observed()
			p.Clock().Now()
			after = p.Observed()
			stepsAtRead = host.ClockSteps()
			for range 50 { // clock steps come between steps (clockstep=0.5)
				_ = p.Clock().Sleep(context.Background(), time.Millisecond)
			}
			p.Clock().Now()
			stepsAtSecondRead = host.ClockSteps()
			id, _ := p.Inspector().Current()
			p.Inspector().Inspect(id.PID)
			p.Inspector().Inspect(4000)
			final = p.Observed()
			self, selfFound = p.Inspection(id.PID)
			absent, absentFound = p.Inspection(4000)
			_, otherFound = p.Inspection(4001)
		})
		return err
	}
	plan := FaultPlan{}
	plan.Set(FaultClockStep, 0.5)
	r := Run(Config{Seed: 1, StepsMax: 5000, Faults: &plan, Setup: setup})
	if r.Outcome != OutcomeOK {
		t.Fatalf("run: %v %s", r.Outcome, r.Message)
	}
	if before != (Observed{}) || after.WallReads != 1 || after.Calls != 1 || after.WallStepsSeen != stepsAtRead {
		t.Fatalf("one clock read: before %+v, after %+v (steps at the read %d)", before, after, stepsAtRead)
	}
	if final.WallReads != 2 || final.Calls != 4 || final.WallStepsSeen <= after.WallStepsSeen || final.WallStepsSeen != stepsAtSecondRead {
		t.Fatalf("after 50 sleeps under clockstep=0.5: %+v, host steps %d at the read; want a read after new steps", final, stepsAtSecondRead)
	}
	if !selfFound || self.Kind != lease.InspectLive || !self.Found || self.Entry.PID != self.PID || self.Call != 3 {
		t.Fatalf("inspection of itself: %+v (recorded %v)", self, selfFound)
	}
	if !absentFound || absent.Kind != lease.InspectAbsent || absent.Found || absent.Call != 4 || final.LastInspection != absent {
		t.Fatalf("inspection of pid 4000: %+v (recorded %v), last %+v", absent, absentFound, final.LastInspection)
	}
	if otherFound {
		t.Fatal("pid 4001 was never inspected but has a record")
	}
}
