package dirleasework

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Long-lived state: the crash pile-up.
//
// A state home that lives long collects crashed claims: every killed
// creator leaves one, and only a recovery removes it (the project's real
// stress, leasereal stress --engine dirlease, piles them up at 10 kills/s).
// In runs that draw the pile-up, the workload's end (every process killed,
// faults off, the co-tenant's work undone) is followed by a phase in which
// no recovery runs: piler processes in the first place Create leases on
// fresh directories, pileupConcurrency at a time, and each exits as soon as
// its Create answered, leaving its claim as a killed owner does; at a
// piler's exit, one in pileupKillOdds kills another piler inside its
// Create (a kill from an exit hook: the harness kills between steps only
// there). The pile-up ends
// once the claim directory holds more than dirlease.ClaimsMax claims, once
// Create refused pileupRefusalsMax times, or after pileupPilersMax pilers;
// then the liveness phase runs as in every run. What must hold:
//   - no Create that began with ClaimsMax claims or more on disk succeeds:
//     nothing removes a claim during the pile-up, so nothing made room, and
//     a state home must not grow past the bound its recovery reads;
//   - once the pile-up exists and recovery runs with faults off, a pass in
//     the pilers' place removes some of the pile-up's claims (every one is
//     a dead owner's preparing lease, recoverable): pileupStallsMax passes
//     in a row that remove none of them are a wedge.

const (
	// pileupOdds: one run in pileupOdds draws the pile-up (Pileup 0), a
	// run of some 20000 steps: at 16 the default campaign's steps per seed
	// about double. The pile-up is the draw's last value, not 0, so that a
	// shrunk seed (its choices zeroed) carries no pile-up unless its
	// finding needs one.
	pileupOdds        = 16
	pileupConcurrency = 3
	// pileupOverMax bounds how far past ClaimsMax the pile-up aims.
	pileupOverMax     = 8
	pileupRefusalsMax = 3
	pileupPilersMax   = 4 * dirlease.ClaimsMax
	pileupStallsMax   = 4
	// pileupKillOdds: at one piler's exit in pileupKillOdds another piler,
	// still inside its Create, is killed.
	pileupKillOdds = 4
)

// dirPileup is the pile-up's state.
type dirPileup struct {
	dw     *dirWorld
	place  workkit.Place
	target int
	// pilers are the pilers alive.
	pilers   map[*sim.Proc]*piler
	spawned  int
	refusals int
	done     bool
	// stalls counts the recovery passes in a row that removed none of the
	// pile-up's claims.
	stalls int
}

type piler struct {
	// answered is set once its Create returned.
	answered bool
}

// drawPileup reports whether this run piles up crashed claims.
func (dw *dirWorld) drawPileup() bool {
	switch dw.opts.Pileup {
	case 1:
		return true
	case 0:
		return dw.world.Decisions().Intn(pileupOdds) == pileupOdds-1
	}
	return false
}

func (u *dirPileup) start() {
	w := u.dw.world
	u.place = u.dw.allPlaces()[0]
	u.target = dirlease.ClaimsMax + 1 + w.Decisions().Intn(pileupOverMax)
	u.pilers = make(map[*sim.Proc]*piler)
	w.Tracef("dirlease-pileup start target=%d", u.target)
	w.Probe("dirlease-pileup")
	for i := 0; i < pileupConcurrency; i++ {
		u.spawn()
	}
}

func (u *dirPileup) spawn() {
	dw := u.dw
	u.spawned++
	p, err := dw.spawnAt(u.place, fmt.Sprintf("piler-%d", u.spawned), u.body)
	if err != nil {
		dw.fail(fmt.Errorf("pile-up: spawn piler: %v", err), true)
		return
	}
	u.pilers[p] = &piler{}
}

// body creates one lease and exits without releasing it.
func (u *dirPileup) body(p *sim.Proc) {
	dw := u.dw
	cfg, _ := dw.config(p, p.Clock())
	before := dw.claimCount()
	held, err := dw.create(p, cfg, false)
	switch {
	case err == nil && held != nil && before >= dirlease.ClaimsMax:
		dw.fail(fmt.Errorf("pile-up: %s's Create added claim %s while the state home held %d claims (the bound is %d): "+
			"the state home grows past the bound its recovery reads", p.Name(), held.l.Claim().ID, before, dirlease.ClaimsMax), false)
	case errors.Is(err, dirlease.ErrFull):
		u.refusals++
		dw.world.Probe("dirlease-pileup-create-refused")
	case err != nil:
		u.refusals++ // faults are off: a refusal the pile-up cannot get past
	}
	if at := u.pilers[p]; at != nil {
		at.answered = true
	}
}

// inCreate returns the first live piler (in spawn order: map order must
// not reach the run) whose Create has not answered, nil if none.
func (u *dirPileup) inCreate() *sim.Proc {
	for _, p := range u.dw.world.Procs() {
		if at := u.pilers[p]; at != nil && !at.answered && p.Alive() {
			return p
		}
	}
	return nil
}

// exited follows a piler's death: another piler, or the liveness phase
// once the pile-up is over and the last piler is dead.
func (u *dirPileup) exited(p *sim.Proc) {
	if u.pilers[p] == nil {
		return
	}
	delete(u.pilers, p)
	dw := u.dw
	dw.world.Probe("dirlease-pileup-exited")
	if victim := u.inCreate(); victim != nil && dw.world.Decisions().Intn(pileupKillOdds) == 0 {
		dw.world.Probe("dirlease-pileup-killed")
		dw.world.Crash(victim) // its exit runs this hook for it first
	}
	if !u.done && (dw.claimCount() >= u.target || u.refusals >= pileupRefusalsMax || u.spawned >= pileupPilersMax) {
		u.done = true
		if dw.claimCount() > dirlease.ClaimsMax {
			dw.world.Probe("dirlease-pileup-over-bound")
		}
		dw.world.Tracef("dirlease-pileup end claims=%d refusals=%d pilers=%d", dw.claimCount(), u.refusals, u.spawned)
	}
	switch {
	case dw.failure != nil:
	case !u.done:
		u.spawn()
	case len(u.pilers) == 0 && dw.liveness == nil:
		// Once only: a piler's exit that kills another piler runs the
		// victim's exit hook inside its own, and both see no piler left;
		// two probes in one place would fail each other's recovery passes
		// on their in-flight mutation claims.
		dw.launchLiveness()
	}
}

// claimCount counts the claim files in the claim directory (faults are
// off: root reads are safe).
func (dw *dirWorld) claimCount() int {
	entries, _ := dw.volume.Root().ReadDir(dirClaimsPath)
	n := 0
	for _, e := range entries {
		if isClaimFile(e.Name) {
			n++
		}
	}
	return n
}

// isPilers reports whether t is a directory a piler made.
func isPilers(t *dirTrack) bool { return t != nil && strings.HasPrefix(t.owner.Name(), "piler-") }

// claimsLeft counts the claim files left that name a piler's directory,
// -1 when there was no pile-up or p is not in the pilers' place.
func (u *dirPileup) claimsLeft(p *sim.Proc) int {
	if u == nil || placeOf(p) != u.place {
		return -1
	}
	n := 0
	for _, name := range u.dw.claimsLeft() {
		data, err := workkit.ReadRoot(u.dw.volume.Root(), fspath.Join(dirClaimsPath, name))
		var claim struct {
			Path string `json:"path"`
		}
		if err == nil && json.Unmarshal(data, &claim) == nil && isPilers(u.dw.tracks[claim.Path]) {
			n++
		}
	}
	return n
}

// stalled judges a liveness probe's recovery pass in the pilers' place:
// one that removed none of the pile-up's claims (before of them were left)
// counts, and pileupStallsMax in a row fail the run (a wedge); it reports
// whether the run failed.
func (u *dirPileup) stalled(p *sim.Proc, before int, err error) bool {
	if u == nil || before <= 0 {
		return false
	}
	if u.claimsLeft(p) < before {
		u.stalls = 0
		u.dw.world.Probe("dirlease-pileup-recovered")
		return false
	}
	u.stalls++
	if u.stalls < pileupStallsMax {
		return false
	}
	u.dw.fail(fmt.Errorf("pile-up: wedged: %d crashed claims left (%d claim files, the bound is %d), and %d recovery "+
		"passes in a row with faults off removed none of them; last error: %v", before, u.dw.claimCount(),
		dirlease.ClaimsMax, u.stalls, err), true)
	return true
}
