// Package nightlylockfile is a port of a published Go lock library,
// github.com/nightlyone/lockfile (v1, its TryLock, GetOwner and Unlock),
// onto leasekit's os-shaped layer (package envos) over package env, and its
// simulation workload. The algorithm is kept call for call; only the os
// calls change:
//
//	ioutil.TempFile(dir, "")        envos.CreateTemp(fs, ids, dir, "")
//	os.Getpid()                     envos.Getpid(inspector)
//	os.Link, os.Lstat, os.Remove    fs.Link, fs.Lstat, fs.Remove
//	os.SameFile                     envos.SameFile
//	ioutil.ReadFile                 envos.ReadFile
//	process.Signal(Signal(0))       envos.Kill0(inspector, pid)
//
// The lock is a PID file: TryLock writes its PID to a temp file and links
// it to the lock's name; when the name is taken, a PID that kill(pid, 0)
// answers ESRCH (or a file with no valid PID) is stale, so TryLock removes
// the file and tries again.
//
// What the harness finds (nightlylockfile_test.go, 500 seeds):
//   - "invariant two holders": two processes judge the same dead holder's
//     file stale; the first removes it and links its own, and the second
//     then removes that fresh file (Remove after a judgement, with nothing
//     checking the file is still the one judged) and links its own. Both
//     hold the lock. The library's issue 14 reports a race of the same
//     removal with Unlock (TryLock failing with "no such file or
//     directory"); the two holders are not reported there.
//   - "invariant held by a dead holder (zombie)": kill(pid, 0) succeeds for
//     any process with the PID, here the crashed holder's unreaped zombie,
//     and the lock stays held with no holder. That is the mechanism of the
//     library's issue 39 ("deadlock caused by pid reusing"), where the PID
//     was taken by another process; the PID-reuse case itself is rarer
//     here, as the two-holder race ends most runs first (examples/pidfile
//     shows it on a lock without that race).
//   - "history: not linearizable": a TryLock whose outcome was unknown (a
//     filesystem error after its link) is retried, finds its own PID in
//     the file, removes it and takes the lock anew; lockwork's stance
//     (package lockwork, "Unknown outcomes") counts that as a second
//     acquire once another process was answered held meanwhile.
//
// leasekit's lease passes the same workload.
package nightlylockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/envos"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// The library's errors, with its texts.
var (
	//lint:ignore ST1005 the library's own error text
	ErrBusy          = errors.New("Locked by other process")
	ErrNotExist      = errors.New("Lockfile created, but doesn't exist")
	ErrInvalidPid    = errors.New("Lockfile contains invalid pid for system")
	ErrDeadOwner     = errors.New("Lockfile contains pid of process not existent on this system anymore")
	ErrRogueDeletion = errors.New("Lockfile owned by me has been removed unexpectedly")
)

// tryLockDepthMax bounds TryLock's recursion, which the library leaves
// unbounded (it recurses after every stale removal); the workload's
// processes never come near it.
const tryLockDepthMax = 64

// Lockfile is the lock at Path, with the environment the port runs on.
type Lockfile struct {
	FS        env.FS
	Inspector env.Inspector
	IDs       env.IDSource
	Path      string
}

// GetOwner returns the PID in the lock file when that process runs
// (kill(pid, 0) succeeds, or answers anything but ESRCH), ErrDeadOwner
// when it does not, ErrInvalidPid for a file without a valid PID.
func (l Lockfile) GetOwner() (int, error) {
	content, err := envos.ReadFile(l.FS, l.Path)
	if err != nil {
		return 0, err
	}
	pid, err := scanPidLine(content)
	if err != nil {
		return 0, err
	}
	if err := envos.Kill0(l.Inspector, pid); errors.Is(err, syscall.ESRCH) {
		return 0, ErrDeadOwner
	}
	return pid, nil
}

// TryLock takes the lock, or says why not (ErrBusy: another process holds it).
func (l Lockfile) TryLock() error { return l.tryLock(0) }

func (l Lockfile) tryLock(depth int) error {
	if depth > tryLockDepthMax {
		return ErrBusy
	}
	tmplock, err := envos.CreateTemp(l.FS, l.IDs, filepath.Dir(l.Path), "")
	if err != nil {
		return err
	}
	defer func() {
		_ = tmplock.Close()
		_ = l.FS.Remove(tmplock.Name())
	}()
	me, err := envos.Getpid(l.Inspector)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(tmplock, "%d\n", me); err != nil {
		return err
	}
	_ = l.FS.Link(tmplock.Name(), l.Path) // ignoring it is part of the algorithm
	fiTmp, err := l.FS.Lstat(tmplock.Name())
	if err != nil {
		return err
	}
	fiLock, err := l.FS.Lstat(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotExist
	}
	if err != nil {
		return err
	}
	if envos.SameFile(fiTmp, fiLock) {
		return nil
	}
	pid, err := l.GetOwner()
	switch {
	case err == nil && pid != me:
		return ErrBusy
	case err != nil && !errors.Is(err, ErrDeadOwner) && !errors.Is(err, ErrInvalidPid):
		return err
	}
	// The stale (or our own) file: remove it and try again.
	if err := l.FS.Remove(l.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return l.tryLock(depth + 1)
}

// Unlock removes the lock file when it holds our PID.
func (l Lockfile) Unlock() error {
	pid, err := l.GetOwner()
	switch {
	case errors.Is(err, ErrInvalidPid), errors.Is(err, ErrDeadOwner), errors.Is(err, fs.ErrNotExist):
		return ErrRogueDeletion
	case err != nil:
		return err
	}
	me, err := envos.Getpid(l.Inspector)
	if err != nil {
		return err
	}
	if pid != me {
		return ErrRogueDeletion
	}
	return l.FS.Remove(l.Path)
}

// scanPidLine is the library's: a positive decimal PID and a newline.
func scanPidLine(content []byte) (int, error) {
	var pid int
	if _, err := fmt.Sscanln(string(content), &pid); err != nil || pid <= 0 {
		return 0, ErrInvalidPid
	}
	return pid, nil
}

// lockAdapter is the library's API as lockwork's Lock: ErrBusy (and the
// library's other "retry" answers) is "not taken".
type lockAdapter struct{ Lockfile }

func (a lockAdapter) TryLock() (bool, uint64, error) {
	err := a.Lockfile.TryLock()
	switch {
	case err == nil:
		return true, 0, nil
	case errors.Is(err, ErrBusy), errors.Is(err, ErrNotExist):
		return false, 0, nil
	}
	return false, 0, err
}

func (a lockAdapter) Unlock() error {
	if err := a.Lockfile.Unlock(); errors.Is(err, ErrRogueDeletion) {
		return lockwork.ErrNotOwner
	} else {
		return err
	}
}

// path is the lock file.
const path = "/locks/app.pid"

// Spec is the lock's workload: lockwork's clients over one lock file; a
// PID lock promises to see a dead holder at once. Findings name the holder
// from the file (Record).
func Spec() lockwork.Spec {
	return lockwork.Spec{Name: "nightlylockfile", Doc: "port of github.com/nightlyone/lockfile (PID file, link, kill 0)",
		Rules: models.LockRules{DeadHolderFree: true},
		Open: func(p *sim.Proc) lockwork.Lock {
			return lockAdapter{Lockfile{FS: p.FS(), Inspector: p.Inspector(), IDs: p.IDs(), Path: path}}
		},
		Record: func(root env.FS) (int, bool) {
			content, err := envos.ReadFile(root, path)
			if err != nil {
				return 0, false
			}
			pid, err := scanPidLine(content)
			return pid, err == nil
		}}
}

// Engine is the workload as the engine the harness runs.
func Engine() *campaign.Engine { return lockwork.Engine(Spec()) }
