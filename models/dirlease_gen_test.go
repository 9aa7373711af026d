package models

import (
	"fmt"
	"math/rand"
	"sort"

	"github.com/anishathalye/porcupine"
)

// dirWorkload sizes a generated directory lease history.
type dirWorkload struct {
	seed         int64
	clients      int
	ops          int
	crashPercent int
	// bugRecoverLive plants the bug: recovery ignores a live owner.
	bugRecoverLive bool
}

type dirRefClaim struct {
	path, id       string
	role           DirRole
	phase          DirPhase
	owner, child   int
	ownerAlive     bool
	childAlive     bool
	recoverAfterMs int64
	dir            dirAt
}

type dirClientClaim struct {
	path, id string
	role     DirRole
	phase    DirPhase
	child    int
}

type dirClient struct {
	lane, proc int
	busy       bool
	applied    bool
	op         porcupine.Operation
	claim      *dirClientClaim
}

// dirGenerator runs owners and recoverers against a correct, atomic store.
type dirGenerator struct {
	rng     *rand.Rand
	work    dirWorkload
	claims  map[string]*dirRefClaim
	clients []*dirClient
	history []porcupine.Operation
	tick    int64
	started int
	procs   int
	lanes   int
	ids     int
	bugs    int
}

func (g *dirGenerator) stamp() int64 { g.tick++; return g.tick }

func (g *dirGenerator) newClient() *dirClient {
	g.procs++
	g.lanes++
	return &dirClient{lane: g.lanes, proc: g.procs}
}

func generateDirHistory(work dirWorkload) ([]porcupine.Operation, int) {
	g := &dirGenerator{rng: rand.New(rand.NewSource(work.seed)), work: work, claims: map[string]*dirRefClaim{}}
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

func (g *dirGenerator) anyBusy() bool {
	for _, c := range g.clients {
		if c.busy {
			return true
		}
	}
	return false
}

// somePath returns a claimed path, in a seeded order, or "".
func (g *dirGenerator) somePath() string {
	paths := make([]string, 0, len(g.claims))
	for path := range g.claims {
		paths = append(paths, path)
	}
	if len(paths) == 0 {
		return ""
	}
	sort.Strings(paths)
	return paths[g.rng.Intn(len(paths))]
}

func (g *dirGenerator) step() {
	switch roll := g.rng.Intn(1000); {
	case roll < 2:
		g.reboot()
		return
	case roll < 20:
		g.environment()
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

// environment fires one event on a claimed path or a child.
func (g *dirGenerator) environment() {
	path := g.somePath()
	if path == "" {
		return
	}
	rc := g.claims[path]
	switch roll := g.rng.Intn(10); {
	case roll < 5 && rc.child != 0 && rc.childAlive:
		g.history = append(g.history, event(g.stamp(), ProcessDeath{Proc: rc.child}))
		g.killProc(rc.child)
	case roll < 6 && rc.dir == dirPresent:
		g.history = append(g.history, event(g.stamp(), DirSwap{Path: path}))
		rc.dir = dirForeign
	case roll < 8 && rc.dir == dirForeign:
		g.history = append(g.history, event(g.stamp(), DirRemove{Path: path}))
		rc.dir = dirAbsent
	case roll < 9 && rc.dir == dirPresent && rc.role == RoleBundleStage:
		g.history = append(g.history, event(g.stamp(), DirPublish{Path: path}))
		rc.dir = dirPublished
	}
}

func (g *dirGenerator) start(c *dirClient) {
	g.started++
	c.busy, c.applied = true, false
	c.op = porcupine.Operation{ClientId: c.lane, Input: g.nextInput(c), Call: g.stamp()}
}

func (g *dirGenerator) nextInput(c *dirClient) any {
	roll := g.rng.Intn(10)
	if roll < 2 {
		return DirRecover{Proc: c.proc, Host: "a", NowMs: g.tick}
	}
	k := c.claim
	if k == nil {
		if roll < 3 {
			if path := g.somePath(); path != "" {
				return DirUse{Proc: c.proc, Path: path}
			}
		}
		g.ids++
		role := RoleRawWorking
		if g.rng.Intn(4) == 0 {
			role = RoleBundleStage
		}
		return DirCreate{Proc: c.proc, Host: "a", Path: fmt.Sprintf("/w%d", g.ids), Role: role, RecoverAfterMs: g.tick + int64(g.rng.Intn(200))}
	}
	if roll < 3 {
		return DirUse{Proc: c.proc, Path: k.path}
	}
	release := DirRelease{Proc: c.proc, Path: k.path, ClaimID: k.id, Phase: k.phase, Child: k.child}
	if k.role == RoleBundleStage || roll >= 8 {
		return release
	}
	update := DirUpdate{Proc: c.proc, Path: k.path, ClaimID: k.id, Role: k.role, FromPhase: k.phase, FromChild: k.child}
	switch k.phase {
	case DirPreparing, DirSettled:
		update.ToPhase = DirLaunching
	case DirLaunching:
		update.ToPhase = DirRunning
		if roll < 5 {
			update.ToPhase = DirSettled
		} else {
			g.ids++
			update.Child, update.ChildHost = helperProcBase+g.ids, "a"
		}
	case DirRunning:
		update.ToPhase = DirSettled
	}
	return update
}

func (g *dirGenerator) apply(c *dirClient) {
	c.applied = true
	switch in := c.op.Input.(type) {
	case DirCreate:
		g.ids++
		id := fmt.Sprintf("c%d", g.ids)
		g.claims[in.Path] = &dirRefClaim{path: in.Path, id: id, role: in.Role, phase: DirPreparing, owner: c.proc,
			ownerAlive: true, recoverAfterMs: in.RecoverAfterMs}
		c.claim = &dirClientClaim{path: in.Path, id: id, role: in.Role, phase: DirPreparing}
		c.op.Output = DirCreateResult{ClaimID: id}
	case DirUpdate:
		rc := g.claims[in.Path]
		if rc == nil || rc.id != in.ClaimID || rc.phase != in.FromPhase || rc.child != in.FromChild {
			c.op.Output, c.claim = DirUpdateResult{Kind: CASChanged}, nil
			return
		}
		rc.phase, rc.child, rc.childAlive = in.ToPhase, in.Child, in.Child != 0
		c.claim.phase, c.claim.child = in.ToPhase, in.Child
		c.op.Output = DirUpdateResult{Kind: CASOK}
	case DirRelease:
		rc := g.claims[in.Path]
		c.claim = nil
		if rc == nil || rc.id != in.ClaimID || rc.phase != in.Phase || rc.child != in.Child {
			c.op.Output = DirReleaseResult{Kind: CASChanged}
			return
		}
		delete(g.claims, in.Path)
		c.op.Output = DirReleaseResult{Kind: CASOK}
	case DirUse:
		kind := UseMissing
		if rc := g.claims[in.Path]; rc != nil && rc.dir == dirPresent {
			kind = UsePresent
		} else if rc != nil && rc.dir == dirForeign {
			kind = UseForeign
		}
		c.op.Output = DirUseResult{Kind: kind}
	case DirRecover:
		c.op.Output = g.recoverAll(in.NowMs)
	}
}

// recoverAll is a correct recovery pass, atomic, in path order.
func (g *dirGenerator) recoverAll(nowMs int64) DirRecoverResult {
	var result DirRecoverResult
	paths := make([]string, 0, len(g.claims))
	for path := range g.claims {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		rc := g.claims[path]
		live := rc.ownerAlive
		if live && g.work.bugRecoverLive && g.rng.Intn(3) == 0 {
			g.bugs++
			live = false
		}
		switch {
		case live:
			result.Active++
			continue
		case rc.role == RoleRawWorking && rc.phase == DirRunning && rc.childAlive:
			result.Active++
			continue
		case rc.role == RoleRawWorking && rc.phase == DirLaunching && nowMs < rc.recoverAfterMs:
			result.Indeterminate++
			continue
		case rc.dir == dirForeign:
			return DirRecoverResult{Failed: true}
		case rc.dir == dirPresent:
			result.Recovered++
		case rc.dir == dirPublished:
			result.Published++
		}
		delete(g.claims, path)
	}
	return result
}

func (g *dirGenerator) crash(c *dirClient) {
	g.endOpen(c)
	g.history = append(g.history, event(g.stamp(), ProcessDeath{Proc: c.proc}))
	g.killProc(c.proc)
	g.replace(c)
}

func (g *dirGenerator) endOpen(c *dirClient) {
	if !c.busy {
		return
	}
	c.busy = false
	if _, readOnly := c.op.Input.(DirUse); readOnly {
		return
	}
	if !c.applied && g.rng.Intn(2) == 0 {
		g.apply(c)
	}
	c.op.Output = Unknown{}
	c.op.Return = g.stamp()
	g.history = append(g.history, c.op)
}

func (g *dirGenerator) killProc(proc int) {
	for _, rc := range g.claims {
		rc.ownerAlive = rc.ownerAlive && rc.owner != proc
		rc.childAlive = rc.childAlive && rc.child != proc
	}
}

func (g *dirGenerator) replace(c *dirClient) {
	for i := range g.clients {
		if g.clients[i] == c {
			g.clients[i] = g.newClient()
		}
	}
}

func (g *dirGenerator) reboot() {
	for _, c := range g.clients {
		g.endOpen(c)
	}
	g.history = append(g.history, event(g.stamp(), Reboot{Host: "a"}))
	for _, rc := range g.claims {
		rc.ownerAlive, rc.childAlive = false, false
	}
	for _, c := range append([]*dirClient(nil), g.clients...) {
		g.replace(c)
	}
}
