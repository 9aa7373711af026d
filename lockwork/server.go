package lockwork

import (
	"context"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// The shared volume's server (ParamServerRestarts). On a volume shared
// between hosts, the advisory locks live in the server's lock table. When
// the server restarts, its clients are meant to reclaim their locks in a
// grace period; a client that does not (an NFSv3 client without a lock
// manager, an NFSv4 client whose reclaim failed) loses them, and nothing
// tells the process that thinks it holds one. The simulated server is a
// process on a host of its own that sleeps a drawn pause, then drops every
// advisory lock of the volume (simfs.FS.DropLocks), up to its count of
// restarts. Files, their data and the open descriptors are kept, as the
// server's stable storage keeps them.

const (
	// serverRestartsMax bounds ParamServerRestarts.
	serverRestartsMax = 8
	// restartPause and restartPausesMax: a restart comes 1 to
	// restartPausesMax pauses of restartPause after the previous one.
	restartPause     = 40 * time.Millisecond
	restartPausesMax = 16
	// hazardServerRestart names a second holder let in because a restart
	// lost the first holder's lock.
	hazardServerRestart = "server restart"
)

// lockDropper is a volume's advisory lock table, which a server restart
// loses (simfs.FS's).
type lockDropper interface {
	DropLocks()
	LocksHeld() int
}

// lockTable is the shared volume's advisory lock table.
func (r *Recorder) lockTable() lockDropper {
	if sfs := r.disk.Simfs(); sfs != nil {
		return sfs
	}
	panic("lockwork: ParamServerRestarts needs a volume with advisory locks (simfs)")
}

// startServer spawns the shared volume's server when the run has restarts.
func (r *Recorder) startServer() error {
	if r.restarts == 0 {
		return nil
	}
	r.lockTable() // a volume without advisory locks panics before the run
	w := r.world
	host := w.AddHost(sim.HostSpec{Name: "nfs-server", Volume: w.AddVolume("nfs-root")})
	server, err := w.Spawn(host, sim.ProcSpec{Name: "nfs-server"}, r.serve)
	r.server = server
	return err
}

// serve restarts the server r.restarts times, a drawn pause apart.
func (r *Recorder) serve(p *sim.Proc) {
	for range r.restarts {
		pauses := 1 + p.World().Decisions().Intn(restartPausesMax)
		if p.Clock().Sleep(context.Background(), time.Duration(pauses)*restartPause) != nil {
			return
		}
		r.restartServer()
	}
}

// restartServer drops every advisory lock of the shared volume and notes
// when, for the hazard of a later second holder.
func (r *Recorder) restartServer() {
	locks := r.lockTable()
	lost := locks.LocksHeld() > 0 && len(r.holders) > 0
	locks.DropLocks()
	r.lastRestart, r.restarted = r.world.Now(), true
	r.world.Tracef("nfs-server restarted: every advisory lock lost")
	r.world.Probe(ProbeServerRestart)
	if lost {
		r.world.Probe(ProbeLockLostAtRestart)
	}
}

// restartedSince reports whether the server restarted after t: a lock
// taken at t is gone from its table.
func (r *Recorder) restartedSince(t int64) bool {
	return r.restarted && r.lastRestart > t
}
