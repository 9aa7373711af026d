package sim

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lease"
)

// lockWorld runs bodies on one host sharing a disk with /l/f.
func lockWorld(t *testing.T, bodies ...func(p *Proc)) Result {
	t.Helper()
	setup := func(w *World) error {
		v := w.AddVolume("disk")
		h := w.AddHost(HostSpec{Name: "alpha", Volume: v})
		v.FS().MkdirAll("/l", 0o777, 0)
		for i, body := range bodies {
			if _, err := w.Spawn(h, ProcSpec{Name: string(rune('a' + i))}, body); err != nil {
				return err
			}
		}
		return nil
	}
	r := Run(Config{Seed: 3, StepsMax: 5000, Scheduler: SchedulerRandom, Setup: setup})
	if r.Outcome != OutcomeOK {
		t.Fatalf("run: %v %s", r.Outcome, r.Message)
	}
	return r
}

func openLock(t *testing.T, p *Proc) env.Locker {
	f, err := p.FS().OpenFile("/l/f", lease.O_RDWR|lease.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return f.(env.Locker)
}

// A blocking flock waits, not runnable, until the holder releases; the
// holder's lock dies with it.
func TestFlockBlocksUntilTheHolderDies(t *testing.T) {
	var gotAt, heldUntil int64
	r := lockWorld(t, func(p *Proc) {
		l := openLock(t, p)
		if err := l.Flock(env.LOCK_EX); err != nil {
			t.Errorf("holder: %v", err)
		}
		_ = p.Clock().Sleep(context.Background(), time.Second)
		heldUntil = p.World().Now()
		// returns holding the lock: its exit closes the file
	}, func(p *Proc) {
		_ = p.Clock().Sleep(context.Background(), 10*time.Millisecond)
		l := openLock(t, p)
		if err := l.Flock(env.LOCK_EX | env.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("LOCK_NB while held: %v", err)
		}
		if err := l.Flock(env.LOCK_EX); err != nil {
			t.Errorf("waiter: %v", err)
		}
		gotAt = p.World().Now()
	})
	if gotAt < heldUntil || r.Probes[ProbeLockWaited] != 1 || r.Probes[ProbeFlockConflict] == 0 {
		t.Fatalf("got the lock at %d, holder held it until %d; probes %v", gotAt, heldUntil, r.Probes)
	}
}

// Two processes each waiting for the other's POSIX lock: the second wait
// fails with EDEADLK, as Linux detects it.
func TestSetlkwDeadlockIsEDEADLK(t *testing.T) {
	var errs [2]error
	body := func(i int) func(p *Proc) {
		return func(p *Proc) {
			l := openLock(t, p)
			mine := env.RecordLock{Type: env.F_WRLCK, Start: int64(i), Len: 1}
			if err := l.FcntlLock(env.F_SETLK, &mine); err != nil {
				t.Errorf("%d: %v", i, err)
			}
			_ = p.Clock().Sleep(context.Background(), 100*time.Millisecond*time.Duration(i+1))
			other := env.RecordLock{Type: env.F_WRLCK, Start: int64(1 - i), Len: 1}
			errs[i] = l.FcntlLock(env.F_SETLKW, &other)
			_ = p.Clock().Sleep(context.Background(), time.Second)
		}
	}
	lockWorld(t, body(0), body(1))
	if errs[0] != nil || !errors.Is(errs[1], syscall.EDEADLK) {
		t.Fatalf("first waiter %v (want nil once the second gives up), second %v (want EDEADLK)", errs[0], errs[1])
	}
}
