// Package fcntlpid is a third-party-style POSIX record lock (fcntl F_SETLK
// over the whole file) that, once it holds the lock, writes its PID into
// the lock file through a second descriptor, the way os.WriteFile would,
// and its simulation workload.
//
// The hazard: a POSIX record lock belongs to the process, and the kernel
// drops all of a process's locks on a file when the process closes ANY
// descriptor of it. Closing the second descriptor silently releases the
// lock the first one took, and a second process then takes it too: two
// holders (class "invariant two holders (close any descriptor)").
package fcntlpid

import (
	"errors"
	"strconv"
	"syscall"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Lock is the fcntl lock at Path, writing PID into it.
type Lock struct {
	FS   env.FS
	Path string
	PID  int
	file env.File
	// closedOther: the holder closed another descriptor of the file.
	closedOther bool
}

// TryLock opens the lock file, takes a whole-file write lock, then records
// its PID through a second open.
func (l *Lock) TryLock() (bool, uint64, error) {
	f, err := l.FS.OpenFile(l.Path, env.O_CREATE|env.O_RDWR, 0o644)
	if err != nil {
		return false, 0, err
	}
	locker, ok := f.(env.Locker)
	if !ok {
		f.Close()
		return false, 0, lockwork.ErrRefused
	}
	if err := locker.FcntlLock(env.F_SETLK, &env.RecordLock{Type: env.F_WRLCK}); err != nil {
		f.Close()
		if errors.Is(err, syscall.EAGAIN) {
			return false, 0, nil
		}
		return false, 0, err
	}
	l.file = f
	return true, 0, l.writePID()
}

// writePID is os.WriteFile(l.Path, pid): its close drops the lock.
func (l *Lock) writePID() error {
	w, err := l.FS.OpenFile(l.Path, env.O_WRONLY|env.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = w.Write([]byte(strconv.Itoa(l.PID) + "\n"))
	if closeErr := w.Close(); err == nil {
		err = closeErr
	}
	l.closedOther = true
	return err
}

// Unlock clears the lock and closes the file.
func (l *Lock) Unlock() error {
	if l.file == nil {
		return lockwork.ErrNotOwner
	}
	err := l.file.(env.Locker).FcntlLock(env.F_SETLK, &env.RecordLock{Type: env.F_UNLCK})
	if closeErr := l.file.Close(); err == nil {
		err = closeErr
	}
	l.file, l.closedOther = nil, false
	return err
}

// Spec is the lock's workload. Record locks die with their process, so the
// lock promises to see a dead holder at once.
func Spec() lockwork.Spec {
	return lockwork.Spec{Name: "fcntlpid", Rules: models.LockRules{DeadHolderFree: true}, DescriptorLocks: true,
		PerRun: func() lockwork.Spec {
			locks := map[*sim.Proc]*Lock{}
			return lockwork.Spec{
				Open: func(p *sim.Proc) lockwork.Lock {
					l := &Lock{FS: p.FS(), Path: "/locks/app.lock", PID: p.Table().PID}
					locks[p] = l
					return l
				},
				Hazards: []lockwork.Hazard{{Name: "close any descriptor", Caused: func(holder, _ *sim.Proc) bool {
					l := locks[holder]
					return l != nil && l.closedOther
				}}},
			}
		}}
}

// Engine is the workload as the engine the harness runs: its campaigns
// must see a record lock refused.
func Engine() *campaign.Engine {
	e := lockwork.Engine(Spec())
	e.Probes = append(e.Probes, sim.ProbeRecordLockConflict)
	return e
}
