package sim

import (
	"context"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simproc"
)

// threadWorld runs a leader and one thread on host alpha and an observer
// process; each body sleeps rounds times, the leader fewer so that it
// returns first. observe runs in every body's round.
func threadWorld(t *testing.T, plan FaultPlan, leaderRounds, threadRounds int,
	observe func(w *World, self, leader, thread, observer *Proc)) Result {
	t.Helper()
	var leader, thread, observer *Proc
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		rounds := func(n int) func(p *Proc) {
			return func(p *Proc) {
				for range n {
					observe(w, p, leader, thread, observer)
					_ = p.Clock().Sleep(context.Background(), time.Millisecond)
				}
			}
		}
		var err error
		if leader, err = w.Spawn(h, ProcSpec{Name: "leader"}, rounds(leaderRounds)); err != nil {
			return err
		}
		if thread, err = w.SpawnThread(leader, "leader-t1", rounds(threadRounds)); err != nil {
			return err
		}
		observer, err = w.Spawn(h, ProcSpec{Name: "observer"}, rounds(threadRounds+2))
		return err
	}
	return Run(Config{Seed: 5, StepsMax: 1000, Scheduler: SchedulerRandom, Faults: &plan, Setup: setup})
}

// TestThreadsShareTheProcessIdentity: both threads read one identity, the
// table counts two threads, and another process inspects that PID live.
func TestThreadsShareTheProcessIdentity(t *testing.T) {
	checked := 0
	r := threadWorld(t, FaultPlan{}, 3, 3, func(w *World, self, leader, thread, observer *Proc) {
		if self == observer {
			return
		}
		id, err := self.Inspector().Current()
		other, otherErr := leader.inspector.Current()
		if err != nil || otherErr != nil || id != other || self.Table() != leader.Table() || self.ProcessID() != leader.ID() {
			t.Errorf("%s: identity %+v (%v), leader's %+v (%v)", self.Name(), id, err, other, otherErr)
		}
		if self.Table().Threads != 2 {
			t.Errorf("%s: table counts %d threads", self.Name(), self.Table().Threads)
		}
		checked++
	})
	if r.Outcome != OutcomeOK || checked != 6 || r.Probes[ProbeThread] != 1 {
		t.Fatalf("%v %s: %d checks, probes %v", r.Outcome, r.Message, checked, r.Probes)
	}
}

// TestZombieLeaderWithRunningThread: the leader returns first; its process
// is then a zombie leader with two threads in the table, inspected live by
// the observer, while the thread's Current still works; when the thread
// returns too the process is gone.
func TestZombieLeaderWithRunningThread(t *testing.T) {
	sawZombie := 0
	var table *simproc.Proc
	r := threadWorld(t, FaultPlan{}, 1, 4, func(w *World, self, leader, thread, observer *Proc) {
		table = leader.Table()
		if leader.Alive() || !thread.Alive() {
			return
		}
		if table.State != simproc.Zombie || table.Threads != 2 || leader.ProcessEnded() {
			t.Errorf("leader returned, thread runs: table %v with %d threads", table.State, table.Threads)
		}
		if self == thread {
			if _, err := self.Inspector().Current(); err != nil {
				t.Errorf("thread of a zombie leader: Current: %v", err)
			}
		}
		if self == observer {
			got := self.Inspector().Inspect(table.PID)
			if got.Kind != lease.InspectLive || got.State != lease.StateZombie || got.Threads != 2 {
				t.Errorf("observer inspects %+v", got)
			}
			sawZombie++
		}
	})
	if r.Outcome != OutcomeOK || sawZombie == 0 || table.State != simproc.Gone {
		t.Fatalf("%v %s: observer saw the zombie leader %d times; table %v", r.Outcome, r.Message, sawZombie, table.State)
	}
	if r.Probes[ProbeThreadLeaderExited] != 1 || r.Probes[ProbeZombieLeaderThreads] != 0 {
		t.Fatalf("probes %v (no Begin, so no zombie-leader call)", r.Probes)
	}
}

// TestCrashKillsEveryThread: a crash of one thread kills both; the exit
// hooks see both crashed and the PID free.
func TestCrashKillsEveryThread(t *testing.T) {
	plan := FaultPlan{}
	plan.Set(FaultCrash, 1)
	crashed := map[string]bool{}
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		body := func(p *Proc) { _ = p.Clock().Sleep(context.Background(), time.Millisecond) }
		leader, err := w.Spawn(h, ProcSpec{Name: "leader"}, body)
		if err != nil {
			return err
		}
		if _, err := w.SpawnThread(leader, "leader-t1", body); err != nil {
			return err
		}
		w.OnExit(func(p *Proc, reason ExitReason) {
			crashed[p.Name()] = reason == ExitCrashed && p.ProcessEnded() && p.Table().State == simproc.Gone
			w.StopFaults()
		})
		return nil
	}
	r := Run(Config{Seed: 1, StepsMax: 100, Scheduler: SchedulerRandom, Faults: &plan, Setup: setup})
	if r.Outcome != OutcomeOK || !crashed["leader"] || !crashed["leader-t1"] || r.Probes["crash"] != 1 {
		t.Fatalf("%v %s: crashed %v, probes %v", r.Outcome, r.Message, crashed, r.Probes)
	}
}

// TestStopStopsEveryThread: the stop fault stops both threads until the
// same time; the process is continued once.
func TestStopStopsEveryThread(t *testing.T) {
	plan := FaultPlan{}
	plan.Set(FaultStop, 1)
	var stops []*Proc
	var ran []string
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		body := func(p *Proc) {
			ran = append(ran, p.Name())
			_ = p.Clock().Sleep(context.Background(), time.Millisecond)
		}
		leader, err := w.Spawn(h, ProcSpec{Name: "leader"}, body)
		if err != nil {
			return err
		}
		if _, err := w.SpawnThread(leader, "leader-t1", body); err != nil {
			return err
		}
		w.OnStop(func(p *Proc) {
			stops = append(stops, p)
			w.StopFaults()
		})
		return nil
	}
	r := Run(Config{Seed: 2, StepsMax: 100, Scheduler: SchedulerRandom, Faults: &plan, Setup: setup})
	if r.Outcome != OutcomeOK || len(stops) != 2 || stops[0].stoppedUntil != 0 || len(ran) != 2 {
		t.Fatalf("%v %s: stop hooks for %d threads, ran %v", r.Outcome, r.Message, len(stops), ran)
	}
	if r.Probes["stop"] != 1 || r.Probes["stop-continued"] != 2 {
		t.Fatalf("probes %v", r.Probes)
	}
}

// TestCallSiblingsDuringAfterThreadReturned: a call the leader began while
// its thread was alive still reports a sibling once the thread has
// returned (the thread may have left a record naming the process: the
// left-nothing oracle's finding violation-22fd7ff2a6e5d6c8), while a call
// begun after the thread returned reports none.
func TestCallSiblingsDuringAfterThreadReturned(t *testing.T) {
	var early *Call
	checked := 0
	r := threadWorld(t, FaultPlan{}, 5, 1, func(w *World, self, leader, thread, observer *Proc) {
		if self != leader {
			return
		}
		if early == nil {
			if !thread.Alive() {
				t.Fatalf("the thread returned before the leader's first round")
			}
			early = self.BeginCall()
			return
		}
		if thread.Alive() {
			return
		}
		late := self.BeginCall()
		if self.SiblingsLive() || !early.SiblingsDuring() || late.SiblingsDuring() {
			t.Errorf("thread returned: SiblingsLive %v, early call's SiblingsDuring %v, late call's %v",
				self.SiblingsLive(), early.SiblingsDuring(), late.SiblingsDuring())
		}
		late.End()
		checked++
	})
	if early != nil {
		early.End()
	}
	if r.Outcome != OutcomeOK || checked == 0 {
		t.Fatalf("%v %s: %d checks", r.Outcome, r.Message, checked)
	}
}
