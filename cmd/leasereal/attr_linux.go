package main

import "syscall"

// childAttributes make the kernel SIGKILL the child when leasereal dies:
// the lease's recorded owner is leasereal, so once it is dead the lease is
// reclaimable, and the command must not outlive it unfenced.
func childAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
