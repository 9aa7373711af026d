// Package mkdirstale is a third-party-style mkdir lock with staleness,
// written against leasekit's public interfaces, and its simulation workload.
//
// The lock is a directory: mkdir takes it, rmdir releases it, and a
// directory older than Stale (its birth time against Clock.Now) is taken to
// be left by a dead holder and broken. The hazards: the wall clock steps
// forward, or the holder is paused past Stale, and a live holder's lock is
// broken: two holders (class "invariant two holders (clock step)" or
// "(paused holder)"). leasekit's lease passes the same workload.
package mkdirstale

import (
	"errors"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/sim"
)

// Stale is the age past which a lock directory is broken.
const Stale = 300 * time.Millisecond

// Lock is the mkdir lock at Path.
type Lock struct {
	FS    env.FS
	Clock env.Clock
	Path  string
}

// TryLock makes the lock directory, breaking a stale one first.
func (l Lock) TryLock() (bool, uint64, error) {
	for range 2 {
		err := l.FS.Mkdir(l.Path, 0o700)
		if err == nil {
			return true, 0, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, 0, err
		}
		info, err := l.FS.Lstat(l.Path)
		if err != nil || !info.HasBirth || l.Clock.Now().Sub(time.Unix(0, info.BirthNs)) < Stale {
			return false, 0, nil // fresh (or just released): held
		}
		_ = l.FS.Remove(l.Path) // stale: break it and try again
	}
	return false, 0, nil
}

// Unlock removes the lock directory.
func (l Lock) Unlock() error { return l.FS.Remove(l.Path) }

// Spec is the lock's workload: a timeout lock may keep a dead holder's lock
// until it is stale, so it does not promise to free it at once.
func Spec() lockwork.Spec {
	return lockwork.Spec{Name: "mkdirstale", PausedAfter: Stale,
		Open: func(p *sim.Proc) lockwork.Lock { return Lock{FS: p.FS(), Clock: p.Clock(), Path: "/locks/app.lock"} }}
}

// Engine is the workload as the engine the harness runs.
func Engine() *campaign.Engine { return lockwork.Engine(Spec()) }
