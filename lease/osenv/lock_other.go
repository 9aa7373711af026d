//go:build !linux

package osenv

import (
	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/env"
)

// fcntlCmd maps a record-lock command to the platform's. Open file
// description locks are Linux's: elsewhere they fail with EINVAL.
func fcntlCmd(cmd env.LockCmd) (int, bool) {
	switch cmd {
	case env.F_GETLK:
		return unix.F_GETLK, true
	case env.F_SETLK:
		return unix.F_SETLK, true
	case env.F_SETLKW:
		return unix.F_SETLKW, true
	}
	return 0, false
}
