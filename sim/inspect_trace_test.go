package sim

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The trace names an inspection's answer: a live process with its state
// and threads, an absent PID, a table that could not be read and why,
// instead of an errno name standing for the answer's kind.
func TestTraceNamesInspections(t *testing.T) {
	var trace strings.Builder
	setup := func(w *World) error {
		v := w.AddVolume("disk")
		h := w.AddHost(HostSpec{Name: "alpha", Volume: v, DenyOtherUIDs: true})
		other, err := w.Spawn(h, ProcSpec{Name: "other", UID: 2000}, func(p *Proc) {
			_ = p.Clock().Sleep(context.Background(), time.Second)
		})
		if err != nil {
			return err
		}
		_, err = w.Spawn(h, ProcSpec{Name: "a", UID: 1000}, func(p *Proc) {
			self, _ := p.Inspector().Current()
			p.Inspector().Inspect(self.PID)
			p.Inspector().Inspect(4000)
			p.Inspector().Inspect(other.Table().PID)
		})
		return err
	}
	r := Run(Config{Seed: 1, StepsMax: 5000, Faults: &FaultPlan{}, Trace: &trace, Setup: setup})
	if r.Outcome != OutcomeOK {
		t.Fatalf("run: %v %s", r.Outcome, r.Message)
	}
	for _, want := range []string{"op=inspect path= result=live pid=2 state=R threads=1",
		"op=inspect path= result=absent pid=4000", "op=inspect path= result=unknown pid=1: "} {
		if !strings.Contains(trace.String(), want) {
			t.Errorf("trace lacks %q:\n%s", want, trace.String())
		}
	}
}
