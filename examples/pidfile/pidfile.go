// Package pidfile is a third-party-style PID-file lock, written only
// against leasekit's public interfaces (package env), and its simulation
// workload: the file holds the holder's PID, and a PID that kill(pid, 0)
// finds gone (Inspector.Inspect says absent) left a stale lock to break.
//
// The harness finds it broken: a crashed holder's PID is reused by another
// process, which keeps the lock "held" forever (class "invariant held by a
// dead holder (PID reuse)"). leasekit's lease passes the same workload.
package pidfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Lock is a PID-file lock at Path.
type Lock struct {
	FS   env.FS
	Proc env.Inspector
	Path string
}

// TryLock creates the PID file, or breaks it when its PID is gone.
func (l Lock) TryLock() (bool, uint64, error) {
	me, err := l.Proc.Current()
	if err != nil {
		return false, 0, err
	}
	for range 2 {
		f, err := l.FS.OpenFile(l.Path, env.O_CREATE|env.O_EXCL|env.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "%d\n", me.PID)
			f.Close()
			return err == nil, 0, err
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, 0, err
		}
		if pid, ok := l.owner(); !ok || l.Proc.Inspect(pid).Kind != env.InspectAbsent {
			return false, 0, nil // kill(pid, 0) succeeds (or the file is being written): held
		}
		_ = l.FS.Remove(l.Path) // stale: break it and try again
	}
	return false, 0, nil
}

// Unlock removes the PID file if it holds our PID.
func (l Lock) Unlock() error {
	me, err := l.Proc.Current()
	if err != nil {
		return err
	}
	if pid, ok := l.owner(); !ok || pid != me.PID {
		return lockwork.ErrNotOwner
	}
	return l.FS.Remove(l.Path)
}

// owner reads the PID in the file.
func (l Lock) owner() (int, bool) {
	f, err := l.FS.OpenFile(l.Path, env.O_RDONLY, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, 32))
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid, err == nil
}

// path is the PID file.
const path = "/locks/app.pid"

// Spec is the lock's workload: lockwork's clients over one PID file; a PID
// lock promises to see a dead holder at once. Findings name the holder from
// the file (Record).
func Spec() lockwork.Spec {
	return lockwork.Spec{Name: "pidfile", Rules: models.LockRules{DeadHolderFree: true},
		Open:   func(p *sim.Proc) lockwork.Lock { return Lock{FS: p.FS(), Proc: p.Inspector(), Path: path} },
		Record: func(root env.FS) (int, bool) { return Lock{FS: root, Path: path}.owner() }}
}

// Engine is the workload as the engine the harness runs.
func Engine() *campaign.Engine { return lockwork.Engine(Spec()) }
