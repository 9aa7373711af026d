// Package mtimelock is a third-party-style heartbeat lock kept in a lock
// file's modification time, ported from code that calls os (each call is
// its os counterpart on env.FS or in package envos), and its simulation
// workload.
//
// The lock: O_CREATE|O_EXCL creates the lock file with the holder's token
// in it; while it holds, the holder touches the file (Chtimes to its
// clock's now) every Beat; a contender that finds the file's modification
// time older than Stale by its own clock takes the holder for dead,
// removes the file and creates it again. Unlock removes the file if it
// still holds the holder's token.
//
// The hazards: the wall clock steps forward (the contender's now races
// ahead of the last touch), or the holder is paused (SIGSTOP, a debugger)
// past Stale and stops touching; either way a live holder's lock is broken
// and two processes hold it (class "invariant two holders (clock step)"
// or "(paused holder)"). leasekit's lease passes the same workload.
package mtimelock

import (
	"errors"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/envos"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/sim"
)

const (
	// Beat is the pause between a holder's touches.
	Beat = 50 * time.Millisecond
	// Stale is the age past which a lock file's holder is taken for dead.
	Stale = 4 * Beat
)

// Lock is the heartbeat lock at Path.
type Lock struct {
	FS    env.FS
	Clock env.Clock
	IDs   env.IDSource
	Path  string
	// token is what this holder wrote into the lock file; "" when it does
	// not hold.
	token string
}

// TryLock creates the lock file, breaking a stale one first.
func (l *Lock) TryLock() (bool, uint64, error) {
	for range 2 {
		token := l.IDs.NewID()
		f, err := l.FS.OpenFile(l.Path, env.O_WRONLY|env.O_CREATE|env.O_EXCL, 0o644)
		if err == nil {
			return l.record(f, token)
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, 0, err
		}
		info, err := l.FS.Stat(l.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil || l.Clock.Now().Sub(info.ModTime()) < Stale {
			return false, 0, nil // fresh: held
		}
		_ = l.FS.Remove(l.Path) // stale: its holder is taken for dead
	}
	return false, 0, nil
}

// record writes the token into the lock file this call created.
func (l *Lock) record(f env.File, token string) (bool, uint64, error) {
	_, err := f.Write([]byte(token))
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		_ = l.FS.Remove(l.Path)
		return false, 0, err
	}
	l.token = token
	return true, 0, nil
}

// Heartbeat touches the lock file: os.Chtimes(path, now, now).
func (l *Lock) Heartbeat() error {
	if l.token == "" {
		return lockwork.ErrNotOwner
	}
	now := l.Clock.Now()
	return envos.Chtimes(l.FS, l.Path, now, now)
}

// HeartbeatEvery is Beat.
func (l *Lock) HeartbeatEvery() time.Duration { return Beat }

// Unlock removes the lock file if it still holds this holder's token.
func (l *Lock) Unlock() error {
	token := l.token
	if token == "" {
		return lockwork.ErrNotOwner
	}
	data, err := envos.ReadFile(l.FS, l.Path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && string(data) != token) {
		l.token = ""
		return lockwork.ErrNotOwner
	}
	if err != nil {
		return err
	}
	l.token = ""
	return l.FS.Remove(l.Path)
}

// Spec is the lock's workload: a heartbeat lock keeps a dead holder's lock
// until it is stale, so it does not promise to free it at once.
func Spec() lockwork.Spec {
	return lockwork.Spec{Name: "mtimelock", PausedAfter: Stale,
		Open: func(p *sim.Proc) lockwork.Lock {
			return &Lock{FS: p.FS(), Clock: p.Clock(), IDs: p.IDs(), Path: "/locks/app.lock"}
		}}
}

// Engine is the workload as the engine the harness runs: its campaigns
// must see the holders touch the lock file, also on a host whose clock a
// step moved.
func Engine() *campaign.Engine {
	e := lockwork.Engine(Spec())
	e.Probes = append(e.Probes, sim.ProbeChtimes, sim.ProbeMtimeSteppedClock)
	return e
}
