package dirleasework

// PID-reuse impostors and the double stale reclaim.
//
// When a creator that claimed a directory crashes, in some runs a new
// process is spawned at once on its PID (sim.ProcSpec.PID), in half of those
// with the dead creator's executable (never together with its start tick:
// that is its exact twin), after a power loss across a reboot. It stays
// alive for a while, so that the recoverers judge the dead owner's claim
// with the impostor on the owner's PID: only the start time tells them
// apart. A recovery that then moves the claimed directory fires
// dirlease-pid-impostor-owner-recovered (judgeLive has checked the real
// owner dead). The update calls are not reachable by an impostor: they act
// through the handle, an object in the creator's memory.
//
// The race: every Recover in flight is remembered with its call time; when
// one recovery moves a claimed directory whose owner had died before
// another recovery was called, that other one set out against the same
// stale claim and must lose (dirlease-double-stale-reclaim at its answer;
// the ground truth and the model judge what it did).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

const dirImpostorsMax = 3

type dirRaces struct {
	dw      *dirWorld
	enabled bool
	spawned int
	deathAt map[*sim.Proc]int64
	races   workkit.RaceWatch
	// onPID maps a dead owner to the live impostor on its PID.
	onPID map[*sim.Proc]*sim.Proc
}

func (r *dirRaces) start(dw *dirWorld) {
	r.dw = dw
	r.deathAt = make(map[*sim.Proc]int64)
	r.onPID = make(map[*sim.Proc]*sim.Proc)
	r.enabled = dw.opts.PIDImpostors == 0 && dw.world.Decisions().Intn(2) == 0
}

func isPIDImpostor(p *sim.Proc) bool { return strings.HasPrefix(p.Name(), "impostor-pid-") }

// exited records p's death and spawns an impostor on the PID of a crashed
// creator that claimed a directory, in runs that draw them.
func (r *dirRaces) exited(dead *sim.Proc, reason sim.ExitReason) {
	dw := r.dw
	r.deathAt[dead] = dw.world.Now()
	r.races.Forget(dead)
	if !r.enabled || reason == sim.ExitFinished || r.spawned >= dirImpostorsMax || dw.liveness != nil ||
		!strings.HasPrefix(dead.Name(), "creator-") || strings.HasSuffix(dead.Name(), "-child") || !r.claimed(dead) {
		return
	}
	if !workkit.PIDFree(dead) {
		return
	}
	r.spawned++
	dw.exes++
	p := workkit.SpawnOnDeadPID(dw.world, dead, sim.ProcSpec{Name: fmt.Sprintf("impostor-pid-%d", r.spawned),
		UID: dirleaseUID, Exe: fmt.Sprintf("/usr/bin/dirlease-%d", dw.exes)}, "dirlease", r.body)
	if p == nil {
		return
	}
	dw.Track(p)
	dw.creators++ // the liveness phase waits for it
	r.onPID[dead] = p
}

// claimed reports whether dead may have left a claim.
func (r *dirRaces) claimed(dead *sim.Proc) bool {
	for _, t := range r.dw.tracks {
		if t.owner == dead && t.claimed {
			return true
		}
	}
	return false
}

// body stays alive on the dead owner's PID for a while.
func (r *dirRaces) body(p *sim.Proc) {
	d := r.dw.world.Decisions()
	for i := 0; i < 8; i++ {
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(6))*time.Millisecond)
	}
}

func (r *dirRaces) begin(p *sim.Proc) {
	r.races.Begin(p, r.dw.world.Now())
}

func (r *dirRaces) end(p *sim.Proc) {
	if r.races.End(p) {
		r.dw.world.Probe("dirlease-double-stale-reclaim")
	}
}

// moved is called when recoverer's pass moves t's directory.
func (r *dirRaces) moved(t *dirTrack, recoverer *sim.Proc) {
	if impostor := r.onPID[t.owner]; impostor != nil && r.dw.Alive(impostor) {
		r.dw.world.Probe("dirlease-pid-impostor-owner-recovered")
	}
	diedAt, dead := r.deathAt[t.owner]
	if !dead {
		return
	}
	r.races.Reclaimed(recoverer, diedAt)
}
