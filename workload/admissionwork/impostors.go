package admissionwork

// PID-reuse impostors and the races over one record.
//
// When a controller that holds a handle crashes, in some runs a new process
// is spawned on its PID at once (sim.ProcSpec.PID), in half of those with
// the dead controller's executable too (never together with its start
// tick: that would be its exact twin, which no identity rule can tell), and
// after a power loss across a reboot. It calls Acquire and Inspect, where
// the dead owner's record must be judged by its full identity (the model:
// "active" only while the owner or its helper is alive): an engine that
// matched the owner by PID would take the impostor for it. The lifecycle
// updates and Release are not fenced by "is this the owner": they are
// compare-and-swaps through the handle, an object in the acquirer's memory
// bound to its environment, which no other process can present (the original implementation's
// rule: the handle is the capability). The identity checks inside them are
// the mutation-claim owner's, which an impostor on a dead claimant's PID
// meets at every later update (statecas).
//
// The races: an acquire that was called after the slot's owner had died,
// and was still in flight when another acquire removed that owner's record,
// set out to reclaim the same stale record and lost
// (admission-double-stale-reclaim); an update or release with a handle whose
// claim is no longer the slot's latest acquired claim arrives after a
// takeover (admission-update-after-takeover, admission-release-after-takeover)
// and must lose its compare-and-swap (the model).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// admissionImpostorsMax bounds the PID-reuse impostors of one run.
const admissionImpostorsMax = 3

type admissionImpostors struct {
	aw      *admissionWorld
	enabled bool
	spawned int
	// holding says which live controllers hold a handle.
	holding map[*sim.Proc]bool
	// slotClaim and slotOwner are the claim of the last acquire that
	// answered Acquired, while no release of it has answered.
	slotClaim string
	slotOwner *sim.Proc
	deathAt   map[*sim.Proc]int64
	races     workkit.RaceWatch
}

func (ai *admissionImpostors) start(aw *admissionWorld) {
	ai.aw = aw
	ai.holding = make(map[*sim.Proc]bool)
	ai.deathAt = make(map[*sim.Proc]int64)
	ai.enabled = aw.opts.PIDImpostors == 0 && aw.world.Decisions().Intn(2) == 0
}

// know remembers whether p holds a handle after each of its steps.
func (ai *admissionImpostors) know(p *sim.Proc, mine *handle) {
	ai.holding[p] = mine != nil && !mine.a.Released()
}

// exited records p's death time and spawns an impostor on the PID of a
// crashed controller that held a handle, in runs that draw them.
func (ai *admissionImpostors) exited(dead *sim.Proc, reason sim.ExitReason) {
	aw := ai.aw
	ai.deathAt[dead] = aw.world.Now()
	ai.races.Forget(dead)
	knew := ai.holding[dead]
	delete(ai.holding, dead)
	if !ai.enabled || !knew || reason == sim.ExitFinished || ai.spawned >= admissionImpostorsMax || aw.liveness != nil {
		return
	}
	if !workkit.PIDFree(dead) {
		return // a zombie still holds the PID
	}
	ai.spawned++
	aw.exes++
	p := workkit.SpawnOnDeadPID(aw.world, dead, sim.ProcSpec{Name: fmt.Sprintf("impostor-pid-%d", ai.spawned),
		UID: admissionUID, Exe: fmt.Sprintf("/usr/bin/export-%d", aw.exes)}, "admission", ai.body)
	if p == nil {
		return
	}
	aw.Track(p)
	aw.controllers++ // the liveness phase waits for it too
}

// body acquires (releasing what it gets) and inspects, a few times.
func (ai *admissionImpostors) body(p *sim.Proc) {
	aw := ai.aw
	d := aw.world.Decisions()
	cfg := aw.config(p)
	for i := 0; i < 3; i++ {
		if mine := aw.acquire(p, cfg); mine != nil {
			aw.release(p, mine)
		}
		aw.inspect(p, cfg)
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(5))*time.Millisecond)
	}
}

// isPIDImpostor reports whether p is a PID-reuse impostor (not one of its
// helpers or their descendants).
func isPIDImpostor(p *sim.Proc) bool {
	return strings.HasPrefix(p.Name(), "impostor-pid-") && !strings.Contains(p.Name(), "-helper")
}

// noteCall fires the probes of an update ("update") or release: a PID
// impostor's call, and a call with a claim another acquire took over.
func (ai *admissionImpostors) noteCall(p *sim.Proc, call, claimID string, kind models.CASKind) {
	w := ai.aw.world
	name := [...]string{"", "ok", "changed", "invalid"}[kind]
	if isPIDImpostor(p) {
		w.Probe("admission-pid-impostor-" + call + "-" + name)
	}
	if kind != models.CASInvalid && ai.slotClaim != "" && ai.slotClaim != claimID {
		w.Probe("admission-" + call + "-after-takeover")
	}
	if call == "release" && kind == models.CASOK && ai.slotClaim == claimID {
		ai.slotClaim, ai.slotOwner = "", nil
	}
}

// begin and end bracket an acquire for the reclaim race.
func (ai *admissionImpostors) begin(p *sim.Proc) {
	ai.races.Begin(p, ai.aw.world.Now())
}

func (ai *admissionImpostors) end(p *sim.Proc, out models.AdmissionAcquireResult, known bool) {
	acquired, claimID := known && out.Kind == models.AdmissionAcquired, out.ClaimID
	if known && isPIDImpostor(p) {
		ai.aw.world.Probe("admission-pid-impostor-acquire-" + [...]string{"", "acquired", "active", "indeterminate",
			"contention", "corrupt"}[out.Kind])
	}
	if ai.races.End(p) {
		ai.aw.world.Probe("admission-double-stale-reclaim")
	}
	if acquired {
		ai.slotClaim, ai.slotOwner = claimID, p
	}
}

// removed is called when reclaimer's acquire removed the slot: every other
// acquire called after the slot owner's death raced it for the same record.
func (ai *admissionImpostors) removed(reclaimer *sim.Proc) {
	diedAt, dead := ai.deathAt[ai.slotOwner]
	if ai.slotOwner == nil || !dead {
		return
	}
	ai.races.Reclaimed(reclaimer, diedAt)
	ai.slotClaim, ai.slotOwner = "", nil
}
