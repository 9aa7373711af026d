package osenv

import (
	"os"

	"github.com/leasekit/leasekit/lease"
)

// NewInspector returns the Inspector of this host's process table (/proc),
// with os.Hostname as the host's name.
func NewInspector() lease.Inspector {
	return NewInspectorAt("/proc", os.Hostname)
}
