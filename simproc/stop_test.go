package simproc

import (
	"testing"

	"github.com/leasekit/leasekit/internal/procfs"
	"github.com/leasekit/leasekit/lease"
)

// TestStoppedProcessIsLive: a stopped process shows state T in stat and
// status, and the real parser reads it as live and running (not a zombie),
// with its identity unchanged; Continue brings back S.
func TestStoppedProcessIsLive(t *testing.T) {
	h, _ := testHost(t, 100, 1)
	p := spawn(t, h, SpawnSpec{UID: 1000})
	other := spawn(t, h, SpawnSpec{UID: 1000})
	probes := probeCounter(h)
	before := h.Inspector(other).Inspect(p.PID)
	h.Stop(p)
	parsed, err := procfs.ParseStat(p.PID, h.renderStat(nil, p))
	noError(t, err)
	equal(t, byte('T'), parsed.State, "stat state while stopped")
	contains(t, string(renderStatus(nil, p)), "State:\tT (stopped)\n")
	during := h.Inspector(other).Inspect(p.PID)
	equal(t, lease.InspectLive, during.Kind, "kind while stopped")
	equal(t, lease.StateRunning, during.State, "state while stopped")
	equal(t, before.Identity, during.Identity, "identity while stopped")
	equal(t, 1, probes[ProbeStopped], "stopped probe")
	h.Continue(p)
	parsed, err = procfs.ParseStat(p.PID, h.renderStat(nil, p))
	noError(t, err)
	equal(t, byte('S'), parsed.State, "stat state after continue")
	h.Stop(p)
	h.Exit(p) // SIGKILL of a stopped process
	equal(t, false, p.Stopped, "stopped after exit")
	equal(t, lease.InspectAbsent, h.Inspector(other).Inspect(p.PID).Kind, "kind after exit")
}
