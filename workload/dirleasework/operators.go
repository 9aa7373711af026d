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

// Operators at any moment (issue 29): operator processes run Inspect and
// Quarantine beside the creators and recoverers, on any host. The judgement
// a Quarantine is given (a name and its sha256) comes from an Inspect that
// may be stale by then. What must hold:
//   - Quarantine never moves a claim that time resolves (a launching lease
//     of a dead owner whose window is still running: a child it launched
//     may still be starting in the directory);
//   - a moved claim is gone for every other caller: its owner's next
//     compare-and-swap loses and recovery leaves it (the model's
//     DirClaimSwap holds that: the file no longer holds its owner's bytes).

// operatorStaleMax bounds the sleep between an operator's Inspect and the
// Quarantine it feeds (ms).
const operatorStaleMax = 30

// operator inspects the claim directory and quarantines one judged entry
// at a time, sometimes on a judgement made several steps before.
func (dw *dirWorld) operator(p *sim.Proc) {
	d := dw.world.Decisions()
	cfg, fsys := dw.config(p, p.Clock())
	fsys.operator = true
	var judged []dirlease.ClaimState
	for i := 0; i < dw.opts.OpsPerProc; i++ {
		if judged == nil || d.Intn(3) == 0 {
			states, err := dirlease.Inspect(context.Background(), cfg)
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
			dw.quarantine(p, cfg, state)
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(8))*time.Millisecond)
	}
}

// quarantine runs one Quarantine on a (possibly stale) judgement.
func (dw *dirWorld) quarantine(p *sim.Proc, cfg dirlease.Config, state dirlease.ClaimState) {
	w := dw.world
	dw.claims.Begin()
	moved, err := dirlease.Quarantine(context.Background(), cfg, state.Name, state.ContentSHA256)
	dw.claims.End(err == nil)
	switch {
	case err == nil:
		w.Probe("dirlease-operator-quarantined")
		if moved.State.Disposition == dirlease.DispositionIndeterminate && !moved.State.OperatorNeeded {
			dw.fail(fmt.Errorf("%s's Quarantine moved %s, which its own Inspect judged resolved by time (a launching "+
				"window still running)", p.Name(), state.Name), false)
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
}

// noteQuarantined is the ground truth at the instant an operator's call
// moves (or unlinks, after linking it into the quarantine) a claim file:
// the claim is gone for its owner and for recovery from here on, and a
// dead owner's launching claim whose window has not passed, judged from the
// owner's own place, must never be moved.
func (f *dirFS) noteQuarantined(claimPath string, data []byte) {
	dw := f.dw
	var claim struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(data, &claim) != nil {
		return // not a claim: nothing the model holds moved
	}
	t := dw.tracks[claim.Path]
	if t == nil || !t.claimed || claimPath != claimFile(dw.claimIDOf(data)) {
		return
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
	dw.claims.Spoil()
	dw.world.RecordEvent("claim-swap", models.DirClaimSwap{Path: t.path})
}

// operatorMove reads what an operator's move or unlink of a claim file
// takes (a root read: no step), so noteQuarantined judges the bytes moved.
func (f *dirFS) operatorMove(name string) (data []byte, claim bool) {
	if !f.operator || fspath.Dir(name) != dirClaimsPath || !isClaimFile(name[len(dirClaimsPath)+1:]) {
		return nil, false
	}
	data, err := workkit.ReadRoot(f.dw.volume.Root(), name)
	return data, err == nil
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
