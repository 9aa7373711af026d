package leasework

// Guard operators. An operator process runs Inspect beside the traffic;
// for a lifecycle guard Inspect lists as a blocker (a remote guard, on a
// shared volume) it checks the holder as a person would (`ps` on the
// holder's host: the ground truth), and forces the guard only when its
// holder no longer runs, with the generation Inspect showed, after a pause:
// the judgement may be stale by then. Meanwhile a process on the holder's
// host may reclaim that stale guard by itself and take the guard for its
// own call.
//
// The oracle (checkGuardHeld, every step): a process inside its
// WithCurrentLease fn holds the guard, so the guard path must hold that
// process's guard record the whole time, unless a hostile guard fault
// struck since it entered. A ForceReclaim that moves the guard of a holder
// it never judged (and puts it back later) leaves the path empty, or
// another process's, while that holder's fn runs: in that window a second
// process may take the guard and change the lease.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
	"github.com/leasekit/leasekit/workload/workkit"
)

// guardOperatorRounds is how many Inspects one guard operator makes.
const guardOperatorRounds = 12

// spawnGuardOperators starts the run's guard operators on drawn hosts of
// shared volumes (a guard is a blocker only from another host). They are
// no workers: the liveness phase does not wait for them.
func (lw *leaseWorld) spawnGuardOperators() error {
	w := lw.world
	if lw.layout != LeaseLayoutShared || len(w.Hosts()) < 2 {
		return nil
	}
	for i := 0; i < lw.opts.GuardOperators; i++ {
		h := w.Hosts()[w.Decisions().Intn(len(w.Hosts()))]
		p, err := w.Spawn(h, sim.ProcSpec{Name: fmt.Sprintf("guard-operator-%d", i), UID: leaseUID,
			Exe: "/usr/sbin/leasekit-operator"}, lw.guardOperator)
		if err != nil {
			return err
		}
		lw.guardOperators[p] = true
		lw.workers++
	}
	return nil
}

// guardOperator is a guard operator's body.
func (lw *leaseWorld) guardOperator(p *sim.Proc) {
	w := lw.world
	d := w.Decisions()
	m := lw.manager(p)
	for i := 0; i < guardOperatorRounds; i++ {
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(5))*time.Millisecond)
		projection, err := m.Inspect(context.Background())
		if err != nil {
			continue
		}
		for _, blocker := range projection.Blockers {
			if blocker.Kind != lease.BlockerGuard || blocker.Generation == "" {
				continue
			}
			lw.forceJudgedGuard(p, m, d, blocker.Generation)
			break
		}
	}
}

// forceJudgedGuard forces the guard of generation judged if its holder no
// longer runs, after a drawn pause (the judgement goes stale meanwhile).
func (lw *leaseWorld) forceJudgedGuard(p *sim.Proc, m *lease.Manager, d *sim.Decisions, judged string) {
	w := lw.world
	data, err := workkit.ReadRoot(lw.space(p).volume.Root(), leaseGuardPath)
	record, ok := lw.parseRecord(data)
	if err != nil || !ok || record.Generation != judged {
		return // gone already: nothing to check, nothing to force
	}
	writer := leaseWriter{host: record.Hostname, ns: record.PIDNamespace, pid: record.PID, startTicks: record.Start}
	if record.Boot != nil {
		writer.boot = *record.Boot
	}
	if lw.writerAlive(writer) {
		w.Probe("lease-guard-operator-holder-runs") // ps shows it: no force
		return
	}
	w.Probe("lease-guard-operator-judged-dead-holder")
	if pause := time.Duration(d.Intn(3)) * time.Millisecond; pause > 0 {
		_ = p.Clock().Sleep(context.Background(), pause)
	}
	res, err := m.ForceReclaim(context.Background(), lease.ForceRequest{Kind: lease.BlockerGuard, Generation: judged})
	w.Tracef("lease-guard-operator proc=%s force %s: %+v %v", p.Name(), judged, res, err)
	switch {
	case err != nil:
		w.Probe("lease-guard-operator-error")
	case res.Kind == lease.ForceMoved:
		w.Probe("lease-guard-operator-moved")
	case res.Kind == lease.ForceRefused:
		w.Probe("lease-guard-operator-refused")
	default:
		w.Probe("lease-guard-operator-nothing")
	}
}

// guardOperatorStallMax bounds the stall of a guard operator between its
// judgement of the guard and the move.
const guardOperatorStallMax = 40 * time.Millisecond

// stallGuardOperator stalls a guard operator (half the time, up to
// guardOperatorStallMax) just before it renames the guard: a slow
// operator, preempted between the judgement and the move, while the
// guard's host goes on.
func (f *leaseFS) stallGuardOperator(oldpath string) {
	lw := f.lw
	if oldpath != leaseGuardPath || !lw.guardOperators[f.p] {
		return
	}
	d := lw.world.Decisions()
	if !d.Chance(0.5) {
		return
	}
	lw.world.Probe("lease-guard-operator-stalled")
	_ = f.p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(int(guardOperatorStallMax/time.Millisecond)))*time.Millisecond)
}

// guardOperatorZombie reports whether a guard operator that exited is still
// a zombie whose threads run (alive to the engine, not reaped yet).
func (lw *leaseWorld) guardOperatorZombie() bool {
	for _, p := range lw.guardOperatorsExited {
		if t := p.Table(); t.State == simproc.Zombie && t.Threads > 1 {
			return true
		}
	}
	return false
}

// crashedZombieRuns reports whether a process that exited as a zombie
// whose threads run is still one (alive to the engine, its records with
// it, until the reap).
func (lw *leaseWorld) crashedZombieRuns() bool {
	for _, p := range lw.zombiesLeft {
		if t := p.Table(); t.State == simproc.Zombie && t.Threads > 1 {
			return true
		}
	}
	return false
}

// checkGuardHeld is the oracle of the guard operators: a process inside
// its WithCurrentLease fn has its guard at the guard path. It walks the
// spaces, in order, and looks each up in inside: ranging over the map after
// every step cost 1.5% of a lease campaign.
func (lw *leaseWorld) checkGuardHeld() {
	if len(lw.inside) == 0 {
		return
	}
	for _, space := range lw.spaces {
		in := lw.inside[space]
		if in == nil || !in.proc.Alive() {
			continue
		}
		names, data, versioned := space.volume.Generations()
		if versioned && in.guardSeen && in.guardSeenAt == [2]uint64{names, data} {
			continue // no file changed since the guard was found the call's
		}
		// After the generations: three probe-count lookups, and either
		// test skips the look, so the cheap one goes first.
		if lw.hostileGuardEvents() != in.guardEvents {
			continue
		}
		contents, err := workkit.ReadRoot(space.volume.Root(), leaseGuardPath)
		record, ok := lw.parseRecord(contents)
		t := in.proc.Table()
		if err == nil && ok && record.Hostname == in.proc.Host().Name() && record.PID == t.PID &&
			record.Start == strconv.FormatUint(t.StartTicks, 10) {
			in.guardSeen, in.guardSeenAt = versioned, [2]uint64{names, data}
			continue
		}
		holder := "no guard"
		if ok {
			holder = fmt.Sprintf("the guard of pid %d on %s (generation %s)", record.PID, record.Hostname, record.Generation)
		}
		lw.fail(fmt.Errorf("%s is inside WithCurrentLease (generation %s) in %s, but %s holds %s: its guard left the path",
			in.proc.Name(), in.generation, space.key, leaseGuardPath, holder), false)
	}
}
