// Package flockunlink is a third-party-style flock lock that unlinks its
// lock file on release, written against leasekit's public interfaces, and
// its simulation workload.
//
// The lock opens (creating) the lock file, takes flock(LOCK_EX|LOCK_NB) on
// it through env.Locker, and on release unlinks the file before unlocking.
// The hazard: a process that opened the file before the unlink locks the
// unlinked inode, while a later process creates a new file at the path and
// locks that one: two holders on a split inode (class "invariant two
// holders (split inode)"). leasekit's lease passes the same workload.
//
// flock is the simulated kernel's own (simfs): per open file description,
// released when the description closes or its process dies.
package flockunlink

import (
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Lock is the flock-then-unlink lock at Path.
type Lock struct {
	FS   env.FS
	Path string
	file env.File
}

// TryLock opens the lock file and flocks it.
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
		if isWouldBlock(err) {
			return false, 0, nil
		}
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
	l.file.(env.Locker).Flock(env.LOCK_UN)
	l.file.Close()
	l.file = nil
	return err
}

// Spec is the lock's workload. Flock dies with its holder, so the lock
// promises to see a dead holder at once. The split-inode hazard compares
// the inodes the two holders' descriptors lock.
func Spec() lockwork.Spec {
	return lockwork.Spec{Name: "flockunlink", Rules: models.LockRules{DeadHolderFree: true}, DescriptorLocks: true,
		PerRun: func() lockwork.Spec {
			locks := map[*sim.Proc]*Lock{}
			return lockwork.Spec{
				Open: func(p *sim.Proc) lockwork.Lock {
					l := &Lock{FS: p.FS(), Path: "/locks/app.lock"}
					locks[p] = l
					return l
				},
				Hazards: []lockwork.Hazard{{Name: "split inode", Caused: func(holder, newcomer *sim.Proc) bool {
					return splitInode(locks[holder], locks[newcomer])
				}}},
			}
		}}
}

// splitInode reports whether two holders lock different inodes.
func splitInode(a, b *Lock) bool {
	if a == nil || b == nil || a.file == nil || b.file == nil {
		return false
	}
	idA, okA := sim.OpenedInode(a.file)
	idB, okB := sim.OpenedInode(b.file)
	return okA && okB && idA != idB
}

// Engine is the workload as the engine the harness runs: its campaigns
// must see flock refuse a second description.
func Engine() *campaign.Engine {
	e := lockwork.Engine(Spec())
	e.Probes = append(e.Probes, sim.ProbeFlockConflict)
	return e
}
