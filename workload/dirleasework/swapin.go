package dirleasework

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Another live claim swapped in: the co-tenant copies
// claim B's file, as its live owner last wrote it, and renames the copy
// over claim A's file (A's owner alive too). The file at A's name is then a
// valid claim, but another one's: its ID, path, directory identity, owner
// and revision are B's. What the engine must do:
//   - A's owner's next Update or Release loses its compare-and-swap (the
//     bytes are not the ones its handle wrote);
//   - a recovery refuses the claim directory as corrupt (the record's ID
//     does not match its file name) and deletes nothing: it must not act
//     on B's directory through A's name, nor on A's directory through a
//     record that no longer describes it.
//
// The model's DirClaimSwap makes every such pass that succeeds illegal and
// keeps A's handle from matching. The operator (repairSwappedClaims) puts
// A's owner's last bytes back within dirRepairDelayMax steps, or at once
// when the liveness phase starts (DirClaimReturn), so that recovery runs
// again and liveness holds.

// swapInSources lists the claims whose file the co-tenant may copy over
// another's: a live owner's, holding what its owner last wrote.
func (dw *dirWorld) swapInSources() []*dirTrack {
	var out []*dirTrack
	for _, t := range dw.sortedTracks() {
		if t.claimed && t.created && len(t.versions) > 0 && !t.swappedIn && dw.Alive(t.owner) && dw.holdsLastVersion(t) {
			out = append(out, t)
		}
	}
	return out
}

// swapInTargets lists the claims whose file the co-tenant may replace with
// a copy of source's: another live owner's, never restored (ABA), holding
// its owner's last version with no compare-and-swap in flight on it.
func (dw *dirWorld) swapInTargets(source *dirTrack) []*dirTrack {
	var out []*dirTrack
	for _, t := range dw.swapInSources() {
		if t != source && !t.aba && !dw.casInFlight(t) {
			out = append(out, t)
		}
	}
	return out
}

// holdsLastVersion reports whether t's claim file holds the bytes its owner
// wrote last (a root read: it takes no step).
func (dw *dirWorld) holdsLastVersion(t *dirTrack) bool {
	data, err := workkit.ReadRoot(dw.volume.Root(), claimFile(t.claimID))
	return err == nil && bytes.Equal(data, t.versions[len(t.versions)-1].data)
}

// casInFlight reports whether a mutation claim is held on t's claim file.
func (dw *dirWorld) casInFlight(t *dirTrack) bool {
	_, err := dw.volume.Root().Lstat(statecas.ClaimPath(claimFile(t.claimID)))
	return err == nil
}

// swapInCandidates returns a source claim and the targets it may be copied
// over, or nil when the reach is off or no pair exists.
func (dw *dirWorld) swapInCandidates() (*dirTrack, []*dirTrack) {
	if dw.opts.ClaimSwaps < 0 {
		return nil, nil
	}
	for _, source := range dw.swapInSources() {
		if targets := dw.swapInTargets(source); len(targets) > 0 {
			return source, targets
		}
	}
	return nil, nil
}

// swapInClaim renames a copy of source's claim file over target's.
func (dw *dirWorld) swapInClaim(w *sim.World, source, target *dirTrack) {
	root := dw.volume.FS().View(dirleaseUID)
	if !dw.renameOver(root, source.versions[len(source.versions)-1].data, claimFile(target.claimID)) {
		return
	}
	dw.claims.Spoil()
	dw.setSwappedIn(target, true)
	target.swapRepairAt = w.Step() + 1 + w.Decisions().Intn(dirRepairDelayMax)
	w.RecordEvent("claim-swap", models.DirClaimSwap{Path: target.path})
	w.Tracef("cotenant claim-swap %s's claim over %s's", source.path, target.path)
	w.Probe("cotenant-claim-swapped-in")
}

// renameOver writes data to a new file of the co-tenant's and renames it
// over name (as an editor saves), durably.
func (dw *dirWorld) renameOver(root lease.FS, data []byte, name string) bool {
	dw.swaps++
	temp := fspath.Join(cotenantScratch, fmt.Sprintf("claim-%d", dw.swaps))
	return workkit.RenameOver(root, temp, name, data)
}

// repairSwappedClaims is the operator: it renames the bytes each swapped
// claim's owner last wrote back over its file, once its time has come (all
// at once when force is set, at the start of the liveness phase, when every
// process is dead), and never while a compare-and-swap is in flight on it.
// A file gone, or holding its owner's bytes again, is left as it is: only an
// engine call that should have refused the swapped claim could have done
// that, and the model, which still holds the swap, judges it.
func (dw *dirWorld) repairSwappedClaims(force bool) {
	if !dw.anySwappedIn() {
		return // the common step: no view to make, no tracks to walk
	}
	root := dw.volume.FS().View(dirleaseUID) // the claim files' owner
	for _, t := range dw.sortedTracks() {
		if !t.swappedIn || (!force && (dw.world.Step() < t.swapRepairAt || dw.casInFlight(t))) {
			continue
		}
		file := claimFile(t.claimID)
		if data, err := workkit.ReadRoot(root, file); err != nil || bytes.Equal(data, t.versions[len(t.versions)-1].data) {
			dw.setSwappedIn(t, false)
			continue
		}
		if !dw.renameOver(root, t.versions[len(t.versions)-1].data, file) {
			continue // an injected error: the operator retries at a later step
		}
		dw.setSwappedIn(t, false)
		dw.claims.Spoil() // the operator, not the engine, wrote the claim file: nothing promised is on disk now
		dw.world.RecordEvent("claim-return", models.DirClaimReturn{Path: t.path})
		dw.world.Probe("dirlease-operator-claim-returned")
	}
}

// swappedClaimFile reports whether the claim file name holds another
// claim's bytes now, or the co-tenant's symlink (symlinkclaim.go): either
// way not its owner's claim.
func (dw *dirWorld) swappedClaimFile(name string) bool {
	if len(dw.claimSymlinks.active) > 0 && dw.claimSymlinkAt(name) {
		return true
	}
	if dw.swappedClaims == 0 {
		return false
	}
	for _, t := range dw.sortedTracks() {
		if t.swappedIn && claimFile(t.claimID) == name {
			return true
		}
	}
	return false
}

// anySwappedIn reports whether some claim file holds another claim's bytes.
// It runs at every step, so it reads a count rather than walking the
// tracks: a state home of a hundred crashed claims made the walk a quarter
// of a pile-up run's time.
func (dw *dirWorld) anySwappedIn() bool { return dw.swappedClaims > 0 }

// setSwappedIn sets t.swappedIn and keeps dw.swappedClaims its count.
func (dw *dirWorld) setSwappedIn(t *dirTrack, swapped bool) {
	setCounted(&t.swappedIn, &dw.swappedClaims, swapped)
	if dw.swappedClaims < 0 {
		panic("dirleasework: more swapped claims returned than swapped in")
	}
}

// noteSwappedRefusal fires the probes of a refusal the swap caused: a
// compare-and-swap of the swapped claim's owner lost, or a recovery
// refused the claim directory as corrupt.
func (dw *dirWorld) noteSwappedRefusal(swapped bool, kind models.CASKind) {
	if swapped && kind == models.CASChanged {
		dw.world.Probe("dirlease-swapped-claim-cas-refused")
	}
}

func (dw *dirWorld) noteSwappedRecovery(swapped bool, err error) {
	if swapped && errors.Is(err, dirlease.ErrCorrupt) {
		dw.world.Probe("dirlease-swapped-claim-recovery-refused")
	}
}
