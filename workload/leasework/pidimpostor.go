package leasework

// PID-reuse impostors at every fenced call, and the races
// over one stale record (the hazards "a double stale reclaim by two
// reclaimers of one record" and "a release after a takeover").
//
// When a worker that knows a lease (it acquired it and has not released it)
// crashes, in some runs a new process is spawned on its PID at once
// (sim.ProcSpec.PID): on the same host, in half of those with the dead
// worker's executable too, and after a power loss across a reboot, but
// never with the dead worker's start tick and executable together (that is
// the owner's exact twin, which no identity rule can tell; across a reboot
// the liveness phase's boot-time twin of the dead owner would be the
// impostor's). It serves the dead worker's root and presents
// the dead worker's generation at WithCurrentLease, which must fence it
// (the fenced-exclusive ground truth and the model: only the acquiring
// process may enter), and at Release, where the generation is a capability
// (the original implementation's rule: whoever presents it may release; the model allows it).
//
// The reclaim race: every acquire in flight is remembered with its call
// time. When a reclaim of generation G is observed (checkMove, between
// steps), every other acquire in the same namespace that was called after
// G's owner had died set out against the same stale record; when it
// answers without reporting G, it lost the race as it must
// (lease-double-stale-reclaim). Two answered acquires that both report G
// are a finding: one stale record was reclaimed twice.

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// pidImpostorsMax bounds the PID-reuse impostors of one run.
const pidImpostorsMax = 4

type pidImpostors struct {
	lw      *leaseWorld
	enabled bool
	// known is the lease each live worker acquired and still knows.
	known   map[*sim.Proc]held
	spawned int
	// inflight are the acquires not answered yet.
	inflight []raceCall
	// reported maps namespace key + generation to the acquire that
	// reported reclaiming it (answered without error).
	reported map[string]*sim.Proc
}

// raceCall is an acquire in flight; racedFor is the stale generation that
// another acquire reclaimed after this one was called.
type raceCall struct {
	proc     *sim.Proc
	space    *leaseSpace
	callAt   int64
	racedFor string
}

func (pi *pidImpostors) start(lw *leaseWorld) {
	pi.lw = lw
	pi.known = make(map[*sim.Proc]held)
	pi.reported = make(map[string]*sim.Proc)
	pi.enabled = lw.opts.PIDImpostors == 0 && lw.world.Decisions().Intn(2) == 0
}

// acquired remembers the lease p acquired; released forgets it.
func (pi *pidImpostors) acquired(p *sim.Proc, h held) { pi.known[p] = h }

func (pi *pidImpostors) released(p *sim.Proc, generation string) {
	if h, ok := pi.known[p]; ok && h.generation == generation {
		delete(pi.known, p)
	}
}

// exited spawns an impostor on the PID of a crashed worker that knew a
// lease, in runs that draw them.
func (pi *pidImpostors) exited(dead *sim.Proc, reason sim.ExitReason) {
	lw := pi.lw
	h, knew := pi.known[dead]
	delete(pi.known, dead)
	pi.forgetCall(dead)
	if !pi.enabled || !knew || reason == sim.ExitFinished || pi.spawned >= pidImpostorsMax || lw.liveness != nil {
		return
	}
	host, table := dead.Host(), dead.Table()
	if host.Table().Lookup(table.NS, table.PID) != nil {
		return // a zombie still holds the PID
	}
	d := lw.world.Decisions()
	pi.spawned++
	name := fmt.Sprintf("impostor-pid-%d", pi.spawned)
	exe := fmt.Sprintf("/usr/bin/leasekit-pid-impostor-%d", pi.spawned)
	// Never the dead worker's start tick with its executable, in any
	// boot: in this boot that is its exact twin, and across a reboot the
	// liveness phase's boot-time twin of the dead worker would be this
	// impostor's exact twin.
	sameExe := d.Intn(2) == 0 && host.Table().TicksNow() != table.StartTicks
	if sameExe {
		exe = table.ExePath
	}
	lw.roots.byName[name] = lw.rootFor(dead.Name())
	p, err := lw.world.Spawn(host, sim.ProcSpec{Name: name, UID: leaseUID, Exe: exe, PID: table.PID, Namespace: table.NS},
		func(p *sim.Proc) { pi.body(p, h) })
	if err != nil {
		return
	}
	lw.deathByProc[p.Table()] = p
	lw.workers++
	lw.world.Probe("lease-pid-impostor")
	if sameExe {
		lw.world.Probe("lease-pid-impostor-same-exe")
	}
	if p.Table().Boot != table.Boot {
		lw.world.Probe("lease-pid-impostor-across-boot")
	}
}

// body presents the dead owner's lease: first the fence (while the dead
// owner's record is most likely still current), then a mix of fences,
// releases and inspections.
func (pi *pidImpostors) body(p *sim.Proc, h held) {
	lw := pi.lw
	m := lw.manager(p)
	d := lw.world.Decisions()
	lw.withCurrent(p, m, h)
	for i := 0; i < 1+lw.opts.OpsPerProc/2; i++ {
		switch d.Intn(3) {
		case 0:
			lw.withCurrent(p, m, h)
		case 1:
			lw.release(p, m, h)
		default:
			lw.inspect(p, m)
		}
		lw.pause(p, d)
	}
}

// isPIDImpostor reports whether p is a PID-reuse impostor.
func isPIDImpostor(p *sim.Proc) bool { return strings.HasPrefix(p.Name(), "impostor-pid-") }

// noteCall fires the probes of a PID-reuse impostor's fenced call.
func (pi *pidImpostors) noteCall(p *sim.Proc, call, kind string) {
	if isPIDImpostor(p) {
		pi.lw.world.Probe("lease-pid-impostor-" + call + "-" + kind)
	}
}

// begin and end bracket an acquire for the reclaim race.
func (pi *pidImpostors) begin(p *sim.Proc, space *leaseSpace) {
	pi.forgetCall(p)
	pi.inflight = append(pi.inflight, raceCall{proc: p, space: space, callAt: pi.lw.world.Now()})
}

func (pi *pidImpostors) end(p *sim.Proc, space *leaseSpace, reclaimed []lease.Reclaim, err error) {
	var call raceCall
	for i, c := range pi.inflight {
		if c.proc == p {
			call = c
			pi.inflight = append(pi.inflight[:i], pi.inflight[i+1:]...)
			break
		}
	}
	reportedRaced := false
	for _, r := range reclaimed {
		reportedRaced = reportedRaced || r.Owner.Generation == call.racedFor
		if err != nil {
			continue
		}
		key := space.key + " " + r.Owner.Generation
		if other := pi.reported[key]; other != nil {
			pi.lw.fail(fmt.Errorf("the stale record of generation %s in %s was reclaimed twice: by %s and by %s",
				r.Owner.Generation, space.key, other.Name(), p.Name()), false)
		}
		pi.reported[key] = p
	}
	if call.racedFor != "" && !reportedRaced {
		pi.lw.world.Probe("lease-double-stale-reclaim")
	}
}

func (pi *pidImpostors) forgetCall(p *sim.Proc) {
	for i, c := range pi.inflight {
		if c.proc == p {
			pi.inflight = append(pi.inflight[:i], pi.inflight[i+1:]...)
			return
		}
	}
}

// reclaimed marks the acquires racing reclaimer for the same stale record:
// called after others in space whose owner died at diedAt.
func (pi *pidImpostors) reclaimed(space *leaseSpace, reclaimer *sim.Proc, generation string, diedAt int64) {
	for i := range pi.inflight {
		c := &pi.inflight[i]
		if c.space == space && c.proc != reclaimer && c.racedFor == "" && c.callAt > diedAt {
			c.racedFor = generation
		}
	}
}

// noteTakeover fires the takeover probe of a Release that got NotOwner
// with another process's lease: a former owner's (or its PID impostor's)
// release arriving after the record was taken over.
func (lw *leaseWorld) noteTakeover(p *sim.Proc, h held, res lease.ReleaseResult) {
	if res.Kind != lease.NotOwner || res.Owner == nil || res.Owner.Generation == h.generation {
		return
	}
	former := lw.acquirer[h.generation]
	if former == nil || lw.acquirer[res.Owner.Generation] == former {
		return
	}
	switch {
	case former == p:
		lw.world.Probe("lease-release-after-takeover")
	case isPIDImpostor(p):
		lw.world.Probe("lease-pid-impostor-release-after-takeover")
	}
}
