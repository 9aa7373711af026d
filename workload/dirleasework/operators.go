package dirleasework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Operators at any moment: operator processes run Inspect and
// Quarantine beside the creators and recoverers, on any host. The judgement
// a Quarantine is given (a name and its sha256) comes from an Inspect that
// may be stale by then. What must hold:
//   - Quarantine never moves a claim that time resolves (a launching lease
//     of a dead owner whose window is still running: a child it launched
//     may still be starting in the directory);
//   - a moved claim is gone for every other caller: its owner's next
//     compare-and-swap loses and recovery leaves it (the model's
//     DirClaimSwap holds that: the file no longer holds its owner's bytes).
//
// Half the operators, drawn per process, work through leasereal's inspect
// and quarantine instead, and act only on what inspect advises
// (clioperator.go).

// operatorStaleMax bounds the sleep between an operator's Inspect and the
// Quarantine it feeds (ms).
const operatorStaleMax = 30

// operator inspects the claim directory and quarantines one judged entry
// at a time, sometimes on a judgement made several steps before.
func (dw *dirWorld) operator(p *sim.Proc) {
	if dw.drawsCLIOperator(p) {
		dw.cliOperator(p)
		return
	}
	d := dw.world.Decisions()
	cfg, fsys := dw.config(p, p.Clock())
	fsys.operator = true
	var judged []dirlease.ClaimState
	for i := 0; i < dw.opts.OpsPerProc; i++ {
		if judged == nil || d.Intn(3) == 0 {
			watch := dw.loose.Watch(dw.world)
			states, err := dirlease.Inspect(context.Background(), cfg)
			dw.judgeLoose(p, "Inspect", watch, err)
			if err != nil {
				dw.world.Probe("dirlease-operator-inspect-refused")
				judged = nil
			} else {
				judged = states
				dw.world.Probe("dirlease-operator-inspected")
			}
		}
		if len(judged) > 0 {
			state := judged[d.Intn(len(judged))]
			_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(operatorStaleMax))*time.Millisecond)
			dw.quarantine(p, cfg, fsys, state.Name, state.ContentSHA256, dirQuarantineAPI)
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(8))*time.Millisecond)
	}
}

// dirQuarantineCall is one way an operator quarantines a judged claim
// (name, sha256): the engine's API, or `leasereal dirlease quarantine`'s
// glue. It reports a move exactly when it returns no error.
type dirQuarantineCall func(ctx context.Context, cfg dirlease.Config, name, sha string) (dirlease.Quarantined, error)

// dirQuarantineAPI is dirlease.Quarantine.
var dirQuarantineAPI dirQuarantineCall = dirlease.Quarantine

// quarantine runs one quarantine of claim name, by quarantineBy, on a
// (possibly stale) judgement of its bytes (sha).
func (dw *dirWorld) quarantine(p *sim.Proc, cfg dirlease.Config, fsys *dirFS, name, sha string, quarantineBy dirQuarantineCall) error {
	w := dw.world
	dw.claims.Begin()
	fsys.lastMove = operatorMove{}
	watch := dw.loose.Watch(dw.world)
	moved, err := quarantineBy(context.Background(), cfg, name, sha)
	dw.judgeLoose(p, "Quarantine", watch, err)
	dw.claims.End(err == nil)
	switch {
	case err == nil:
		w.Probe("dirlease-operator-quarantined")
		fsys.judgeQuarantineReport(moved)
		if moved.State.Disposition == dirlease.DispositionIndeterminate && !moved.State.OperatorNeeded {
			dw.fail(fmt.Errorf("%s's Quarantine moved %s, which its own Inspect judged resolved by time (a launching "+
				"window still running)", p.Name(), name), false)
		}
	case errors.Is(err, dirlease.ErrChanged):
		w.Probe("dirlease-operator-stale-refused")
	case errors.Is(err, dirlease.ErrActive):
		w.Probe("dirlease-operator-active-refused")
	case errors.Is(err, dirlease.ErrWaiting):
		w.Probe("dirlease-operator-window-refused")
	default:
		w.Probe("dirlease-operator-quarantine-refused")
	}
	return err
}

// operatorMove is an operator's move of a claim file name from to to:
// track is the claim the model holds that went with it (nil if none).
type operatorMove struct {
	from, to string
	track    *dirTrack
}

// judgeQuarantineReport fails the run when a Quarantine that reports
// success did not move the entry it names to the path it names, or moved
// it back: only a failed call may put a claim back (noteMovedBack takes it
// as its owner's again), and a claim reported quarantined must be out of
// every caller's way. (Only claim file names are followed, as operatorMove
// follows them; a link+unlink move's destination is not.)
func (f *dirFS) judgeQuarantineReport(moved dirlease.Quarantined) {
	if !isClaimFile(moved.State.Name) {
		return
	}
	if f.lastMove.from != moved.State.Path || (f.lastMove.to != moved.Path && f.lastMove.to != "") {
		f.dw.fail(fmt.Errorf("%s's Quarantine reports %s moved to %s, but its last move of a claim file was %q to %q",
			f.p.Name(), moved.State.Path, moved.Path, f.lastMove.from, f.lastMove.to), false)
	}
}

// noteQuarantined is the ground truth at the instant an operator's call
// moves (or unlinks, after linking it into the quarantine) a claim file:
// the claim is gone for its owner and for recovery from here on, and a
// dead owner's launching claim whose window has not passed, judged from the
// owner's own place, must never be moved. It returns the claim the model
// holds that the file was (nil if none).
func (f *dirFS) noteQuarantined(claimPath string, data []byte) *dirTrack {
	dw := f.dw
	var claim struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(data, &claim) != nil {
		return nil // not a claim: nothing the model holds moved
	}
	t := dw.tracks[claim.Path]
	if t == nil || !t.claimed || claimPath != claimFile(dw.claimIDOf(data)) {
		return nil
	}
	launching := len(t.versions) > 0 && bytes.Equal(data, t.versions[len(t.versions)-1].data) &&
		t.versions[len(t.versions)-1].phase == models.DirLaunching
	if launching && !dw.Alive(t.owner) && placeOf(t.owner) == placeOf(f.p) &&
		dw.modelNowMs() < t.recoverAfter {
		dw.fail(fmt.Errorf("%s's Quarantine moves %s's claim inside its launching window (owner %s dead, window until %d, now %d)",
			f.p.Name(), t.path, t.owner.Name(), t.recoverAfter, dw.modelNowMs()), false)
	}
	dw.world.Probe("dirlease-operator-moved-claim")
	if launching && !dw.Alive(t.owner) {
		dw.world.Probe("dirlease-operator-moved-launching")
	}
	t.claimed = false // gone for everyone: no co-tenant hazard, no recovery of it
	dw.operatorTaken = append(dw.operatorTaken, takenClaim{track: t, path: claimPath, data: data})
	dw.claims.Spoil()
	dw.world.RecordEvent("claim-swap", models.DirClaimSwap{Path: t.path})
	return t
}

// noteMovedBack is the ground truth when an operator's call renames the
// claim file it moved last back under its name: the move could not be
// confirmed (statecas puts the entry back when its look at the moved file
// fails) and the call fails; the claim, the very bytes it moved, is its
// owner's again and recovery's to take (DirClaimReturn undoes the
// DirClaimSwap noteQuarantined recorded).
func (f *dirFS) noteMovedBack(oldpath, newpath string) {
	move := f.lastMove
	if move.to != oldpath || move.from != newpath {
		return
	}
	f.lastMove = operatorMove{}
	if t := move.track; t != nil {
		t.claimed = true
		f.dw.world.RecordEvent("claim-return", models.DirClaimReturn{Path: t.path})
		f.dw.world.Tracef("%s put %s's claim back after an unconfirmed quarantine", f.p.Name(), t.path)
		f.dw.world.Probe("dirlease-operator-move-undone")
	}
}

// operatorMove reports whether name is a claim file an operator's call may
// move or unlink, and reads what it takes (a root read: no step; nil when
// the read fails), so noteQuarantined judges the bytes moved.
func (f *dirFS) operatorMove(name string) (data []byte, claim bool) {
	if !f.operator || fspath.Dir(name) != dirClaimsPath || !isClaimFile(name[len(dirClaimsPath)+1:]) {
		return nil, false
	}
	if f.dryRun {
		f.dw.fail(fmt.Errorf("%s's dry run of leasereal dirlease quarantine (no --sha256) moves %s", f.p.Name(), name), false)
	}
	// The read is the harness's, not the operator's I/O (the root view):
	// no injected error may blind the ground truth to the move (dirlease
	// seed 61005594). A read that fails all the same leaves the move
	// followed, its bytes not.
	data, err := workkit.ReadRoot(f.dw.volume.Root(), name)
	if err != nil {
		return nil, true
	}
	return data, true
}

// claimIDOf is the ID a claim file's bytes record ("" if none).
func (dw *dirWorld) claimIDOf(data []byte) string {
	var claim struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(data, &claim) != nil {
		return ""
	}
	return claim.ID
}

// takenClaim is a claim file an operator's Quarantine moved or unlinked:
// the claim's track, the file's path and its bytes.
type takenClaim struct {
	track *dirTrack
	path  string
	data  []byte
}

// claimsBackAfterPowerLoss follows the claims operators took, right after a
// power loss: a Quarantine renames (or links and unlinks) the claim file out
// of claims/, and until claims/ is synced a power loss undoes that; the
// claim is then back, its owner's again and recovery's to take, as after a
// move the call itself put back (noteMovedBack). After the crash every move
// still undone is durable, so the list starts again.
func (dw *dirWorld) claimsBackAfterPowerLoss() {
	taken := dw.operatorTaken
	dw.operatorTaken = nil
	for _, c := range taken {
		data, err := workkit.ReadRoot(dw.volume.Root(), c.path)
		if err != nil || !bytes.Equal(data, c.data) || c.track.claimed {
			continue
		}
		c.track.claimed = true
		dw.world.RecordEvent("claim-return", models.DirClaimReturn{Path: c.track.path})
		dw.world.Tracef("a power loss put %s's claim back: the operator's quarantine of %s was not durable", c.track.path, c.path)
		dw.world.Probe("dirlease-operator-move-undone-by-powerloss")
	}
}
