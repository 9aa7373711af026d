package dirleasework

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// A symlink at a claim file's path (sim.FaultCotenant, same uid): the
// co-tenant moves a live owner's claim file out of the state tree, to
// /home/outside/claim-sym-N, and puts a symlink at the claim's name: to the
// moved claim (the same bytes, the same owner: through the link it is still
// a valid claim at its own name), or dangling (to a name that does not
// exist). The engine reads its claims with Lstat and O_NOFOLLOW, so it must
// refuse the name, typed (ErrCorrupt at a listing that shows the link,
// ErrUnsafe at a read that meets it), and never act on what the link names.
//
// Timing: a listing that shows the link refuses at once, before any read.
// So half the firings put the link at once, and the other half arm a trap
// that the next engine listing of the claim directory springs: the link is
// put right after that listing (fireClaimSymlinkTrap), and the reads that
// follow meet a name the listing showed as a regular file, as a co-tenant
// watching the directory would race them.
//
// Ground truth and model: for the engine the name no longer holds its
// owner's claim, so the model holds it as a DirClaimSwap until the operator
// renames the moved claim back over the link (DirClaimReturn,
// repairClaimSymlinks): the owner's compare-and-swap cannot win, and a
// recovery pass whose last look at the name went through the link (an open
// or a stat that follows it: noteClaimRead) must fail closed. The moved
// claim's bytes, and the dangling link's missing name, must never change
// (checkClaimSymlinks).

// claimSymlinksMax bounds the claim files linked at once.
const claimSymlinksMax = 2

// claimSymlink is a symlink the co-tenant put at a claim file's path.
type claimSymlink struct {
	track *dirTrack
	// file is the claim file's path (where the link is), moved where the
	// claim went, target what the link names (moved, or a missing name).
	file, moved, target string
	dangling            bool
	// id is the link's identity, data the moved claim's bytes.
	id   lease.FileIdentity
	data []byte
	// repairAt is the step of the operator's repair.
	repairAt int
}

// claimSymlinks are the co-tenant's links at claim files and its trap.
type claimSymlinks struct {
	active []*claimSymlink
	// armed is set when the co-tenant waits for the next engine listing of
	// the claim directory; sprung once a listing happened.
	armed, sprung bool
}

// claimSymlinkCandidates lists the claims whose file the co-tenant may
// replace with a symlink: a live owner's, holding what its owner last wrote
// (read without following: a linked one never is), never swapped or
// restored, with no compare-and-swap in flight on it (a link put now could
// race its commit in a way no engine can see).
func (dw *dirWorld) claimSymlinkCandidates() []*dirTrack {
	if len(dw.claimSymlinks.active) >= claimSymlinksMax {
		return nil
	}
	var out []*dirTrack
	for _, t := range dw.sortedTracks() {
		if t.claimed && t.created && len(t.versions) > 0 && !t.swappedIn && !t.aba && !t.claimLinked &&
			dw.Alive(t.owner) && !dw.casInFlight(t) && dw.holdsLastVersion(t) {
			out = append(out, t)
		}
	}
	return out
}

// claimSymlinkAction is the co-tenant's firing: a link now, or the trap.
func (dw *dirWorld) claimSymlinkAction(w *sim.World, tracks []*dirTrack) {
	d := w.Decisions()
	if d.Intn(2) == 0 {
		dw.claimSymlinks.armed = true
		return
	}
	dw.plantClaimSymlink(w, tracks[d.Intn(len(tracks))], d.Intn(3) == 0)
}

// springClaimSymlinkTrap is an engine's listing of the claim directory.
func (dw *dirWorld) springClaimSymlinkTrap() {
	if dw.claimSymlinks.armed {
		dw.claimSymlinks.armed, dw.claimSymlinks.sprung = false, true
	}
}

// fireClaimSymlinkTrap puts, between two steps, the link a listing sprang.
func (dw *dirWorld) fireClaimSymlinkTrap() {
	if !dw.claimSymlinks.sprung {
		return
	}
	dw.claimSymlinks.sprung = false
	tracks := dw.claimSymlinkCandidates()
	if len(tracks) == 0 {
		return
	}
	w := dw.world
	d := w.Decisions()
	if dw.plantClaimSymlink(w, tracks[d.Intn(len(tracks))], d.Intn(3) == 0) {
		w.Probe("dirlease-cotenant-symlink-claim-raced")
	}
}

// plantClaimSymlink moves t's claim file out of the state tree and puts a
// symlink at its name (to the moved claim, or dangling), durably.
func (dw *dirWorld) plantClaimSymlink(w *sim.World, t *dirTrack, dangling bool) bool {
	root := dw.volume.FS().View(dirleaseUID)
	file := claimFile(t.claimID)
	data, err := workkit.ReadRoot(root, file)
	if err != nil {
		return false
	}
	dw.swaps++
	link := &claimSymlink{track: t, file: file, dangling: dangling, data: data,
		moved: fspath.Join(fspath.Dir(outsideDir), fmt.Sprintf("claim-sym-%d", dw.swaps))}
	link.target = link.moved
	if dangling {
		link.target += ".missing"
	}
	if root.Rename(file, link.moved) != nil {
		return false
	}
	if root.Symlink(link.target, file) != nil {
		if err := root.Rename(link.moved, file); err != nil {
			panic(fmt.Sprintf("sim: dirlease co-tenant: putting %s back: %v", file, err))
		}
		return false
	}
	workkit.SyncRoot(root, dirClaimsPath)
	workkit.SyncRoot(root, fspath.Dir(link.moved))
	info, err := root.Lstat(file)
	id, ok := info.Identity()
	if err != nil || !ok {
		panic(fmt.Sprintf("sim: dirlease co-tenant: symlink at %s: %v", file, err))
	}
	link.id = id
	link.repairAt = w.Step() + 1 + w.Decisions().Intn(dirRepairDelayMax)
	dw.claimSymlinks.active = append(dw.claimSymlinks.active, link)
	t.claimLinked = true
	dw.claims.Spoil()
	w.RecordEvent("claim-swap", models.DirClaimSwap{Path: t.path})
	w.Tracef("cotenant claim symlink %s -> %s", file, link.target)
	w.Probe("dirlease-cotenant-symlink-claim")
	if dangling {
		w.Probe("dirlease-cotenant-symlink-claim-dangling")
	}
	return true
}

// claimSymlinkAt reports whether the co-tenant's link stands at claim file
// name now.
func (dw *dirWorld) claimSymlinkAt(name string) bool {
	for _, link := range dw.claimSymlinks.active {
		if link.file == name {
			return true
		}
	}
	return false
}

// checkClaimSymlinks fails the run if what a link names changed: the moved
// claim's bytes, or a dangling link's missing name that now exists. Either
// way an engine followed the link.
func (dw *dirWorld) checkClaimSymlinks() {
	if len(dw.claimSymlinks.active) == 0 {
		return
	}
	root := dw.volume.Root()
	for _, link := range dw.claimSymlinks.active {
		data, err := workkit.ReadRoot(root, link.moved)
		_, missingErr := root.Lstat(link.moved + ".missing")
		if err != nil || !bytes.Equal(data, link.data) || !errors.Is(missingErr, fs.ErrNotExist) {
			dw.fail(fmt.Errorf("%s, outside the state tree, changed after the co-tenant put a symlink to it at the claim "+
				"file %s (%v, %q, was %q; %s.missing: %v): an engine followed the symlink", link.moved, link.file, err, data,
				link.data, link.moved, missingErr), false)
			return
		}
	}
}

// repairClaimSymlinks is the operator: it renames each moved claim back
// over its link once its time has come and no compare-and-swap is in
// flight on it (all at once when force is set, at the start of the
// liveness phase, when every process is dead).
func (dw *dirWorld) repairClaimSymlinks(force bool) {
	if len(dw.claimSymlinks.active) == 0 {
		return
	}
	kept := dw.claimSymlinks.active[:0]
	for _, link := range dw.claimSymlinks.active {
		due := force || (dw.world.Step() >= link.repairAt && !dw.casInFlight(link.track))
		if !due || !dw.repairClaimSymlink(link) {
			kept = append(kept, link)
		}
	}
	clear(dw.claimSymlinks.active[len(kept):])
	dw.claimSymlinks.active = kept
}

// repairClaimSymlink puts link's claim back; false when the rename failed
// (an injected error: the operator retries at a later step).
func (dw *dirWorld) repairClaimSymlink(link *claimSymlink) bool {
	root := dw.volume.FS().View(dirleaseUID)
	info, err := root.Lstat(link.file)
	if id, ok := info.Identity(); err != nil || !ok || id != link.id {
		dw.fail(fmt.Errorf("the symlink the co-tenant put at the claim file %s is gone or replaced before its repair (%v): "+
			"an engine renamed or removed it", link.file, err), false)
		return true
	}
	if root.Rename(link.moved, link.file) != nil {
		return false
	}
	workkit.SyncRoot(root, dirClaimsPath)
	workkit.SyncRoot(root, fspath.Dir(link.moved))
	link.track.claimLinked = false
	dw.claims.Spoil() // the operator, not the engine, wrote the claim file
	dw.world.RecordEvent("claim-return", models.DirClaimReturn{Path: link.track.path})
	dw.world.Probe("dirlease-operator-claim-symlink-repaired")
	return true
}

// noteClaimSymlinkLook records, on a recovery's Lstat, that the pass looked
// at a claim file while the co-tenant's link stood there.
func (f *dirFS) noteClaimSymlinkLook(name string) {
	if f.recovering && len(f.dw.claimSymlinks.active) > 0 && f.dw.claimSymlinkAt(name) {
		f.metClaimSymlink = true
	}
}

// noteClaimSymlinkRecovery fires the probes of a recovery the links made
// refuse: a read that met one (ErrUnsafe), or a listing that showed one
// (ErrCorrupt naming it).
func (dw *dirWorld) noteClaimSymlinkRecovery(fsys *dirFS, err error) {
	switch {
	case fsys.metClaimSymlink && errors.Is(err, dirlease.ErrUnsafe):
		dw.world.Probe("dirlease-claim-symlink-refused")
	case unsupportedEntry(err):
		var refusal *dirlease.Error
		errors.As(err, &refusal)
		for _, link := range dw.claimSymlinks.active {
			if refusal.Path == link.file {
				dw.world.Probe("dirlease-claim-symlink-listed-refused")
			}
		}
	}
}

// noteClaimSymlinkCAS fires the probe of an owner's compare-and-swap
// refused, typed, at its claim's link.
func (dw *dirWorld) noteClaimSymlinkCAS(linked bool, err error) {
	if linked && errors.Is(err, dirlease.ErrUnsafe) {
		dw.world.Probe("dirlease-claim-symlink-cas-refused")
	}
}

// unsupportedEntry reports whether err is a recovery's refusal of a
// listing that holds an entry other than a regular claim file (the
// co-tenant's link), by its kind and the original's message, not its text.
func unsupportedEntry(err error) bool {
	var refusal *dirlease.Error
	return errors.As(err, &refusal) && refusal.Kind == dirlease.ErrCorrupt &&
		refusal.Msg == "directory lease collection contains an unsupported entry"
}
