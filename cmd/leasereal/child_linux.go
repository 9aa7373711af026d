package main

import (
	"errors"

	"golang.org/x/sys/unix"
)

// childExited reports whether the child pid (of this process, not yet
// reaped) has exited, without reaping it (waitid WNOWAIT): its PID stays
// reserved for the Wait that follows.
func childExited(pid int) (bool, error) {
	for range 8 {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, err
		}
		// With WNOHANG and no exit to report, waitid leaves the (zeroed)
		// siginfo as it was; an exit fills in SIGCHLD.
		return info.Signo == int32(unix.SIGCHLD), nil
	}
	return false, unix.EINTR
}
