package leasework

// The workload's processes and the engine calls they record: workers,
// impostors, and acquire, release, inspect and fenced work as history
// operations checked against the ground truth.

import (
	"context"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/internal/modelmap"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// held is a lease a process knows about: its own, or one it learned.
type held struct {
	generation, session string
	epoch               uint64
}

// worker acquires, works under the lease, releases, and presents stale
// generations.
func (lw *leaseWorld) worker(p *sim.Proc) {
	m := lw.manager(p)
	d := lw.world.Decisions()
	var mine *held
	var stale []held
	for i := 0; i < lw.opts.OpsPerProc; i++ {
		choice := d.Intn(100)
		switch {
		case mine != nil && choice < 6 && len(lw.roots.names) > 1:
			lw.crossRoot(p, *mine)
		case mine != nil && choice < 55:
			lw.withCurrent(p, m, *mine)
		case mine != nil && choice < 85:
			if lw.release(p, m, *mine) {
				stale = append(stale, *mine)
				mine = nil
			}
		case mine == nil && choice < 60:
			if got, ok := lw.acquire(p, m); ok {
				mine = &got
			}
		case len(stale) > 0 && choice < 80:
			lw.withCurrent(p, m, stale[d.Intn(len(stale))])
		case len(stale) > 0 && choice < 90:
			lw.release(p, m, stale[d.Intn(len(stale))])
		default:
			lw.inspect(p, m)
		}
		lw.pause(p, d)
	}
	if mine != nil && d.Intn(2) == 0 {
		lw.release(p, m, *mine) // else exit holding it: the lease must be reclaimed
	}
}

// impostor learns generations from Inspect and presents them.
func (lw *leaseWorld) impostor(p *sim.Proc) {
	m := lw.manager(p)
	d := lw.world.Decisions()
	for i := 0; i < lw.opts.OpsPerProc; i++ {
		if learned, ok := lw.inspect(p, m); ok {
			switch d.Intn(3) {
			case 0:
				lw.withCurrent(p, m, learned)
			case 1:
				lw.release(p, m, learned)
			}
		}
		lw.pause(p, d)
	}
}

func (lw *leaseWorld) pause(p *sim.Proc, d *sim.Decisions) {
	if wait := time.Duration(d.Intn(4)) * time.Millisecond; wait > 0 {
		_ = p.Clock().Sleep(context.Background(), wait)
	}
}

func (lw *leaseWorld) space(p *sim.Proc) *leaseSpace { return lw.spaceOf[p.Host()] }

func (lw *leaseWorld) acquire(p *sim.Proc, m *lease.Manager) (held, bool) {
	res, session, err := lw.acquireRecorded(p, m)
	if err != nil || res.Kind != lease.Acquired {
		return held{}, false
	}
	h := held{generation: res.Owner.Generation, session: session, epoch: res.Owner.Epoch}
	lw.impostors.acquired(p, h)
	return h, true
}

// acquireRecorded runs Acquire with a fresh session nonce, records it, and
// checks its epoch and reclaims against the ground truth.
func (lw *leaseWorld) acquireRecorded(p *sim.Proc, m *lease.Manager) (lease.AcquireResult, string, error) {
	space := lw.space(p)
	lw.sessions++
	session := fmt.Sprintf("s%d-p%d", lw.sessions, p.ID())
	lw.sessionProc[session] = p
	in := models.LeaseAcquire{Namespace: space.key, Proc: p.ProcessID(), Host: p.Host().Name(), Session: session, Root: lw.rootOf(m)}
	epochFloor := space.epochMaxReturned
	swapsBefore := lw.hostileSwaps()
	guardEvents := lw.hostileGuardEvents()
	callAt := lw.world.Now()
	op := p.Begin("acquire", in)
	lw.impostors.begin(p, space)
	acquired := lw.noteThreadAcquire(p)
	call := p.BeginCall()
	res, err := m.Acquire(call.Context(), lease.AcquireRequest{SessionID: session, SessionFile: "/sessions/" + session})
	lw.left.After(call, workkit.Outcome{Op: "acquire", Err: err, Failed: err != nil || res.Kind != lease.Acquired,
		Products: res.Kind != lease.Acquired, Session: session}) // an Acquired result with an error reports its lease
	acquired()
	lw.judgeStranded(p, call, res, err)
	lw.probeUnpublishedCreate(err)
	lw.judgeEngineSignal(p, "acquire", err, guardEvents)
	lw.settleReclaims(p, true, err, sim.ExitFinished)
	lw.noteReclaims(p, space, res.Reclaimed)
	lw.impostors.end(p, space, res.Reclaimed, err)
	if err != nil {
		p.End(op, nil)
		lw.world.Probe("lease-acquire-error")
		lw.world.Tracef("lease-error proc=%s acquire: %v", p.Name(), err)
		return res, session, err
	}
	out, known := modelmap.LeaseAcquire(res)
	if !known && lw.excusedRefusal(space, res.Refusal, callAt) {
		p.End(op, nil) // unsafe-namespace: the model has no state for it
		return res, session, nil
	}
	if !known {
		p.End(op, nil)
		lw.fail(fmt.Errorf("%s: acquire refused %s: %s", p.Name(), res.Refusal.Reason, res.Refusal.Diagnostic), true)
		return res, session, nil
	}
	switch res.Kind {
	case lease.Acquired:
		lw.noteEpoch(p, space, res.Owner, epochFloor)
		lw.acquirer[res.Owner.Generation] = p
		lw.roots.byGeneration[res.Owner.Generation] = lw.rootOf(m)
		lw.world.Probe("lease-acquired")
		if len(res.Reclaimed) > 0 {
			lw.world.Probe("lease-acquired-after-reclaim")
		}
	case lease.Held:
		lw.world.Probe("lease-held")
		lw.noteThreadHeld(p, res.Owner)
		if holder := lw.acquirer[res.Owner.Generation]; holder != nil && holder.Stopped() {
			lw.world.Probe("lease-held-by-paused-holder") // stopped, alive: never stale
		}
	case lease.Refused:
		lw.world.Probe("lease-refused-" + string(res.Refusal.Reason))
		if lw.hostileSwaps() != swapsBefore {
			lw.world.Probe("lease-rename-race-refused") // a swap struck during the call
		}
		if res.Refusal.Human != lease.HumanNone {
			lw.world.Probe("lease-refused-human-" + string(res.Refusal.Human))
		}
		lw.noteForeignRefusal(p, res.Refusal)
	}
	p.End(op, out)
	return res, session, nil
}

// noteEpoch checks that an acquired epoch is new and larger than every
// epoch returned before the acquire was called.
func (lw *leaseWorld) noteEpoch(p *sim.Proc, space *leaseSpace, owner lease.Owner, floor uint64) {
	if previous, seen := space.epochs[owner.Epoch]; seen {
		lw.fail(fmt.Errorf("epoch %d granted twice in %s: to %s and to %s (generation %s)", owner.Epoch, space.key,
			previous, p.Name(), owner.Generation), false)
	}
	if owner.Epoch <= floor {
		lw.fail(fmt.Errorf("%s acquired epoch %d in %s, not above epoch %d returned before its call", p.Name(),
			owner.Epoch, space.key, floor), false)
	}
	space.epochs[owner.Epoch] = p.Name()
	space.epochMaxReturned = max(space.epochMaxReturned, owner.Epoch)
}

func (lw *leaseWorld) noteReclaims(p *sim.Proc, space *leaseSpace, reclaimed []lease.Reclaim) {
	for _, r := range reclaimed {
		lw.world.Probe("lease-reclaimed")
		lw.world.Probe("lease-reclaimed-" + r.Reason)
		check := leaseReclaimCheck{space: space, path: r.QuarantinePath, generation: r.Owner.Generation, proc: p.Name()}
		lw.checks = append(lw.checks, check)
		lw.allReclaims = append(lw.allReclaims, check)
	}
}

func (lw *leaseWorld) release(p *sim.Proc, m *lease.Manager, h held) bool {
	space := lw.space(p)
	in := models.LeaseRelease{Namespace: space.key, Proc: p.ProcessID(), Generation: h.generation, Session: h.session,
		Root: lw.rootOf(m)}
	guardEvents := lw.hostileGuardEvents()
	callAt := lw.world.Now()
	op := p.Begin("release", in)
	call := p.BeginCall()
	res, err := m.Release(call.Context(), h.generation)
	lw.left.After(call, workkit.Outcome{Op: "release", Err: err, Failed: err != nil || res.Kind != lease.Released})
	lw.judgeEngineSignal(p, "release", err, guardEvents)
	if err != nil && res.Kind != lease.Released {
		p.End(op, nil)
		lw.world.Probe("lease-release-error")
		return false
	}
	out, known := modelmap.LeaseRelease(res)
	if !known && lw.excusedRefusal(space, res.Refusal, callAt) {
		p.End(op, nil) // unsafe-namespace: the model has no state for it
		return false
	}
	if !known {
		p.End(op, nil)
		lw.fail(fmt.Errorf("%s: release refused %s: %s", p.Name(), res.Refusal.Reason, res.Refusal.Diagnostic), true)
		return false
	}
	lw.noteTakeover(p, h, res)
	switch res.Kind {
	case lease.Released:
		lw.impostors.released(p, h.generation)
		lw.noteRootCall(m, h.generation, "release", "released")
		lw.impostors.noteCall(p, "release", "released")
		lw.resumedCall(p, h.generation, true, callAt)
		lw.world.Probe("lease-released")
		if lw.acquirer[h.generation] != p {
			lw.world.Probe("lease-released-by-capability")
		}
	case lease.NotOwner:
		if lw.rootOf(m) == lw.roots.byGeneration[h.generation] {
			lw.impostors.released(p, h.generation)
		}
		lw.noteRootCall(m, h.generation, "release", "not-owner")
		lw.impostors.noteCall(p, "release", "not-owner")
		lw.resumedCall(p, h.generation, false, callAt)
		lw.world.Probe("lease-release-not-owner")
	case lease.ReleaseRefused:
		lw.world.Probe("lease-release-refused")
	}
	p.End(op, out)
	return res.Kind == lease.Released || res.Kind == lease.NotOwner
}

// inspect records an Inspect; it returns the owner it saw, if any.
func (lw *leaseWorld) inspect(p *sim.Proc, m *lease.Manager) (held, bool) {
	space := lw.space(p)
	op := p.Begin("inspect", models.LeaseInspect{Namespace: space.key, Proc: p.ProcessID()})
	call := p.BeginCall()
	callAt := lw.world.Now()
	lw.beginSlowInspect(p)
	projection, err := m.Inspect(call.Context())
	lw.endSlowInspect(p)
	lw.left.After(call, workkit.Outcome{Op: "inspect", Err: err, Failed: err != nil})
	if err != nil {
		lw.noteSymlinkError(space, err, callAt)
		p.End(op, nil)
		return held{}, false
	}
	out := modelmap.LeaseInspect(projection)
	if projection.Kind == lease.Corrupt {
		lw.world.Probe("lease-inspect-corrupt")
	}
	p.End(op, out)
	if projection.Kind != lease.Owned {
		return held{}, false
	}
	o := projection.Owner
	return held{generation: o.Generation, session: o.SessionID, epoch: o.Epoch}, true
}

// withCurrent runs the fenced work: a write of the protected file with the
// owner's epoch and generation, and a sleep while holding the guard.
func (lw *leaseWorld) withCurrent(p *sim.Proc, m *lease.Manager, h held) {
	space := lw.space(p)
	in := models.LeaseWithCurrent{Namespace: space.key, Proc: p.ProcessID(), Generation: h.generation, Session: h.session,
		Root: lw.rootOf(m)}
	callAt := lw.world.Now()
	op := p.Begin("with-current", in)
	entered := false
	guardEvents := lw.hostileGuardEvents()
	call := p.BeginCall()
	err := m.WithCurrentLease(call.Context(), h.generation, func(ctx context.Context, owner lease.Owner) error {
		entered = true
		lw.checkEnterRoot(p, m, owner.Generation)
		lw.enter(p, space, owner, h, guardEvents)
		defer lw.leave(p, space)
		return lw.fencedWork(p, owner)
	})
	lw.left.After(call, workkit.Outcome{Op: "with-current", Err: err, Failed: err != nil})
	lw.judgeEngineSignal(p, "with-current", err, guardEvents)
	out, known := modelmap.LeaseFence(entered, err)
	if !known {
		lw.noteSymlinkError(space, err, callAt)
		p.End(op, nil)
		return
	}
	lw.noteRootCall(m, h.generation, "fence", fenceName(out.Kind))
	lw.impostors.noteCall(p, "fence", fenceName(out.Kind))
	switch out.Kind {
	case models.FenceOK:
		lw.resumedCall(p, h.generation, true, callAt)
		lw.world.Probe("lease-fence-ok")
	case models.FenceFenced:
		lw.resumedCall(p, h.generation, false, callAt)
		lw.world.Probe("lease-fenced")
		if lw.acquirer[h.generation] != p {
			lw.world.Probe("lease-impostor-fenced")
		}
	case models.FenceBusy:
		lw.world.Probe("lease-fence-busy")
	case models.FenceUnverifiable:
		lw.world.Probe("lease-fence-unverifiable")
	}
	p.End(op, out)
}

// enter checks the fencing ground truth as a process enters fn.
// guardEvents is hostileGuardEvents at the call's start.
func (lw *leaseWorld) enter(p *sim.Proc, space *leaseSpace, owner lease.Owner, h held, guardEvents int) {
	if other := lw.inside[space]; other != nil {
		lw.fail(fmt.Errorf("two processes inside WithCurrentLease in %s: %s (generation %s, epoch %d) and %s "+
			"(generation %s, epoch %d)", space.key, other.proc.Name(), other.generation, other.epoch, p.Name(),
			owner.Generation, owner.Epoch), false)
	}
	if owner.Generation != h.generation {
		lw.fail(fmt.Errorf("%s entered WithCurrentLease(%s) with owner generation %s", p.Name(), h.generation,
			owner.Generation), false)
	}
	if acquirer := lw.acquirer[owner.Generation]; acquirer != p {
		name := "an unknown acquire"
		if acquirer != nil {
			name = acquirer.Name()
		}
		lw.fail(fmt.Errorf("%s entered WithCurrentLease with generation %s acquired by %s", p.Name(),
			owner.Generation, name), false)
	}
	if owner.Epoch < space.lastFencedEpoch {
		lw.fail(fmt.Errorf("%s entered WithCurrentLease with epoch %d after epoch %d had entered", p.Name(),
			owner.Epoch, space.lastFencedEpoch), false)
	}
	space.lastFencedEpoch = max(space.lastFencedEpoch, owner.Epoch)
	lw.inside[space] = &leaseInside{proc: p, generation: owner.Generation, epoch: owner.Epoch, guardEvents: guardEvents}
}

func (lw *leaseWorld) leave(p *sim.Proc, space *leaseSpace) {
	if in := lw.inside[space]; in != nil && in.proc == p {
		delete(lw.inside, space)
		if !p.Alive() {
			lw.world.Probe("lease-died-inside-fence") // a crash unwinds fn
		}
	}
}

func (lw *leaseWorld) fencedWork(p *sim.Proc, owner lease.Owner) error {
	f, err := p.FS().OpenFile(leaseProtected, lease.O_CREATE|lease.O_WRONLY|lease.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "epoch=%d generation=%s\n", owner.Epoch, owner.Generation)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if sleepErr := p.Clock().Sleep(context.Background(), lw.opts.FenceWork); err == nil {
		err = sleepErr
	}
	return err
}

// fenceName names a fence outcome in probe names.
func fenceName(kind models.LeaseFenceKind) string {
	switch kind {
	case models.FenceOK:
		return "ok"
	case models.FenceFenced:
		return "fenced"
	case models.FenceBusy:
		return "busy"
	}
	return "unverifiable"
}
