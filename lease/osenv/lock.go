package osenv

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/env"
)

var _ env.Locker = (*File)(nil)

// Flock is flock(2). A wait interrupted by a signal is retried (at most
// eintrRetriesMax times).
func (f *File) Flock(op env.FlockOp) error {
	if f.fd < 0 {
		return pathError("flock", f.name, syscall.EBADF)
	}
	err := retryEINTR(func() error { return unix.Flock(f.fd, int(op)) })
	return pathError("flock", f.name, err)
}

// FcntlLock is fcntl(2)'s record-lock commands, with l_whence SEEK_SET.
func (f *File) FcntlLock(cmd env.LockCmd, lk *env.RecordLock) error {
	if f.fd < 0 {
		return pathError("fcntl", f.name, syscall.EBADF)
	}
	sysCmd, ok := fcntlCmd(cmd)
	if !ok {
		return pathError("fcntl", f.name, syscall.EINVAL)
	}
	typ, ok := lockTypeToSys(lk.Type)
	if !ok {
		return pathError("fcntl", f.name, syscall.EINVAL)
	}
	sys := unix.Flock_t{Type: typ, Whence: 0, Start: lk.Start, Len: lk.Len, Pid: int32(lk.PID)}
	err := retryEINTR(func() error { return unix.FcntlFlock(uintptr(f.fd), sysCmd, &sys) })
	if err != nil {
		return pathError("fcntl", f.name, err)
	}
	if cmd.Get() {
		lk.Type = lockTypeFromSys(sys.Type)
		if lk.Type != env.F_UNLCK {
			lk.Start, lk.Len, lk.PID = sys.Start, sys.Len, int(sys.Pid)
		}
	}
	return nil
}

func lockTypeToSys(t env.LockType) (int16, bool) {
	switch t {
	case env.F_RDLCK:
		return unix.F_RDLCK, true
	case env.F_WRLCK:
		return unix.F_WRLCK, true
	case env.F_UNLCK:
		return unix.F_UNLCK, true
	}
	return 0, false
}

func lockTypeFromSys(t int16) env.LockType {
	switch t {
	case unix.F_RDLCK:
		return env.F_RDLCK
	case unix.F_WRLCK:
		return env.F_WRLCK
	}
	return env.F_UNLCK
}
