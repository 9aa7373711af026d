// Package flockunlink is a third-party-style flock lock that unlinks its
// lock file on release, written against leasekit's public interfaces, and
// its simulation workload.
//
// The lock opens (creating) the lock file, takes flock(LOCK_EX|LOCK_NB) on
// it, and on release unlinks the file before unlocking. The hazard: a
// process that opened the file before the unlink locks the unlinked inode,
// while a later process creates a new file at the path and locks that one:
// two holders on a split inode (class "invariant two holders (split
// inode)"). leasekit's lease passes the same workload.
//
// simfs has no flock, so the workload gives the lock a Flocker: flock as the
// kernel keeps it, a lock per inode (env.FileIdentity) released when its
// holder unlocks or dies.
package flockunlink

import (
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Flocker is flock(2) on an open file, non-blocking.
type Flocker interface {
	// TryLock is flock(fd, LOCK_EX|LOCK_NB): false when another process
	// holds the inode's lock.
	TryLock(f env.File) (bool, error)
	// Unlock is flock(fd, LOCK_UN).
	Unlock(f env.File)
}

// Lock is the flock-then-unlink lock at Path.
type Lock struct {
	FS    env.FS
	Flock Flocker
	Path  string
	file  env.File
}

// TryLock opens the lock file and flocks it.
func (l *Lock) TryLock() (bool, uint64, error) {
	f, err := l.FS.OpenFile(l.Path, env.O_CREATE|env.O_RDWR, 0o644)
	if err != nil {
		return false, 0, err
	}
	ok, err := l.Flock.TryLock(f)
	if !ok || err != nil {
		f.Close()
		return false, 0, err
	}
	l.file = f
	return true, 0, nil
}

// Unlock unlinks the lock file, then unlocks and closes it.
func (l *Lock) Unlock() error {
	if l.file == nil {
		return lockwork.ErrNotOwner
	}
	err := l.FS.Remove(l.Path)
	l.Flock.Unlock(l.file)
	l.file.Close()
	l.file = nil
	return err
}

// Spec is the lock's workload. Flock dies with its holder, so the lock
// promises to see a dead holder at once. Each run has its own flock table.
func Spec() lockwork.Spec {
	return lockwork.Spec{Name: "flockunlink", Rules: models.LockRules{DeadHolderFree: true},
		PerRun: func() lockwork.Spec {
			table := newFlockTable()
			return lockwork.Spec{
				Open: func(p *sim.Proc) lockwork.Lock {
					return &Lock{FS: p.FS(), Flock: &procFlock{table: table, p: p}, Path: "/locks/app.lock"}
				},
				Hazards: []lockwork.Hazard{{Name: "split inode", Caused: table.split}},
			}
		}}
}

// Engine is the workload as the engine the harness runs.
func Engine() *campaign.Engine { return lockwork.Engine(Spec()) }
