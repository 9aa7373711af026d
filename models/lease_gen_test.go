package models

import (
	"fmt"
	"math/rand"

	"github.com/anishathalye/porcupine"
)

// leaseWorkload sizes a generated lease history.
type leaseWorkload struct {
	seed         int64
	clients      int // lanes running at once
	ops          int // engine operations to start
	crashPercent int // chance per step that a busy client crashes
	// bugReclaimLive plants the two-owners bug: an acquire that finds a
	// live owner takes the lease anyway.
	bugReclaimLive bool
}

// leaseReference is a correct, atomic lease used to generate histories:
// each operation takes effect at one random instant inside its interval.
type leaseReference struct {
	owned      bool
	corrupt    bool
	owner      int // proc
	ownerHost  string
	session    string
	generation string
	epoch      int64
	alive      bool
	epochNext  int64
}

type leaseClient struct {
	lane, proc int
	host       string
	busy       bool
	applied    bool
	op         porcupine.Operation
	// What the client holds, to present to release and WithCurrentLease.
	heldGeneration, heldSession string
}

type leaseGenerator struct {
	rng     *rand.Rand
	work    leaseWorkload
	ref     leaseReference
	clients []*leaseClient
	history []porcupine.Operation
	tick    int64
	started int
	procs   int
	lanes   int
	nonces  int
	bugs    int
}

func (g *leaseGenerator) stamp() int64 {
	g.tick++
	return g.tick
}

func (g *leaseGenerator) newClient(host string) *leaseClient {
	g.procs++
	c := &leaseClient{lane: g.lanes, proc: g.procs, host: host}
	g.lanes++
	return c
}

// generateLeaseHistory runs work against leaseReference with a seeded
// random schedule, crashes, reboots, PID reuse and corruption.
func generateLeaseHistory(work leaseWorkload) []porcupine.Operation {
	history, _ := generateLeaseHistoryCountingBugs(work)
	return history
}

func generateLeaseHistoryCountingBugs(work leaseWorkload) ([]porcupine.Operation, int) {
	g := &leaseGenerator{rng: rand.New(rand.NewSource(work.seed)), work: work}
	g.ref.epochNext = 1
	for i := 0; i < work.clients; i++ {
		g.clients = append(g.clients, g.newClient(g.pickHost()))
	}
	stepsMax := work.ops * 20
	for step := 0; step < stepsMax && (g.started < work.ops || g.anyBusy()); step++ {
		g.step()
	}
	for _, c := range g.clients {
		if c.busy {
			g.crash(c)
		}
	}
	return g.history, g.bugs
}

func (g *leaseGenerator) pickHost() string {
	if g.rng.Intn(6) == 0 {
		return "b"
	}
	return "a"
}

func (g *leaseGenerator) anyBusy() bool {
	for _, c := range g.clients {
		if c.busy {
			return true
		}
	}
	return false
}

func (g *leaseGenerator) step() {
	switch roll := g.rng.Intn(1000); {
	case roll < 3:
		g.reboot()
		return
	case roll < 4:
		g.history = append(g.history, event(g.stamp(), LeaseCorruption{Namespace: ns}))
		g.ref.corrupt = true
		return
	case roll < 60 && g.ref.corrupt:
		g.history = append(g.history, event(g.stamp(), LeaseClear{Namespace: ns}))
		g.ref.corrupt, g.ref.owned = false, false
		return
	}
	c := g.clients[g.rng.Intn(len(g.clients))]
	switch {
	case c.busy && g.rng.Intn(100) < g.work.crashPercent:
		g.crash(c)
	case !c.busy:
		if g.started < g.work.ops {
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

func (g *leaseGenerator) start(c *leaseClient) {
	g.started++
	var input any
	roll := g.rng.Intn(10)
	switch {
	case c.heldGeneration != "" && roll < 4:
		input = LeaseWithCurrent{Namespace: ns, Proc: c.proc, Generation: c.heldGeneration, Session: c.heldSession}
	case c.heldGeneration != "" && roll < 9:
		input = LeaseRelease{Namespace: ns, Proc: c.proc, Generation: c.heldGeneration, Session: c.heldSession}
	case c.heldGeneration == "" && roll < 6:
		g.nonces++
		input = LeaseAcquire{Namespace: ns, Proc: c.proc, Host: c.host, Session: fmt.Sprintf("s%d", g.nonces)}
	default:
		input = LeaseInspect{Namespace: ns, Proc: c.proc}
	}
	c.busy, c.applied = true, false
	c.op = porcupine.Operation{ClientId: c.lane, Input: input, Call: g.stamp()}
}

func (g *leaseGenerator) apply(c *leaseClient) {
	c.applied = true
	ref := &g.ref
	switch in := c.op.Input.(type) {
	case LeaseAcquire:
		c.op.Output = g.applyAcquire(c, in)
	case LeaseRelease:
		switch {
		case ref.corrupt:
			c.op.Output = LeaseReleaseResult{Kind: LeaseReleaseRefused, Reason: RefusalCorruptOwner}
		case ref.owned && ref.generation == in.Generation:
			ref.owned = false
			c.op.Output = LeaseReleaseResult{Kind: LeaseReleased}
		default:
			c.op.Output = LeaseReleaseResult{Kind: LeaseNotOwner}
		}
		c.heldGeneration = ""
	case LeaseWithCurrent:
		if !ref.corrupt && ref.owned && ref.generation == in.Generation && ref.owner == c.proc {
			c.op.Output = LeaseFenceResult{Kind: FenceOK}
		} else {
			c.op.Output = LeaseFenceResult{Kind: FenceFenced}
		}
	case LeaseInspect:
		switch {
		case ref.corrupt:
			c.op.Output = LeaseInspectResult{Kind: LeaseCorrupt}
		case ref.owned:
			c.op.Output = LeaseInspectResult{Kind: LeaseOwned, Generation: ref.generation, Session: ref.session, Epoch: ref.epoch}
		default:
			c.op.Output = LeaseInspectResult{Kind: LeaseEmpty}
		}
	}
}

func (g *leaseGenerator) applyAcquire(c *leaseClient, in LeaseAcquire) LeaseAcquireResult {
	ref := &g.ref
	if g.rng.Intn(20) == 0 {
		return LeaseAcquireResult{Kind: LeaseAcquireRefused, Reason: RefusalLifecycleBusy}
	}
	if ref.corrupt {
		return LeaseAcquireResult{Kind: LeaseAcquireRefused, Reason: RefusalCorruptOwner}
	}
	var reclaimed []string
	if ref.owned {
		switch {
		case ref.ownerHost != c.host:
			return LeaseAcquireResult{Kind: LeaseAcquireRefused, Reason: RefusalRemoteOwner}
		case ref.alive && g.work.bugReclaimLive && g.rng.Intn(4) == 0:
			g.bugs++
			reclaimed = []string{ref.generation}
		case ref.alive:
			return LeaseAcquireResult{Kind: LeaseHeld, Generation: ref.generation, Session: ref.session, Epoch: ref.epoch}
		default:
			reclaimed = []string{ref.generation}
		}
	}
	*ref = leaseReference{
		owned: true, owner: c.proc, ownerHost: c.host, session: in.Session,
		generation: fmt.Sprintf("g-%s", in.Session), epoch: ref.epochNext, alive: true,
		epochNext: ref.epochNext + 1,
	}
	c.heldGeneration, c.heldSession = ref.generation, ref.session
	return LeaseAcquireResult{Kind: LeaseAcquired, Generation: ref.generation, Epoch: ref.epoch, Reclaimed: reclaimed}
}

// crash kills c: an open operation gets an unknown outcome (a crashed
// inspect is dropped), then a ProcessDeath event, then a new incarnation.
func (g *leaseGenerator) crash(c *leaseClient) {
	g.endOpen(c)
	g.history = append(g.history, event(g.stamp(), ProcessDeath{Proc: c.proc}))
	g.kill(c.proc)
	g.replace(c)
}

func (g *leaseGenerator) endOpen(c *leaseClient) {
	if !c.busy {
		return
	}
	c.busy = false
	if _, readOnly := c.op.Input.(LeaseInspect); readOnly {
		return
	}
	if !c.applied && g.rng.Intn(2) == 0 {
		g.apply(c) // took effect just before the crash
	}
	c.op.Output = Unknown{}
	c.op.Return = g.stamp()
	g.history = append(g.history, c.op)
}

func (g *leaseGenerator) kill(proc int) {
	if g.ref.owned && g.ref.owner == proc {
		g.ref.alive = false
	}
}

func (g *leaseGenerator) replace(c *leaseClient) {
	for i := range g.clients {
		if g.clients[i] == c {
			g.clients[i] = g.newClient(c.host)
		}
	}
	if g.rng.Intn(2) == 0 {
		g.history = append(g.history, event(g.stamp(), PIDReuse{Host: c.host, PID: c.proc}))
	}
}

func (g *leaseGenerator) reboot() {
	var victims []*leaseClient
	for _, c := range g.clients {
		if c.host == "a" {
			g.endOpen(c)
			victims = append(victims, c)
		}
	}
	g.history = append(g.history, event(g.stamp(), Reboot{Host: "a"}))
	if g.ref.owned && g.ref.ownerHost == "a" {
		g.ref.alive = false
	}
	for _, c := range victims {
		g.replace(c)
	}
}
