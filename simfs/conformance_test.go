package simfs_test

import (
	"testing"

	"github.com/leasekit/leasekit/internal/fsconformance"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/simfs"
)

// counter is a deterministic Chooser and clock for tests.
type counter struct{ n int }

func (c *counter) Intn(n int) int { c.n++; return c.n % n }

func newSim(t *testing.T) (lease.FS, string) {
	var now int64 = 1_700_000_000_000_000_000
	f := simfs.New(simfs.Options{Dev: 42, Now: func() int64 { now += 1000; return now }, Rand: &counter{}})
	f.MkdirAll("/work", 0o755, 0)
	view := f.View(0)
	f.SetPID(view, 4242) // F_GETLK names a POSIX lock's holder by PID
	return view, "/work"
}

func TestConformanceSimfs(t *testing.T) { fsconformance.Run(t, newSim) }

func TestConformanceOS(t *testing.T) {
	fsconformance.Run(t, func(t *testing.T) (lease.FS, string) { return osenv.NewFS(), t.TempDir() })
}
