package dirleasework

import (
	"errors"

	"encoding/json"
	"fmt"
	"github.com/leasekit/leasekit/dirlease"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Several parents, and a co-tenant that swaps one.
//
// A claim records its parent directory's identity, and recovery refuses a
// claim whose parent is no longer that directory (dirlease/recover.go): a
// parent moved away and replaced by another at the same path holds other
// entries under the recorded names, and nothing the claim names can be
// verified there. The workload draws per seed how many parents its creators
// use (dirParentsMax), and the co-tenant hook (cotenant.go) may move one
// parent away and put an empty directory of its own (same user, same mode)
// at its path: every claim recorded under it now has a changed parent. The
// checked outcome is the refusal: a recovery that releases such a claim
// (removes its claim file) acted on a claim it cannot have verified, and
// fails the run (judgeClaimRelease). The operator repairs it later by
// removing the impostor and moving the original back (repairParents), so
// liveness holds.
//
// The hook only swaps a parent no workload process is using (creating,
// looking at, publishing or removing a directory in it: using), and
// while no mutation claim is held in the claim directory: a recovery that
// has passed its parent check holds the claim until its claim file is
// removed, so the swap can only come before the check.

// dirParentsMax bounds the parents a seed draws.
const dirParentsMax = 3

// dirParent is one parent directory of the creators' working directories.
type dirParent struct {
	path string
	// moved is where the co-tenant moved the original ("" when in place);
	// impostor is the identity of the directory it put at path.
	moved    string
	symlink  bool
	impostor lease.FileIdentity
	repairAt int
	// busy counts workload calls using the parent.
	busy int
}

// setupParents makes the drawn number of parents.
func (dw *dirWorld) setupParents() {
	n := 1 + dw.world.Decisions().Intn(dirParentsMax)
	for i := 0; i < n; i++ {
		path := dirleaseWork
		if i > 0 {
			path = fmt.Sprintf("%s%d", dirleaseWork, i+1)
		}
		dw.volume.FS().MkdirAll(path, 0o755, dirleaseUID)
		dw.parents = append(dw.parents, &dirParent{path: path})
	}
	if n > 1 {
		dw.world.Probe("dirlease-several-parents")
	}
}

// pickParent draws a parent for a new directory among those in place (nil
// if every one is swapped).
func (dw *dirWorld) pickParent() *dirParent {
	var in []*dirParent
	for _, parent := range dw.parents {
		if parent.moved == "" {
			in = append(in, parent)
		}
	}
	if len(in) == 0 {
		return nil
	}
	return in[dw.world.Decisions().Intn(len(in))]
}

// parentOf returns the parent of a tracked path (nil if none).
func (dw *dirWorld) parentOf(path string) *dirParent {
	dir := fspath.Dir(path)
	for _, parent := range dw.parents {
		if parent.path == dir {
			return parent
		}
	}
	return nil
}

// parentSwapped reports whether path's parent is swapped now.
func (dw *dirWorld) parentSwapped(path string) bool {
	parent := dw.parentOf(path)
	return parent != nil && parent.moved != ""
}

// using runs f while path's parent is marked busy (the co-tenant leaves it
// alone).
func (dw *dirWorld) using(path string, f func()) {
	parent := dw.parentOf(path)
	if parent != nil {
		parent.busy++
		defer func() { parent.busy-- }()
	}
	f()
}

// claimsBusy reports whether any mutation claim is held in the claim
// directory.
func (dw *dirWorld) claimsBusy() bool {
	entries, err := dw.volume.Root().ReadDir(dirClaimsPath)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name, ".mutation") {
			return true
		}
	}
	return false
}

// swapParentCandidates lists the parents the co-tenant may swap now: in
// place, unused, with a claimed directory under them, no pending publish,
// and no impostor directory of the other hazard (which the operator finds
// in the parent).
func (dw *dirWorld) swapParentCandidates() []*dirParent {
	if dw.claimsBusy() {
		return nil
	}
	var out []*dirParent
	for _, parent := range dw.parents {
		if parent.moved != "" || parent.busy > 0 {
			continue
		}
		claimed, blocked := false, false
		for _, t := range dw.sortedTracks() {
			if fspath.Dir(t.path) != parent.path {
				continue
			}
			claimed = claimed || t.claimed
			blocked = blocked || t.foreign || t.publishOut != ""
		}
		if claimed && !blocked {
			out = append(out, parent)
		}
	}
	return out
}

// swapParent moves parent away and puts an empty directory at its path, or
// (symlink) a symlink to the moved original: through it every recorded name
// still leads to the recorded directory, and only a walk that refuses
// symlinks on the path tells.
func (dw *dirWorld) swapParent(w *sim.World, parent *dirParent, symlink bool) {
	root := dw.volume.FS().View(dirleaseUID)
	dw.swaps++
	moved := fmt.Sprintf("%s.moved-%d", parent.path, dw.swaps)
	if root.Rename(parent.path, moved) != nil {
		return
	}
	var err error
	if symlink {
		err = root.Symlink(moved, parent.path)
	} else {
		err = root.Mkdir(parent.path, 0o755)
	}
	if err != nil {
		panic(fmt.Sprintf("sim: dirlease parent swap: %v", err))
	}
	workkit.SyncRoot(root, dirleaseHome)
	parent.moved, parent.symlink, parent.impostor = moved, symlink, mustIdentity(root, parent.path)
	parent.repairAt = w.Step() + 1 + w.Decisions().Intn(dirRepairDelayMax)
	w.Tracef("cotenant parent-swap %s -> %s symlink=%v", parent.path, moved, symlink)
	if symlink {
		w.Probe("cotenant-symlink-parent")
	} else {
		w.Probe("cotenant-parent-swapped")
	}
}

// repairParents is the operator: it removes each impostor parent whose
// time has come (all when force is set) and moves the original back. The
// impostor must be empty: nothing the workload does creates in a swapped
// parent, and a recovery that refuses leaves it alone.
func (dw *dirWorld) repairParents(force bool) {
	root := dw.volume.Root()
	for _, parent := range dw.parents {
		if parent.moved == "" || (!force && dw.world.Step() < parent.repairAt) {
			continue
		}
		if entries, err := root.ReadDir(parent.path); !parent.symlink && (err != nil || len(entries) > 0) {
			dw.fail(fmt.Errorf("the impostor parent %s put by the co-tenant is not empty at its repair (%v, %d entries): "+
				"an engine acted in it", parent.path, err, len(entries)), false)
			return
		}
		if id := mustIdentity(root, parent.path); id != parent.impostor {
			panic(fmt.Sprintf("sim: dirlease operator: the impostor parent %s changed identity", parent.path))
		}
		if err := root.Remove(parent.path); err != nil {
			panic(fmt.Sprintf("sim: dirlease operator: remove %s: %v", parent.path, err))
		}
		if err := root.Rename(parent.moved, parent.path); err != nil {
			panic(fmt.Sprintf("sim: dirlease operator: restore %s: %v", parent.path, err))
		}
		workkit.SyncRoot(root, dirleaseHome)
		parent.moved = ""
		dw.world.Probe("dirlease-operator-parent-repair")
	}
}

// judgeClaimRelease fails the run when a recovery removes the claim file of
// a claim whose recorded parent is swapped now: it released a claim whose
// directory it cannot have verified (the parent check was skipped).
func (f *dirFS) judgeClaimRelease(name string) {
	if !f.recovering || fspath.Dir(name) != dirClaimsPath || !strings.HasSuffix(name, ".json") {
		return
	}
	data, err := workkit.ReadRoot(f.dw.volume.Root(), name)
	var claim struct {
		Path       string `json:"path"`
		ParentPath string `json:"parentPath"`
	}
	if err != nil || json.Unmarshal(data, &claim) != nil {
		return
	}
	if f.dw.parentSwapped(claim.Path) {
		f.dw.fail(fmt.Errorf("%s's recovery released the claim %s on %s while its recorded parent %s was swapped by a "+
			"co-tenant (another directory at the path): it acted on a claim it cannot have verified", f.p.Name(),
			name, claim.Path, claim.ParentPath), false)
	}
}

// mustIdentity returns name's physical identity through a root view.
func mustIdentity(root lease.FS, name string) lease.FileIdentity {
	info, err := root.Lstat(name)
	if err != nil {
		panic(fmt.Sprintf("sim: dirlease: lstat %s: %v", name, err))
	}
	id, ok := info.Identity()
	if !ok {
		panic(fmt.Sprintf("sim: dirlease: %s has no identity", name))
	}
	return id
}

// noteRefusal fires the probes of a recovery's typed refusal caused by the
// co-tenant.
func (dw *dirWorld) noteRefusal(err error) {
	switch {
	case errors.Is(err, dirlease.ErrChanged) && strings.Contains(err.Error(), "parent changed"):
		dw.world.Probe("dirlease-parent-changed-refused")
	case errors.Is(err, dirlease.ErrNotOwnedDirectory) && strings.Contains(err.Error(), "symlink"):
		dw.world.Probe("dirlease-symlink-refused")
	}
}
