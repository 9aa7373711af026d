package sim

import (
	"errors"
	"io/fs"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/simfs"
)

// Advisory locks: a process's files implement env.Locker when its volume's
// do (simfs). A request that waits (flock without LOCK_NB, F_SETLKW,
// F_OFD_SETLKW) and meets a conflict blocks the process: it sleeps, not
// runnable, and tries again every lockPoll of simulated time, each try a
// scheduling point, until the lock is free or lockWaitMax has passed; then
// the call fails with EINTR, as a wait a signal (alarm(2)) interrupts.

// Probes of the advisory locks.
const (
	// ProbeFlockConflict: a flock request met another description's lock.
	ProbeFlockConflict = "flock-conflict"
	// ProbeRecordLockConflict: an fcntl record-lock request met a conflict.
	ProbeRecordLockConflict = "record-lock-conflict"
	// ProbeLockWaited: a waiting lock request blocked, then got the lock.
	ProbeLockWaited = "lock-waited"
)

const (
	lockPoll    = 20 * time.Millisecond
	lockWaitMax = 30 * time.Second
)

// noteLockPID tells the volume the PID F_GETLK reports for p's locks, and
// the clock (its host's wall clock) that stamps the modification times p
// causes.
func (p *Proc) noteLockPID() {
	if sfs := p.host.volume.simFS; sfs != nil {
		sfs.SetPID(p.view, p.table.PID)
		h := p.host
		sfs.SetClock(p.view, func() int64 { return wallEpoch + h.world.now + h.wallOffset })
	}
}

var _ env.Locker = (*procFile)(nil)

// Flock is flock(2).
func (f *procFile) Flock(op env.FlockOp) error {
	return f.lockCall(opFlock, op&env.LOCK_NB == 0 && op != env.LOCK_UN, ProbeFlockConflict,
		func(l env.Locker) error { return l.Flock(op) })
}

// FcntlLock is fcntl(2)'s record-lock commands.
func (f *procFile) FcntlLock(cmd env.LockCmd, lk *env.RecordLock) error {
	in := *lk
	return f.lockCall(opFcntlLock, cmd.Waits(), ProbeRecordLockConflict, func(l env.Locker) error {
		*lk = in
		return l.FcntlLock(cmd, lk)
	})
}

// lockCall runs call at a scheduling point, and again while a waiting
// request is blocked.
func (f *procFile) lockCall(kind opKind, waits bool, conflictProbe string, call func(env.Locker) error) error {
	p := f.p
	locker, ok := f.inner.(env.Locker)
	if !ok {
		p.point(kind, f.inner.Name())
		p.result = uint64(syscall.ENOLCK)
		return &fs.PathError{Op: "flock", Path: f.inner.Name(), Err: syscall.ENOLCK}
	}
	for waited := time.Duration(0); ; waited += lockPoll {
		p.point(kind, f.inner.Name())
		err := call(locker)
		p.result = resultCode(err)
		if !errors.Is(err, syscall.EAGAIN) {
			if err == nil && waited > 0 {
				p.world.Probe(ProbeLockWaited)
			}
			return err
		}
		if waited == 0 {
			p.world.Probe(conflictProbe)
		}
		if !waits {
			return err
		}
		if waited >= lockWaitMax {
			if sfs := p.host.volume.simFS; sfs != nil {
				sfs.CancelWait(p.view)
			}
			p.result = uint64(syscall.EINTR)
			return &fs.PathError{Op: "flock", Path: f.inner.Name(), Err: syscall.EINTR}
		}
		p.sleeping = true
		p.wakeAt = p.world.now + int64(lockPoll)
		p.point(opWake, "")
	}
}

// OpenedInode is the identity of the inode a process's file has open, for a
// checker between steps (no scheduling point, no fault): false when f is
// not a simulated process's file of a simfs volume.
func OpenedInode(f env.File) (env.FileIdentity, bool) {
	pf, ok := f.(*procFile)
	if !ok {
		return env.FileIdentity{}, false
	}
	return simfs.FileIdentity(pf.inner)
}
