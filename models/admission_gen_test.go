package models

import (
	"fmt"
	"math/rand"

	"github.com/anishathalye/porcupine"
)

// admissionWorkload sizes a generated admission history.
type admissionWorkload struct {
	seed         int64
	clients      int
	ops          int
	crashPercent int
	// bugStaleCAS plants the lost update: a CAS that compares only the
	// claim ID, so a stale revision wins.
	bugStaleCAS bool
}

// admissionHandle is what a controller holds after a successful acquire.
type admissionHandle struct {
	claimID, revision string
	phase             AdmissionPhase
	helper            int
}

type admissionClient struct {
	lane, proc int
	busy       bool
	applied    bool
	op         porcupine.Operation
	handle     *admissionHandle
	stale      *admissionHandle // a copy kept to exercise stale CAS
}

// admissionGenerator runs controllers against a correct, atomic slot.
type admissionGenerator struct {
	rng     *rand.Rand
	work    admissionWorkload
	slot    admissionState // the reference truth, reusing the model's value type
	clients []*admissionClient
	history []porcupine.Operation
	tick    int64
	started int
	procs   int
	lanes   int
	ids     int
	bugs    int
}

func (g *admissionGenerator) stamp() int64 { g.tick++; return g.tick }

func (g *admissionGenerator) fresh(prefix string) string {
	g.ids++
	return fmt.Sprintf("%s%d", prefix, g.ids)
}

func (g *admissionGenerator) newClient() *admissionClient {
	g.procs++
	g.lanes++
	return &admissionClient{lane: g.lanes, proc: g.procs}
}

func generateAdmissionHistory(work admissionWorkload) ([]porcupine.Operation, int) {
	g := &admissionGenerator{rng: rand.New(rand.NewSource(work.seed)), work: work}
	for i := 0; i < work.clients; i++ {
		g.clients = append(g.clients, g.newClient())
	}
	for step := 0; step < work.ops*20 && (g.started < work.ops || g.anyBusy()); step++ {
		g.step()
	}
	for _, c := range g.clients {
		if c.busy {
			g.crash(c)
		}
	}
	return g.history, g.bugs
}

func (g *admissionGenerator) anyBusy() bool {
	for _, c := range g.clients {
		if c.busy {
			return true
		}
	}
	return false
}

func (g *admissionGenerator) step() {
	switch roll := g.rng.Intn(1000); {
	case roll < 3:
		g.reboot()
		return
	case roll < 20 && g.slot.helperProc != 0 && g.slot.helperAlive:
		g.history = append(g.history, event(g.stamp(), ProcessDeath{Proc: g.slot.helperProc}))
		g.slot.helperAlive = false
		return
	case roll < 40 && g.slot.slot == slotClaimed && g.slot.disposition() == dispositionIndeterminate:
		if g.rng.Intn(2) == 0 {
			g.reboot()
		} else {
			g.history = append(g.history, event(g.stamp(), AdmissionClear{}))
			g.slot = admissionState{}
		}
		return
	}
	c := g.clients[g.rng.Intn(len(g.clients))]
	switch {
	case c.busy && g.rng.Intn(100) < g.work.crashPercent:
		g.crash(c)
	case !c.busy && c.handle != nil && c.handle.phase == PhaseCleanupUnsafe && g.rng.Intn(2) == 0:
		g.crash(c) // a controller that cannot clean up exits, leaving it to a reboot
	case !c.busy:
		if g.started < g.work.ops && (c.handle != nil || g.rng.Intn(4) == 0) {
			g.start(c)
		}
	case !c.applied:
		g.apply(c)
	default:
		c.op.Return = g.stamp()
		g.history = append(g.history, c.op)
		c.busy = false
	}
}

func (g *admissionGenerator) start(c *admissionClient) {
	g.started++
	c.busy, c.applied = true, false
	c.op = porcupine.Operation{ClientId: c.lane, Input: g.nextInput(c), Call: g.stamp()}
}

func (g *admissionGenerator) nextInput(c *admissionClient) any {
	h := c.handle
	if c.stale != nil && g.rng.Intn(5) == 0 {
		// A second goroutine of the controller with an old copy of the handle.
		to := PhaseParentOwned
		switch c.stale.phase {
		case PhaseParentOwned:
			to = PhaseHelperLaunching
		case PhaseCleanupUnsafe:
			to = PhaseCleanupUnsafe
		}
		return AdmissionTransition{Proc: c.proc, ClaimID: c.stale.claimID, FromRevision: c.stale.revision,
			FromPhase: c.stale.phase, ToPhase: to}
	}
	if h == nil {
		return AdmissionAcquire{Proc: c.proc, Host: "a"}
	}
	to := PhaseParentOwned
	helper := 0
	switch roll := g.rng.Intn(10); h.phase {
	case PhaseParentOwned:
		if roll < 4 {
			return AdmissionRelease{Proc: c.proc, ClaimID: h.claimID, Revision: h.revision, Phase: h.phase}
		}
		to = PhaseHelperLaunching
		if roll == 9 {
			to = PhaseCleanupUnsafe // invalid
		}
	case PhaseHelperLaunching:
		if roll < 6 {
			to, helper = PhaseHelperActive, g.spawnHelper()
		} else if roll == 9 {
			to = PhaseCleanupUnsafe
		}
	case PhaseHelperActive:
		if roll >= 8 {
			to, helper = PhaseCleanupUnsafe, h.helper
		}
	case PhaseCleanupUnsafe:
		return AdmissionRelease{Proc: c.proc, ClaimID: h.claimID, Revision: h.revision, Phase: h.phase, HasHelper: h.helper != 0}
	}
	in := AdmissionTransition{Proc: c.proc, ClaimID: h.claimID, FromRevision: h.revision, FromPhase: h.phase, ToPhase: to, Helper: helper}
	if helper != 0 {
		in.HelperHost = "a"
	}
	return in
}

// spawnHelper numbers a new helper process; helper numbers start at
// helperProcBase so they never meet a controller's.
func (g *admissionGenerator) spawnHelper() int {
	g.ids++
	return helperProcBase + g.ids
}

const helperProcBase = 1_000_000

func (g *admissionGenerator) apply(c *admissionClient) {
	c.applied = true
	switch in := c.op.Input.(type) {
	case AdmissionAcquire:
		c.op.Output = g.applyAcquire(c, in)
	case AdmissionTransition:
		c.op.Output = g.applyTransition(c, in)
	case AdmissionRelease:
		valid := in.Phase == PhaseParentOwned && !in.HasHelper
		switch {
		case !valid:
			c.op.Output = AdmissionReleaseResult{Kind: CASInvalid}
		case g.slot.holds(in.ClaimID, in.Revision):
			g.slot = admissionState{}
			c.op.Output = AdmissionReleaseResult{Kind: CASOK}
			c.handle = nil
		default:
			c.op.Output = AdmissionReleaseResult{Kind: CASChanged}
			c.handle = nil
		}
	}
}

func (g *admissionGenerator) applyAcquire(c *admissionClient, in AdmissionAcquire) AdmissionAcquireResult {
	if g.slot.slot == slotClaimed {
		switch g.slot.disposition() {
		case dispositionActive:
			return AdmissionAcquireResult{Kind: AdmissionActive}
		case dispositionIndeterminate:
			return AdmissionAcquireResult{Kind: AdmissionIndeterminate}
		}
	}
	id, revision := g.fresh("c"), g.fresh("r")
	g.slot = g.slot.claimedBy(in, id, revision)
	c.handle = &admissionHandle{claimID: id, revision: revision, phase: PhaseParentOwned}
	return AdmissionAcquireResult{Kind: AdmissionAcquired, ClaimID: id, Revision: revision}
}

func (g *admissionGenerator) applyTransition(c *admissionClient, in AdmissionTransition) AdmissionTransitionResult {
	if !AdmissionTransitionValid(in.FromPhase, in.ToPhase, in.Helper != 0) {
		return AdmissionTransitionResult{Kind: CASInvalid}
	}
	swaps := g.slot.holds(in.ClaimID, in.FromRevision)
	if !swaps && g.work.bugStaleCAS && g.slot.slot == slotClaimed && g.slot.claimID == in.ClaimID {
		g.bugs++
		swaps = true
	}
	if !swaps {
		if c.handle != nil && c.handle.revision == in.FromRevision {
			c.stale, c.handle = c.handle, nil
		}
		return AdmissionTransitionResult{Kind: CASChanged}
	}
	revision := g.fresh("r")
	g.slot = g.slot.transitioned(in, revision)
	if c.handle != nil && c.handle.revision == in.FromRevision {
		c.stale = &admissionHandle{claimID: c.handle.claimID, revision: c.handle.revision, phase: c.handle.phase}
		c.handle = &admissionHandle{claimID: in.ClaimID, revision: revision, phase: in.ToPhase, helper: in.Helper}
	} else {
		c.handle = nil // the buggy stale CAS won: the fresh copy is now stale
	}
	return AdmissionTransitionResult{Kind: CASOK, Revision: revision}
}

func (g *admissionGenerator) crash(c *admissionClient) {
	g.endOpen(c)
	g.history = append(g.history, event(g.stamp(), ProcessDeath{Proc: c.proc}))
	g.kill(c.proc)
	g.replace(c)
}

func (g *admissionGenerator) endOpen(c *admissionClient) {
	if !c.busy {
		return
	}
	c.busy = false
	if !c.applied && g.rng.Intn(2) == 0 {
		g.apply(c)
	}
	c.op.Output = Unknown{}
	c.op.Return = g.stamp()
	g.history = append(g.history, c.op)
}

func (g *admissionGenerator) kill(proc int) {
	if g.slot.slot == slotClaimed && g.slot.ownerProc == proc {
		g.slot.ownerAlive = false
	}
}

func (g *admissionGenerator) replace(c *admissionClient) {
	for i := range g.clients {
		if g.clients[i] == c {
			g.clients[i] = g.newClient()
		}
	}
}

func (g *admissionGenerator) reboot() {
	for _, c := range g.clients {
		g.endOpen(c)
	}
	g.history = append(g.history, event(g.stamp(), Reboot{Host: "a"}))
	if g.slot.slot == slotClaimed {
		g.slot.ownerAlive, g.slot.ownerBootGone, g.slot.helperAlive = false, true, false
	}
	for _, c := range append([]*admissionClient(nil), g.clients...) {
		g.replace(c)
	}
}
