package sim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// This file holds small test workloads that drive the FS, Clock and
// Inspector directly, to prove the runtime before any engine exists.

// mkdirAll creates a directory durably on a simfs volume (setup only).
func mkdirAll(v *Volume, path string) {
	v.FS().MkdirAll(path, 0o777, 0)
}

// toyLock is a lock file taken with O_CREATE|O_EXCL, then filled with the
// owner's name and fsynced. The buggy variant treats an empty lock file as
// abandoned and breaks it, which races with an owner that has created the
// file but not yet written it.
type toyLock struct {
	breakEmpty bool
	inside     int
	holders    []string
}

const toyLockPath = "/locks/lock"

func (l *toyLock) setup(processes int) func(w *World) error {
	return func(w *World) error {
		l.inside, l.holders = 0, nil // Setup runs once per run: no state may leak between runs
		volume := w.AddVolume("disk")
		mkdirAll(volume, "/locks")
		host := w.AddHost(HostSpec{Name: "alpha", PIDMax: 64, Volume: volume})
		for i := 0; i < processes; i++ {
			if _, err := w.Spawn(host, ProcSpec{Name: fmt.Sprintf("client-%d", i), UID: 1000}, l.body); err != nil {
				return err
			}
		}
		w.Invariant("mutual-exclusion", func() error {
			if l.inside > 1 {
				return fmt.Errorf("%d holders inside at once: %v", l.inside, l.holders)
			}
			return nil
		})
		return nil
	}
}

// toyAttemptsMax bounds a client's acquire attempts.
const toyAttemptsMax = 20

func (l *toyLock) body(p *Proc) {
	fsys, clock := p.FS(), p.Clock()
	for attempt := 0; attempt < toyAttemptsMax; attempt++ {
		op := p.Begin("acquire", p.Name())
		f, err := fsys.OpenFile(toyLockPath, lease.O_CREATE|lease.O_EXCL|lease.O_WRONLY, 0o644)
		if err == nil {
			p.End(op, true)
			l.critical(p, f)
			return
		}
		p.End(op, false)
		if l.breakEmpty && errors.Is(err, fs.ErrExist) {
			if info, err := fsys.Stat(toyLockPath); err == nil && info.Size == 0 {
				_ = fsys.Remove(toyLockPath) // "abandoned": break it
				continue
			}
		}
		if err := clock.Sleep(context.Background(), 10*time.Millisecond); err != nil {
			panic(err)
		}
	}
}

func (l *toyLock) critical(p *Proc, f lease.File) {
	l.inside++
	l.holders = append(l.holders, p.Name())
	defer func() {
		l.inside--
		l.holders = l.holders[:len(l.holders)-1]
	}()
	if _, err := f.Write([]byte(p.Name())); err != nil {
		return
	}
	_ = f.Sync()
	_ = f.Close()
	p.Clock().Now() // work inside the lock: a scheduling point
	_ = p.FS().Remove(toyLockPath)
}

// churnWorkload exercises every kind of call and every generic fault: three
// processes on two hosts (one with its own disk, two sharing a mount) make
// temp dirs, write and rename files, list, inspect each other and sleep; a
// crashed or powered-off process is restarted a bounded number of times.
type churnWorkload struct {
	restartsMax int
	restarts    int
	// processesMax bounds the processes a run may hold at once.
	processesMax int
}

func (c *churnWorkload) setup(w *World) error {
	c.restarts = 0 // Setup runs once per run: no state may leak between runs
	local := w.AddVolume("local")
	shared := w.AddVolume("nfs")
	mkdirAll(local, "/data")
	mkdirAll(shared, "/data")
	alpha := w.AddHost(HostSpec{Name: "alpha", PIDMax: 8, Namespaces: 2, DenyOtherUIDs: true, Volume: local})
	beta := w.AddHost(HostSpec{Name: "beta", PIDMax: 8, Volume: shared})
	gamma := w.AddHost(HostSpec{Name: "gamma", PIDMax: 8, Volume: shared})
	for i, h := range []*Host{alpha, alpha, beta, gamma} {
		spec := ProcSpec{Name: fmt.Sprintf("worker-%d", i), UID: uint32(1000 + i%2), Namespace: i % h.Table().NamespaceCount()}
		if _, err := w.Spawn(h, spec, c.body); err != nil {
			return err
		}
	}
	w.OnExit(func(p *Proc, reason ExitReason) {
		if reason == ExitFinished || c.restarts >= c.restartsMax {
			return
		}
		c.restarts++
		spec := ProcSpec{Name: p.Name() + "'", UID: p.Table().UID, Namespace: p.Table().NS}
		if _, err := w.Spawn(p.Host(), spec, c.body); err != nil {
			w.Probe("respawn-failed")
		}
	})
	w.Invariant("bounded-processes", func() error {
		if n := len(w.procs); n > c.processesMax {
			return fmt.Errorf("%d processes alive", n)
		}
		return nil
	})
	return nil
}

func (c *churnWorkload) body(p *Proc) {
	fsys, clock, inspector, ids := p.FS(), p.Clock(), p.Inspector(), p.IDs()
	self, err := inspector.Current()
	if err != nil {
		panic(err)
	}
	for round := 0; round < 5; round++ {
		op := p.Begin("round", round)
		dir, err := fsys.MkdirTemp("/data", "w-*")
		if err != nil {
			p.End(op, "mkdirtemp failed")
			continue
		}
		name := dir + "/" + ids.NewID()
		if f, err := fsys.OpenFile(name, lease.O_CREATE|lease.O_EXCL|lease.O_WRONLY, 0o600); err == nil {
			_, _ = f.Write([]byte(self.StartTime))
			_ = f.Sync()
			_ = f.Close()
		}
		_ = fsys.Rename(name, dir+"/final")
		entries, _ := fsys.ReadDir(dir)
		for pid := 1; pid < 4; pid++ {
			if inspector.Inspect(pid).Kind == lease.InspectUnknown {
				p.World().Probe("inspect-unknown")
			}
		}
		_ = clock.Monotonic()
		_ = clock.Now()
		_ = clock.Sleep(context.Background(), time.Duration(1+round)*time.Millisecond)
		_ = fsys.Remove(dir + "/final")
		_ = fsys.Remove(dir)
		p.End(op, len(entries))
	}
}

// hotPlan enables every generic fault at a high rate.
func hotPlan() *FaultPlan {
	plan := &FaultPlan{}
	for _, spec := range faultSpecs {
		plan.Set(spec.name, spec.probabilityMax)
	}
	plan.Set(FaultCrash, 0.01)
	plan.Set(FaultPowerLoss, 0.005)
	return plan
}
