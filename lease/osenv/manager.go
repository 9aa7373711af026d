package osenv

import (
	"fmt"
	"path/filepath"

	"github.com/leasekit/leasekit/lease"
)

// NewManager is the one-line real-OS lease: a lease.Manager of the
// namespace directory (made absolute and clean; created on first use,
// with missing parents) for rootID, on this host's filesystem, clocks,
// process table and random IDs, with the default guard wait. For other
// settings build a lease.Config with NewFS, NewClock, NewInspector and
// NewIDSource.
//
// The namespace may lie below symlinked ancestors, as the user named it
// (/var/lock/job.lease with /var/lock -> /run/lock): the engine follows
// those and never its own entries, so the namespace itself must be a real
// directory (docs/FORMAT-lease.md, "Symlinks").
func NewManager(namespace, rootID string) (*lease.Manager, error) {
	if namespace == "" {
		return nil, &lease.ConfigError{Problem: "namespace is required"}
	}
	absolute, err := filepath.Abs(namespace)
	if err != nil {
		return nil, fmt.Errorf("osenv: namespace %q: %w", namespace, err)
	}
	return lease.NewManager(lease.Config{
		Namespace: absolute,
		RootID:    rootID,
		FS:        NewFS(),
		Clock:     NewClock(),
		Inspector: NewInspector(),
		IDs:       NewIDSource(),
	})
}
