package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/leasecli"
)

// reapsMax bounds waitDescendants: far above any process count.
const reapsMax = 1 << 22

// leadCommandTree prepares leasereal to cover its command's whole process
// tree: it leads a process group (setpgid(0, 0) when it does not lead one
// already; a shell with job control has made it the leader of its job),
// so the command and every descendant that stays in the group carry the
// group number, which is leasereal's PID, the PID the lease records; and it
// becomes a child subreaper, so every orphaned descendant is reparented to
// it and waitDescendants can hold the lease until the last one exits.
func leadCommandTree() error {
	if unix.Getpgrp() != os.Getpid() {
		if err := unix.Setpgid(0, 0); err != nil {
			return os.NewSyscallError("setpgid", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err)
	}
	return nil
}

// waitDescendants reaps every child leasereal has left (descendants of
// the command orphaned to it, the subreaper) until none remains: the
// lease is held until the whole tree the command started has exited,
// wherever it moved (setsid and double forks included).
func waitDescendants() error {
	for range reapsMax {
		var status unix.WaitStatus
		_, err := unix.Wait4(-1, &status, 0, nil)
		switch {
		case errors.Is(err, unix.ECHILD):
			return nil
		case errors.Is(err, unix.EINTR), err == nil:
			continue
		default:
			return os.NewSyscallError("wait4", err)
		}
	}
	return errors.New("leasereal: more descendants than reapsMax")
}

// commandGroups reads this host's process groups for leasecli.
func commandGroups() leasecli.Groups { return osenv.ProcessGroups{} }
