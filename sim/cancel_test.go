package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/leasekit/leasekit/lease"
)

// TestCallContextsFireAtADrawnPoint: with every call drawn to be cancelled,
// each context is done before the call or at one of its next
// cancelPointsMax scheduling points, with the drawn kind's error, its Done
// channel closed; a zero fault plan cancels nothing.
func TestCallContextsFireAtADrawnPoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plan  func() FaultPlan
		fires bool
	}{
		{name: "swarm rate forced to 1", plan: func() FaultPlan {
			var plan FaultPlan
			plan.Set(FaultUpgrade, 1e-12) // non-zero, never fires in practice
			return plan
		}, fires: true},
		{name: "zero plan", plan: func() FaultPlan { return FaultPlan{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := tc.plan()
			kinds := map[CtxKind]int{}
			early, late := 0, 0
			var failure error
			setup := func(w *World) error {
				w.cancel = cancelState{drawn: true, rate: 1}
				h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
				_, err := w.Spawn(h, ProcSpec{Name: "a"}, func(p *Proc) {
					for range 40 {
						call := p.BeginCall()
						ctx := call.Context()
						if ctx.Err() != nil {
							early++
						}
						for i := 0; i <= cancelPointsMax && ctx.Err() == nil; i++ {
							_, _ = p.FS().Lstat("/")
						}
						call.End()
						if call.Drawn() == CtxLive {
							if ctx.Err() != nil {
								failure = errors.New("a live context is done")
							}
							continue
						}
						late++
						want := map[CtxKind]error{CtxCancelled: context.Canceled, CtxDeadline: context.DeadlineExceeded}[call.Drawn()]
						if !errors.Is(ctx.Err(), want) || call.Fired() != call.Drawn() {
							failure = errors.New("a drawn context did not fire with its kind within cancelPointsMax points")
						}
						select {
						case <-ctx.Done():
						default:
							failure = errors.New("a fired context's Done is open")
						}
						kinds[call.Drawn()]++
					}
				})
				return err
			}
			r := Run(Config{Seed: 5, StepsMax: 20000, Scheduler: SchedulerRandom, Faults: &plan, Setup: setup})
			if r.Outcome != OutcomeOK || failure != nil {
				t.Fatalf("%v: %s; %v", r.Outcome, r.Message, failure)
			}
			if !tc.fires {
				if late != 0 || early != 0 {
					t.Fatalf("a zero plan cancelled %d calls", late)
				}
				return
			}
			if late != 40 || kinds[CtxCancelled] == 0 || kinds[CtxDeadline] == 0 || early == 0 || early == 40 {
				t.Fatalf("drawn %d of 40, kinds %v, %d done before the call", late, kinds, early)
			}
		})
	}
}

// TestCallWatchSeesCreatedAndOpenFiles: a watched call's created names and
// the files it left open are reported; a closed file is not.
func TestCallWatchSeesCreatedAndOpenFiles(t *testing.T) {
	var created, open []string
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, err := w.Spawn(h, ProcSpec{Name: "a"}, func(p *Proc) {
			call := p.BeginCall()
			closed, _ := p.FS().OpenFile("/closed", lease.O_CREATE|lease.O_WRONLY, 0o600)
			_ = closed.Close()
			_, _ = p.FS().OpenFile("/kept", lease.O_CREATE|lease.O_WRONLY, 0o600)
			_ = p.FS().Mkdir("/dir", 0o700)
			call.End()
			created, open = call.Created(), call.OpenLeft()
		})
		return err
	}
	r := Run(Config{Seed: 1, StepsMax: 100, Scheduler: SchedulerRandom, Setup: setup})
	if r.Outcome != OutcomeOK {
		t.Fatalf("%v: %s", r.Outcome, r.Message)
	}
	if len(created) != 3 || created[0] != "/closed" || created[1] != "/kept" || created[2] != "/dir" {
		t.Fatalf("created %v", created)
	}
	if len(open) != 1 || open[0] != "/kept" {
		t.Fatalf("left open %v, want [/kept]", open)
	}
}
