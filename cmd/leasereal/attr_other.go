//go:build !linux

package main

import "syscall"

// childAttributes: without PR_SET_PDEATHSIG the child can outlive a killed
// leasereal (docs/LEASEREAL.md, gaps).
func childAttributes() *syscall.SysProcAttr { return nil }
