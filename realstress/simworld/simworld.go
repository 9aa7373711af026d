// Package simworld is the simulated side of realstress's differential
// scenarios: a realstress.World over simfs and a simproc host, which the
// scenario tests run beside the real processes of realstress.RealWorld. It
// is test support: only tests import it, so the shipped cmd/leasereal,
// which links realstress, links no simulator (internal/archtest checks).
package simworld

import (
	"fmt"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/realstress"
	"github.com/leasekit/leasekit/simfs"
	"github.com/leasekit/leasekit/simproc"
)

// World runs a scenario against simfs and a simproc host, calling the
// engine directly, one step at a time (no scheduler: a scenario has no
// concurrency to explore, only the sequence).
type World struct {
	fs        *simfs.FS
	host      *simproc.Host
	clock     *leasetest.Clock
	ids       *leasetest.IDs
	namespace string
	actors    map[string]*simActor
}

type simActor struct {
	proc    *simproc.Proc
	view    lease.FS
	session string
}

// Executable is the path every simulated actor runs.
const Executable = "/usr/bin/leasereal"

// New returns a world with an empty simulated disk and host.
func New() *World {
	clock := leasetest.NewClock()
	fs := simfs.New(simfs.Options{})
	fs.MkdirAll("/scenario", 0o755, 0)
	host := simproc.NewHost(simproc.HostConfig{Name: "sim-host", BootID: "boot-1",
		SinceBoot: clock.Monotonic})
	return &World{fs: fs, host: host, clock: clock, ids: leasetest.NewIDs(), namespace: "/scenario/ns",
		actors: map[string]*simActor{}}
}

// Start spawns a simulated process for actor.
func (w *World) Start(actor, session string) error {
	proc, err := w.host.Spawn(simproc.SpawnSpec{Exe: Executable})
	if err != nil {
		return err
	}
	w.actors[actor] = &simActor{proc: proc, view: w.fs.View(0), session: session}
	w.clock.Advance(time.Second) // distinct start ticks, as real processes have
	return nil
}

// Do runs request with a Manager over actor's view of the disk and process table.
func (w *World) Do(actor, request string) (realstress.Outcome, error) {
	a := w.actors[actor]
	if a == nil || a.proc.State != simproc.Running {
		return realstress.Outcome{}, fmt.Errorf("sim: actor %s is not running", actor)
	}
	manager, err := lease.NewManager(lease.Config{Namespace: w.namespace, RootID: realstress.RootID, FS: a.view,
		Clock: w.clock, Inspector: w.host.Inspector(a.proc), IDs: w.ids})
	if err != nil {
		return realstress.Outcome{}, err
	}
	return realstress.DoScenarioRequest(manager, a.session, request), nil
}

// Kill ends actor's process: gone (reaped) or a one-thread zombie.
func (w *World) Kill(actor string, reap bool) error {
	a := w.actors[actor]
	if a == nil {
		return fmt.Errorf("sim: no actor %s", actor)
	}
	w.fs.CloseAll(a.view)
	if reap {
		w.host.Exit(a.proc)
	} else {
		w.host.ExitZombie(a.proc, 1)
	}
	return nil
}

// Reap removes actor's zombie.
func (w *World) Reap(actor string) error {
	a := w.actors[actor]
	if a == nil || a.proc.State != simproc.Zombie {
		return fmt.Errorf("sim: actor %s is not a zombie", actor)
	}
	w.host.Reap(a.proc)
	return nil
}

// Upgrade replaces the simulated executable (a new inode at the path).
func (w *World) Upgrade() error {
	w.host.UpgradeExe(Executable)
	return nil
}

// Close does nothing: simulated processes hold no resources.
func (w *World) Close() {}
