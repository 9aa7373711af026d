package osenv

import "github.com/leasekit/leasekit/lease"

// NewInspector returns an Inspector that fails closed: darwin has no /proc
// to read start time, executable inode and PID namespace from, and a guess
// could let an engine reclaim a live owner's lease.
func NewInspector() lease.Inspector {
	return unsupportedInspector{reason: errInspectionUnsupportedDarwin}
}
