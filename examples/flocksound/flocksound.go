// Package flocksound is a sound flock(2) lock, written against leasekit's
// public interfaces, and its simulation workload: it opens (creating) the
// lock file, takes flock(LOCK_EX|LOCK_NB) on it, keeps the descriptor open
// while it holds the lock, and on release unlocks and closes it. It never
// unlinks the file, so every process locks the one inode, and the kernel
// drops the lock when its holder dies. The harness finds no two holders.
//
// The same lock on a volume shared between hosts (SharedEngine: NFS, whose
// server restarts and loses its lock table) is not sound: a restart drops
// the holder's lock without telling it, and the next client takes the
// lock while the first still works. The harness names that hazard
// "server restart". A lock that must survive it keeps its state in files
// the server keeps, as leasekit's lease does.
package flocksound

import (
	"errors"
	"syscall"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Lock is the flock lock at Path.
type Lock struct {
	FS   env.FS
	Path string
	file env.File
}

// TryLock opens the lock file and flocks it without waiting.
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
	if err := locker.Flock(env.LOCK_EX | env.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, 0, nil
		}
		return false, 0, err
	}
	l.file = f
	return true, 0, nil
}

// Unlock unlocks and closes the lock file (closing alone would release it).
func (l *Lock) Unlock() error {
	if l.file == nil {
		return lockwork.ErrNotOwner
	}
	err := l.file.(env.Locker).Flock(env.LOCK_UN)
	if closeErr := l.file.Close(); err == nil {
		err = closeErr
	}
	l.file = nil
	return err
}

// Spec is the lock's workload. Flock dies with its holder, so the lock
// promises to see a dead holder at once.
func Spec() lockwork.Spec {
	return lockwork.Spec{Name: "flocksound", Rules: models.LockRules{DeadHolderFree: true}, DescriptorLocks: true,
		Open: func(p *sim.Proc) lockwork.Lock { return &Lock{FS: p.FS(), Path: "/locks/app.lock"} }}
}

// Engine is the workload as the engine the harness runs.
func Engine() *campaign.Engine {
	e := lockwork.Engine(Spec())
	e.Probes = append(e.Probes, sim.ProbeFlockConflict)
	return e
}

// sharedRestarts is SharedSpec's count of server restarts per run.
const sharedRestarts = 2

// SharedSpec is the lock's workload on a volume shared between hosts whose
// server restarts twice a run, losing every advisory lock.
func SharedSpec() lockwork.Spec {
	spec := Spec()
	spec.Name, spec.ServerRestarts = "flocksound-nfs", sharedRestarts
	return spec
}

// SharedEngine is SharedSpec as the engine the harness runs: its
// campaigns must see a restart take a held lock away.
func SharedEngine() *campaign.Engine {
	e := lockwork.Engine(SharedSpec())
	e.Probes = append(e.Probes, lockwork.ProbeLockLostAtRestart)
	return e
}
