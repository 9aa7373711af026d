package dirleasework

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The hostile co-tenant (sim.FaultCotenant): a process of the same user,
// outside every engine, that changes the directories and records the
// engine relies on. Each firing draws one hazard among those possible now:
//
//   - parent swapped: a claim's recorded parent moved away, an empty
//     directory or a symlink to the original put at its path (parents.go);
//   - directory recreated: a claimed directory removed and made again at its
//     path, its inode number reused with a new birth time (recreateDir);
//   - symlink at the path: a claimed directory moved away and a symlink to a
//     directory outside the state tree put at its path;
//   - symlink planted: a symlink to the outside directory put inside a
//     claimed directory, which a recovery may remove as a tree;
//   - ABA: an earlier version of a live owner's claim written back over its
//     file (restoreEarlier);
//   - another claim swapped in: a copy of one live owner's claim file
//     renamed over another live owner's (swapin.go);
//   - hard link: a live claim file linked under a name outside the state
//     tree, whose bytes must never change (an engine writes a record by
//     rename, never in place);
//   - symlink at a claim file: a live owner's claim file moved out of the
//     state tree and a symlink (to it, or dangling) put at its name, at
//     once or right after an engine's listing of the claims, before its
//     reads (symlinkclaim.go).
//
// The checks: nothing outside the state tree ever changes (checkOutside,
// checkClaimSymlinks);
// a recovery never removes a directory swapped in, or one of a live owner
// (judgeRemove); it never releases a claim whose parent is swapped
// (judgeClaimRelease); the model holds every swap and restore, so a stale
// compare-and-swap that wins is a linearizability violation.

// Paths outside the state tree the co-tenant points symlinks at.
const (
	outsideDir  = "/home/outside/victim"
	outsideFile = "/home/outside/victim/precious"
)

// inodeReuseTries bounds the scratch directories the co-tenant makes to be
// handed a freed inode number again.
const inodeReuseTries = 64

// cotenantScratch is the co-tenant's own directory (same volume, so the
// same inode numbers).
const cotenantScratch = "/home/outside/scratch"

// setupOutside makes the directory outside the state tree and remembers
// the identities the oracle checks.
func (dw *dirWorld) setupOutside() {
	dw.volume.FS().MkdirAll(cotenantScratch, 0o700, dirleaseUID)
	dw.volume.FS().MkdirAll(outsideDir, 0o700, dirleaseUID)
	root := dw.volume.FS().View(dirleaseUID)
	if err := workkit.WriteRoot(root, outsideFile, lease.O_CREATE|lease.O_EXCL, []byte("not the engine's\n")); err != nil {
		panic(fmt.Sprintf("sim: dirlease outside: %v", err))
	}
	workkit.SyncRoot(root, outsideDir)
	dw.outside = [2]lease.FileIdentity{mustIdentity(root, outsideDir), mustIdentity(root, outsideFile)}
}

// checkOutside fails the run if the outside directory or its file changed:
// an engine followed a symlink the co-tenant planted.
func (dw *dirWorld) checkOutside() {
	names, data, ok := dw.volume.Generations()
	last := dw.outsideChecked
	sameNames := ok && last.valid && last.names == names && last.links == len(dw.links)
	if sameNames && (last.data == data || len(dw.links) == 0) {
		return // nothing the check reads changed since it last passed
	}
	root := dw.volume.Root()
	if !sameNames && !dw.outsideStands(root) {
		return
	}
	for _, link := range dw.links {
		if data, err := workkit.ReadRoot(root, link.path); err != nil || !bytes.Equal(data, link.data) {
			dw.fail(fmt.Errorf("%s, a hard link outside the state tree to a claim file, changed (%v, %q, was %q): an engine "+
				"wrote a record in place", link.path, err, data, link.data), false)
			return
		}
	}
	dw.outsideChecked = outsideCheck{valid: ok, names: names, data: data, links: len(dw.links)}
}

// outsideStands reports whether the outside directory and file are the
// inodes set up, and fails the run if not. What it reads (the identity a
// root Lstat finds under a name) changes only with the volume's names, so
// checkOutside asks again only when the name generation moved.
func (dw *dirWorld) outsideStands(root lease.FS) bool {
	for i, name := range []string{outsideDir, outsideFile} {
		info, err := root.Lstat(name)
		id, ok := info.Identity()
		if err != nil || !ok || id != dw.outside[i] {
			dw.fail(fmt.Errorf("%s, outside the state tree, changed (%v): an engine followed a symlink the co-tenant planted",
				name, err), false)
			return false
		}
	}
	return true
}

// outsideCheck is what checkOutside saw at its last passing check: the
// volume's name and data generations and the links it checked. The check
// reads every link's file at every step, and with many links that was a
// sixth of a large world's run; while none of them moved, what it reads
// is what it read, so it is skipped; while no name moved, only the links'
// bytes can have changed.
type outsideCheck struct {
	valid       bool
	names, data uint64
	links       int
}

// outsideLink is a hard link the co-tenant made to a claim file, and the
// bytes it held then.
type outsideLink struct {
	path string
	data []byte
}

// linkCandidates lists the claims whose file the co-tenant may hard-link.
func (dw *dirWorld) linkCandidates() []*dirTrack {
	var out []*dirTrack
	for _, t := range dw.sortedTracks() {
		if t.claimed && t.claimID != "" && !t.linked {
			out = append(out, t)
		}
	}
	return out
}

// hardLink links t's claim file under a name outside the state tree.
func (dw *dirWorld) hardLink(w *sim.World, t *dirTrack) {
	root := dw.volume.FS().View(dirleaseUID)
	file := claimFile(t.claimID)
	data, err := workkit.ReadRoot(root, file)
	if err != nil {
		return
	}
	dw.swaps++
	link := fspath.Join(fspath.Dir(outsideDir), fmt.Sprintf("claim-link-%d", dw.swaps))
	if root.Link(file, link) != nil {
		return
	}
	workkit.SyncRoot(root, fspath.Dir(link))
	t.linked = true
	dw.links = append(dw.links, outsideLink{path: link, data: data})
	w.Tracef("cotenant hardlink %s -> %s", link, file)
	w.Probe("cotenant-hardlink")
}

// cotenant is the FaultCotenant hook.
func (dw *dirWorld) cotenant(w *sim.World) {
	if dw.loose.Fire(w) {
		return
	}
	var actions []func()
	if parents := dw.swapParentCandidates(); len(parents) > 0 {
		actions = append(actions, func() {
			dw.swapParent(w, parents[w.Decisions().Intn(len(parents))], w.Decisions().Intn(2) == 1)
		})
	}
	if tracks := dw.replaceCandidates(); len(tracks) > 0 {
		actions = append(actions, func() {
			if w.Decisions().Intn(2) == 0 {
				t := tracks[w.Decisions().Intn(len(tracks))]
				dw.replaceDir(w, t, dirReplaceKind(1+w.Decisions().Intn(2)))
				return
			}
			// A trap, preferably on a dead owner's claim (only a recovery
			// of it looks at the directory), recreating it at the next
			// recovery's check of t.path (fireTraps): the inode-reuse race.
			tracks = dw.preferDeadOwners(tracks)
			tracks[w.Decisions().Intn(len(tracks))].trap = replaceRecreate
			w.Probe("cotenant-trap-armed")
		})
	}
	if tracks := dw.plantCandidates(); len(tracks) > 0 {
		actions = append(actions, func() { dw.plantSymlink(w, tracks[w.Decisions().Intn(len(tracks))]) })
	}
	if tracks := dw.linkCandidates(); len(tracks) > 0 {
		actions = append(actions, func() { dw.hardLink(w, tracks[w.Decisions().Intn(len(tracks))]) })
	}
	if tracks := dw.abaCandidates(); len(tracks) > 0 {
		actions = append(actions, func() { dw.restoreEarlier(w, tracks[w.Decisions().Intn(len(tracks))]) })
	}
	if source, targets := dw.swapInCandidates(); source != nil {
		actions = append(actions, func() { dw.swapInClaim(w, source, targets[w.Decisions().Intn(len(targets))]) })
	}
	if tracks := dw.claimSymlinkCandidates(); len(tracks) > 0 {
		actions = append(actions, func() { dw.claimSymlinkAction(w, tracks) })
	}
	if len(actions) == 0 {
		return
	}
	actions[w.Decisions().Intn(len(actions))]()
}

// replaceCandidates lists the claimed directories the co-tenant may replace:
// made by their creator and leased, in place, under a parent in place.
func (dw *dirWorld) replaceCandidates() []*dirTrack {
	root := dw.volume.Root()
	var out []*dirTrack
	for _, t := range dw.sortedTracks() {
		if !t.claimed || !t.created || t.foreign || t.bundle || dw.parentSwapped(t.path) {
			continue
		}
		if info, err := root.Lstat(t.path); err == nil && info.IsDir() {
			out = append(out, t)
		}
	}
	return out
}

// dirReplaceKind is how the co-tenant replaces a claimed directory.
type dirReplaceKind uint8

const (
	replaceNone     dirReplaceKind = iota
	replaceRecreate                // removed and made again (recreateDir)
	replaceSymlink                 // moved away, a symlink put there (symlinkAtPath)
)

func (dw *dirWorld) replaceDir(w *sim.World, t *dirTrack, kind dirReplaceKind) {
	if kind == replaceRecreate {
		dw.recreateDir(w, t)
	} else {
		dw.symlinkAtPath(w, t)
	}
}

// preferDeadOwners returns the tracks whose owner is dead, or all if none.
func (dw *dirWorld) preferDeadOwners(tracks []*dirTrack) []*dirTrack {
	var dead []*dirTrack
	for _, t := range tracks {
		if !dw.Alive(t.owner) {
			dead = append(dead, t)
		}
	}
	if len(dead) > 0 {
		return dead
	}
	return tracks
}

// fireTraps replaces, between two steps, the directories whose armed trap a
// recovery's look sprang (dirFS.Lstat): the co-tenant races the recovery
// between its identity check and its removal, as one watching the
// directory (inotify) would.
func (dw *dirWorld) fireTraps() {
	if dw.sprung == 0 {
		return
	}
	for _, t := range dw.sortedTracks() {
		if !t.sprung {
			continue
		}
		kind := t.trap
		t.trap, t.sprung = replaceNone, false
		dw.sprung--
		if !slices.Contains(dw.replaceCandidates(), t) {
			continue
		}
		dw.world.Probe("cotenant-raced-recovery-check")
		dw.replaceDir(dw.world, t, kind)
	}
}

// disarmTraps takes back every trap armed and not yet fired when the
// liveness phase starts: the co-tenant is a fault, and faults are off there,
// so a recovery probe's look must not spring a replacement armed before.
func (dw *dirWorld) disarmTraps() {
	for _, t := range dw.sortedTracks() {
		t.trap, t.sprung = replaceNone, false
	}
	dw.sprung = 0 // every track is in sortedTracks: none is sprung now
	dw.claimSymlinks.armed, dw.claimSymlinks.sprung = false, false
}

// recreateDir removes t's directory and makes another at its path, handed
// the freed inode number when the allocator gives it back within
// inodeReuseTries scratch directories (simfs reuses the lowest free number;
// the birth time is always new).
func (dw *dirWorld) recreateDir(w *sim.World, t *dirTrack) {
	root := dw.volume.FS().View(dirleaseUID)
	old := mustIdentity(root, t.path)
	if root.Remove(t.path) != nil {
		return // not empty: a planted symlink is inside
	}
	var made []string
	reused := false
	for i := 0; i < inodeReuseTries && !reused; i++ {
		dw.swaps++
		name := fspath.Join(cotenantScratch, fmt.Sprintf("d%d", dw.swaps))
		if err := root.Mkdir(name, 0o700); err != nil {
			panic(fmt.Sprintf("sim: dirlease co-tenant: %v", err))
		}
		made = append(made, name)
		reused = mustIdentity(root, name).Ino == old.Ino
	}
	last := made[len(made)-1]
	if err := root.Rename(last, t.path); err != nil {
		panic(fmt.Sprintf("sim: dirlease co-tenant: %v", err))
	}
	for _, name := range made[:len(made)-1] {
		_ = root.Remove(name)
	}
	workkit.SyncRoot(root, fspath.Dir(t.path))
	workkit.SyncRoot(root, cotenantScratch)
	dw.markForeign(w, t, root)
	if reused {
		w.Probe("dir-inode-reused")
	}
	w.Tracef("cotenant recreate %s reused-ino=%v", t.path, reused)
	w.Probe("cotenant-dir-recreated")
}

// symlinkAtPath moves t's directory away and puts a symlink to the outside
// directory at its path.
func (dw *dirWorld) symlinkAtPath(w *sim.World, t *dirTrack) {
	root := dw.volume.FS().View(dirleaseUID)
	dw.swaps++
	if root.Rename(t.path, fmt.Sprintf("%s.moved-%d", t.path, dw.swaps)) != nil {
		return
	}
	if err := root.Symlink(outsideDir, t.path); err != nil {
		panic(fmt.Sprintf("sim: dirlease co-tenant: %v", err))
	}
	workkit.SyncRoot(root, fspath.Dir(t.path))
	dw.markForeign(w, t, root)
	w.Tracef("cotenant symlink %s -> %s", t.path, outsideDir)
	w.Probe("cotenant-symlink-at-path")
}

// markForeign records that another object is at t's path now, for the
// operator (repairDue) and the model.
func (dw *dirWorld) markForeign(w *sim.World, t *dirTrack, root lease.FS) {
	dw.setForeign(t, true)
	t.foreignID = mustIdentity(root, t.path)
	t.repairAt = w.Step() + 1 + w.Decisions().Intn(dirRepairDelayMax)
	w.RecordEvent("swap", models.DirSwap{Path: t.path})
}

// plantCandidates lists the claimed directories, still the creator's, in
// which the co-tenant may plant a symlink.
func (dw *dirWorld) plantCandidates() []*dirTrack {
	var out []*dirTrack
	for _, t := range dw.replaceCandidates() {
		if !t.planted {
			out = append(out, t)
		}
	}
	return out
}

// plantSymlink puts a symlink to the outside directory inside t's
// directory: a recovery removing the tree must unlink it, never follow it.
func (dw *dirWorld) plantSymlink(w *sim.World, t *dirTrack) {
	root := dw.volume.FS().View(dirleaseUID)
	if root.Symlink(outsideDir, fspath.Join(t.path, "link")) != nil {
		return
	}
	workkit.SyncRoot(root, t.path)
	t.planted = true
	w.Tracef("cotenant plant %s/link -> %s", t.path, outsideDir)
	w.Probe("cotenant-symlink-planted")
}

// claimFile is the claim file of a created track.
func claimFile(claimID string) string { return fspath.Join(dirClaimsPath, claimID+".json") }

// dirVersion is one version of a claim file its owner wrote.
type dirVersion struct {
	data  []byte
	phase models.DirPhase
	child *sim.Proc
}

// noteVersion records the bytes of t's claim file after its owner wrote
// them (a root read: it takes no step).
func (dw *dirWorld) noteVersion(t *dirTrack, claimID string, phase models.DirPhase, child *sim.Proc) {
	t.claimID = claimID
	data, err := workkit.ReadRoot(dw.volume.Root(), claimFile(claimID))
	if err != nil {
		t.versions = nil // unknown: the co-tenant leaves this claim alone
		return
	}
	t.versions = append(t.versions, dirVersion{data: data, phase: phase, child: child})
}

// abaCandidates lists the claims the co-tenant may roll back: a live
// owner's, with an earlier version, whose file holds the owner's last
// version, with no compare-and-swap in flight on it (a write now could
// race its commit in a way no engine can see).
func (dw *dirWorld) abaCandidates() []*dirTrack {
	root := dw.volume.Root()
	var out []*dirTrack
	for _, t := range dw.sortedTracks() {
		if !t.claimed || !t.created || len(t.versions) < 2 || !dw.Alive(t.owner) || t.aba {
			continue
		}
		file := claimFile(t.claimID)
		if _, err := root.Lstat(statecas.ClaimPath(file)); err == nil {
			continue
		}
		if data, err := workkit.ReadRoot(root, file); err == nil && bytes.Equal(data, t.versions[len(t.versions)-1].data) {
			out = append(out, t)
		}
	}
	return out
}

// restoreEarlier writes an earlier version of t's claim back over its file
// (a new file renamed over it, as an editor saves):
// preferably the earliest with the current phase and child (the A of an
// A-B-A: only a rotated revision tells it from the current one).
func (dw *dirWorld) restoreEarlier(w *sim.World, t *dirTrack) {
	last := len(t.versions) - 1
	current := t.versions[last]
	k := -1
	for i := 0; i < last && k < 0; i++ {
		if t.versions[i].phase == current.phase && t.versions[i].child == current.child {
			k = i
		}
	}
	if k < 0 {
		k = w.Decisions().Intn(last)
	}
	version := t.versions[k]
	root := dw.volume.FS().View(dirleaseUID)
	dw.swaps++
	temp := fspath.Join(cotenantScratch, fmt.Sprintf("claim-%d", dw.swaps))
	if workkit.WriteRoot(root, temp, lease.O_CREATE|lease.O_EXCL, version.data) != nil {
		return
	}
	if root.Rename(temp, claimFile(t.claimID)) != nil {
		_ = root.Remove(temp)
		return
	}
	workkit.SyncRoot(root, dirClaimsPath)
	dw.claims.Spoil()
	t.aba, t.child = true, nil // unsure from now on: never blame a recovery for it
	event := models.DirRestore{Path: t.path, Phase: version.phase}
	if version.child != nil {
		event.ChildProc, event.ChildHost, event.ChildAlive = version.child.ID(), dw.host.Name(), dw.Alive(version.child)
	}
	w.RecordEvent("restore", event)
	w.Tracef("cotenant aba %s version %d of %d", t.path, k, last)
	w.Probe("cotenant-aba-restored")
}

// OpenFile hands a recovery a directory handle whose RemoveAt is judged as
// Remove is: RemoveTree removes a verified quarantine through its parent's
// handle, never by path. It also notes, as ground truth for the history,
// whether the pass opens a claim file while it holds another claim's bytes:
// the open is the instant the pass reads that claim (the step ran, nothing
// else moved since).
func (f *dirFS) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil || !f.recovering {
		return file, err
	}
	if fspath.Dir(name) == dirClaimsPath {
		f.noteClaimRead(name)
	}
	return judgedDir{File: file, fs: f, name: name}, nil
}

// noteClaimRead records whether the pass's latest read of a claim file
// found another claim's bytes there.
func (f *dirFS) noteClaimRead(name string) {
	switch {
	case f.dw.swappedClaimFile(name):
		if f.swappedReads == nil {
			f.swappedReads = map[string]bool{}
		}
		f.swappedReads[name] = true
	case f.swappedReads[name]:
		delete(f.swappedReads, name)
		f.dw.world.Probe("dirlease-swapped-claim-read-again")
	}
}

// judgedDir is an open file of a recovery whose unlinks are judged.
type judgedDir struct {
	lease.File
	fs   *dirFS
	name string
}

func (d judgedDir) RemoveAt(name string, dir bool) error {
	d.fs.judgeRemove(fspath.Join(d.name, name))
	return d.File.RemoveAt(name, dir)
}
