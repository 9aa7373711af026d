package leasework

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The co-tenant's symlinks (sim.FaultCotenant, same uid). It moves one
// entry the lease engine opens, renames or removes out of the state tree,
// to /outside/sym-N, and plants a symlink at its name: to the moved
// original (the same bytes, or the same directory, outside the tree), or
// dangling (to a name that does not exist). The engine opens its entries
// with O_NOFOLLOW, checks its directories with Lstat and renames or removes
// links as links, so it must refuse, typed, and never act on what the link
// names: the moved original, and the missing name of a dangling link, never
// change (checkSymlinkTarget, at the repair, at the end of the run, and
// just before a power loss of the space's only host: powerloss.go).
//
// Kinds and what the engine and the model make of them:
//   - owner (receiver.lock/owner.json) and receiver (receiver.lock): the
//     owner record is unreadable, corrupt-owner (LeaseCorruption, as a
//     garbled owner); the operator moves receiver.lock into quarantine
//     (LeaseClear), the garble repair.
//   - guard and intent: a corrupt lifecycle record (no model event, as a
//     garbled one); the operator removes the link once the writer the
//     original names is dead.
//   - epoch (receiver.epoch.json): corrupt-epoch (LeaseEpochCorruption);
//     the operator removes the link and moves the original back
//     (LeaseEpochRepair), unless the engine already replaced the link.
//   - namespace, quarantine, reclaims (the namespace and its two
//     directories): every call is refused unsafe-namespace, an outcome the
//     model has no state for, so those calls are recorded with an unknown
//     outcome; the lease itself is untouched behind the link. The operator
//     removes the link and moves the directory back. These kinds are
//     planted only while no engine call of the space is in flight: a call
//     past its directory checks resolves its paths through the namespace
//     (every component but the last is followed, O_NOFOLLOW or not), which
//     the engine does not claim to defend.
//
// The namespace's ancestors (/state) are not planted: the engine follows
// them by design (the caller's path, /var/run -> /run), so a link there
// is the caller's choice, not an attack the engine can see.

// leaseSymlinkFileKinds and leaseSymlinkDirKinds are the planted kinds; the
// directory kinds are planted only while the space is idle.
var (
	leaseSymlinkFileKinds = []string{"owner", "guard", "intent", "epoch"}
	leaseSymlinkDirKinds  = []string{"receiver", "namespace", "quarantine", "reclaims"}
)

// leaseSymlinksMax bounds the co-tenant's symlinks per space.
const leaseSymlinksMax = 3

// leaseEpochPath is the epoch counter's path.
var leaseEpochPath = fspath.Join(leaseNamespace, "receiver.epoch.json")

// leaseSymlink is one symlink the co-tenant planted.
type leaseSymlink struct {
	kind string
	// path is where the link is; moved where the original went; target
	// what the link names (moved, or a missing name: dangling).
	path, moved, target string
	dangling            bool
	// before is the moved original's snapshot (treeSnapshot).
	before string
	id     lease.FileIdentity
	// repairAt is the step of the operator's repair (the kinds repaired
	// here; the others are the space's corruptions, leaseCorruption).
	repairAt int
}

// symlinkPath returns the path of a kind, or "" when the space has nothing
// of that kind to replace right now.
func (lw *leaseWorld) symlinkPath(space *leaseSpace, kind string, d *sim.Decisions) string {
	root := space.cotenant()
	regular := func(name string) string {
		if info, err := root.Lstat(name); err == nil && info.IsRegular() {
			return name
		}
		return ""
	}
	directory := func(name string) string {
		if info, err := root.Lstat(name); err == nil && info.IsDir() {
			return name
		}
		return ""
	}
	switch kind {
	case "owner":
		if space.ownerCorrupted || directory(leaseReceiver()) == "" || !lw.validRecord(root, leaseOwnerPath) {
			return ""
		}
		return leaseOwnerPath
	case "receiver":
		if space.ownerCorrupted || !lw.validRecord(root, leaseOwnerPath) {
			return ""
		}
		return directory(leaseReceiver())
	case "guard":
		if !lw.corruptable(space, leaseGuardPath) {
			return ""
		}
		return regular(leaseGuardPath)
	case "intent":
		entries, _ := root.ReadDir(leaseReclaimsPath)
		var intents []string
		for _, e := range entries {
			if name := fspath.Join(leaseReclaimsPath, e.Name); strings.HasPrefix(e.Name, "reclaim.") && lw.corruptable(space, name) {
				intents = append(intents, name)
			}
		}
		if len(intents) == 0 {
			return ""
		}
		return intents[d.Intn(len(intents))]
	case "epoch":
		if space.epochLinked || space.epochTear != nil {
			return ""
		}
		return regular(leaseEpochPath)
	case "namespace":
		return directory(leaseNamespace)
	case "quarantine":
		return directory(leaseQuarantinePath)
	case "reclaims":
		return directory(leaseReclaimsPath)
	}
	panic("leasework: symlink kind " + kind)
}

func (lw *leaseWorld) validRecord(root lease.FS, name string) bool {
	data, err := workkit.ReadRoot(root, name)
	_, ok := lw.parseRecord(data)
	return err == nil && ok
}

// spaceIdle reports whether no live process of space is inside an engine
// call (the paused-holder and guard operators count as inside one while
// they live: their calls are not watched).
func (lw *leaseWorld) spaceIdle(space *leaseSpace) bool {
	for _, p := range lw.world.Procs() {
		if p.Alive() && lw.spaceOf[p.Host()] == space && (p.InCall() || lw.paused.isOperator(p) || lw.guardOperators[p] || lw.epochOperators[p]) {
			return false
		}
	}
	return true
}

// plantSymlink is the co-tenant's symlink: it draws a kind the space has
// now, moves the original out and plants the link.
func (lw *leaseWorld) plantSymlink(w *sim.World, space *leaseSpace) {
	d := w.Decisions()
	if space.unsafeLinks > 0 || len(space.symlinks)+space.linkedCorruptions() >= leaseSymlinksMax {
		return
	}
	if info, err := space.cotenant().Lstat(leaseQuarantinePath); err != nil || !info.IsDir() {
		return // not initialised yet
	}
	kinds := leaseSymlinkFileKinds
	if len(space.symlinks) == 0 && lw.spaceIdle(space) {
		kinds = append(append([]string(nil), kinds...), leaseSymlinkDirKinds...)
	}
	kind := kinds[d.Intn(len(kinds))]
	path := lw.symlinkPath(space, kind, d)
	if path == "" {
		return
	}
	dangling := d.Intn(3) == 0
	lw.plantLink(space, kind, path, dangling, w.Step()+1+d.Intn(leaseRepairDelayMax))
}

// plantLink moves the entry of kind at path out to /outside/sym-N and
// plants the link there (to the moved original, or dangling), with its
// repair due at repairAt; it draws nothing.
func (lw *leaseWorld) plantLink(space *leaseSpace, kind, path string, dangling bool, repairAt int) {
	w, root := lw.world, space.cotenant()
	var writer leaseWriter
	if kind == "guard" || kind == "intent" {
		data, _ := workkit.ReadRoot(root, path)
		record, _ := lw.parseRecord(data)
		writer = leaseWriter{host: record.Hostname, ns: record.PIDNamespace, pid: record.PID, startTicks: record.Start}
		if record.Boot != nil {
			writer.boot = *record.Boot
		}
	}
	space.volume.FS().MkdirAll(leaseOutside, 0o700, leaseUID)
	space.hostileSerial++
	link := &leaseSymlink{kind: kind, path: path, moved: fspath.Join(leaseOutside, fmt.Sprintf("sym-%d", space.hostileSerial)),
		dangling: dangling, repairAt: repairAt}
	link.target = link.moved
	if link.dangling {
		link.target = link.moved + ".missing"
	}
	if root.Rename(path, link.moved) != nil {
		return
	}
	if err := root.Symlink(link.target, path); err != nil {
		panic(fmt.Sprintf("sim: lease co-tenant symlink at %s: %v", path, err))
	}
	syncAncestors(root, path)
	workkit.SyncRoot(root, leaseOutside)
	info, err := root.Lstat(path)
	id, ok := info.Identity()
	if err != nil || !ok {
		panic(fmt.Sprintf("sim: lease co-tenant symlink at %s: %v", path, err))
	}
	link.id, link.before = id, treeSnapshot(root, link.moved)
	space.linkIDs = append(space.linkIDs, id)
	lw.recordSymlink(w, space, link, writer)
	variant := "copy"
	if link.dangling {
		variant = "dangling"
	}
	w.Probe("lease-cotenant-symlink-" + kind)
	w.Probe("lease-cotenant-symlink-" + variant)
	w.Tracef("cotenant symlink %s %s -> %s", kind, path, link.target)
}

// syncAncestors makes the link's name durable: its directory and every
// directory above it, so a power loss cannot take the link away with a
// namespace whose own entry no engine had fsynced yet (the ledger would
// then wait for a repair of a link that is gone: a false alarm, finding
// violation-aee7b7799ca2e3de).
func syncAncestors(root lease.FS, path string) {
	for dir := fspath.Dir(path); ; dir = fspath.Dir(dir) {
		workkit.SyncRoot(root, dir)
		if dir == "/" {
			return
		}
	}
}

// recordSymlink files a planted link with its repair and model event.
func (lw *leaseWorld) recordSymlink(w *sim.World, space *leaseSpace, link *leaseSymlink, writer leaseWriter) {
	switch link.kind {
	case "owner", "receiver", "guard", "intent":
		space.corruptions = append(space.corruptions, leaseCorruption{kind: link.kind, path: link.path, link: link,
			writer: writer, repairAt: link.repairAt})
		if link.kind == "owner" || link.kind == "receiver" {
			space.ownerCorrupted = true
			w.RecordEvent("corrupt", models.LeaseCorruption{Namespace: space.key})
		}
	case "epoch":
		space.epochLinked = true
		space.symlinks = append(space.symlinks, link)
		w.RecordEvent("corrupt-epoch", models.LeaseEpochCorruption{Namespace: space.key})
	default:
		space.unsafeLinks++
		space.symlinks = append(space.symlinks, link)
	}
}

// linkedCorruptions counts the corruptions that are planted links.
func (s *leaseSpace) linkedCorruptions() int {
	n := 0
	for _, c := range s.corruptions {
		if c.link != nil {
			n++
		}
	}
	return n
}

// isPlantedLink reports whether name is one of the co-tenant's symlinks
// (wherever an engine or the operator has moved it since).
func (s *leaseSpace) isPlantedLink(name string) bool {
	if len(s.linkIDs) == 0 {
		return false
	}
	info, err := s.volume.Root().Lstat(name)
	id, ok := info.Identity()
	if err != nil || !ok || !info.IsSymlink() {
		return false
	}
	for _, planted := range s.linkIDs {
		if planted == id {
			return true
		}
	}
	return false
}

// stillThere reports whether the link is still at its path.
func (link *leaseSymlink) stillThere(root lease.FS) bool {
	info, err := root.Lstat(link.path)
	id, ok := info.Identity()
	return err == nil && ok && id == link.id
}

// checkSymlinkTarget fails the run if what a link names changed: the
// moved original's bytes (or tree), or a dangling link's missing name that
// now exists. Either way an engine followed the link.
func (lw *leaseWorld) checkSymlinkTarget(space *leaseSpace, link *leaseSymlink) {
	root := space.volume.Root()
	now := treeSnapshot(root, link.moved)
	_, missingErr := root.Lstat(link.moved + ".missing")
	if now != link.before || !errors.Is(missingErr, fs.ErrNotExist) {
		lw.fail(fmt.Errorf("%s, outside the state tree, changed after the co-tenant planted a symlink at %s (%s) "+
			"(was %q, now %q; %s.missing: %v): an engine followed the symlink", link.moved, link.path, link.kind,
			link.before, now, link.moved, missingErr), false)
	}
}

// repairSymlinks runs the operator's repairs of the epoch and directory
// links whose time has come (all when force is set): remove the link, put
// the original back.
func (lw *leaseWorld) repairSymlinks(space *leaseSpace, force bool) {
	kept := space.symlinks[:0]
	for _, link := range space.symlinks {
		if !force && lw.world.Step() < link.repairAt {
			kept = append(kept, link)
			continue
		}
		lw.repairSymlink(space, link)
	}
	space.symlinks = kept
}

func (lw *leaseWorld) repairSymlink(space *leaseSpace, link *leaseSymlink) {
	w, root := lw.world, space.volume.Root()
	lw.checkSymlinkTarget(space, link)
	switch {
	case link.stillThere(root):
		if err := root.Remove(link.path); err != nil {
			lw.fail(fmt.Errorf("operator repair of the symlink at %s: %v", link.path, err), false)
			return
		}
		if err := root.Rename(link.moved, link.path); err != nil {
			lw.fail(fmt.Errorf("operator repair of the symlink at %s: moving %s back: %v", link.path, link.moved, err), false)
			return
		}
		workkit.SyncRoot(root, fspath.Dir(link.path))
		workkit.SyncRoot(root, leaseOutside)
		w.Probe("lease-operator-repair-symlink-" + link.kind)
	case link.kind == "epoch":
		// An acquire that had read the epoch before the link was planted
		// renamed its new epoch over the link: the counter is valid again
		// and the moved original is older than it (until a power loss
		// undoes that rename: mootLinks).
		w.Probe("lease-repair-moot-symlink-epoch")
		space.mootLinks = append(space.mootLinks, link)
	default:
		lw.fail(fmt.Errorf("the symlink the co-tenant planted at %s (%s) is gone before its repair: an engine "+
			"renamed or removed the namespace's directory", link.path, link.kind), false)
		return
	}
	if link.kind == "epoch" {
		space.epochLinked = false
		w.RecordEvent("repair-epoch", models.LeaseEpochRepair{Namespace: space.key})
	} else {
		space.unsafeLinks--
		space.unsafeClearedAt = w.Now()
	}
	space.hostileClearedAt = w.Now()
}

// excusedRefusal reports whether a refusal the model has no state for is
// the typed answer to a planted directory link: unsafe-namespace while
// one is there, or was during the call (callAt).
func (lw *leaseWorld) excusedRefusal(space *leaseSpace, refusal lease.Refusal, callAt int64) bool {
	if refusal.Reason != lease.RefusalUnsafeNamespace || (space.unsafeLinks == 0 && space.unsafeClearedAt < callAt) {
		return false
	}
	lw.world.Probe("lease-symlink-refused")
	return true
}

// noteSymlinkError fires the refusal probe for a call that failed while a
// directory link was planted (Inspect and WithCurrentLease answer an
// unsafe namespace with an error).
func (lw *leaseWorld) noteSymlinkError(space *leaseSpace, err error, callAt int64) {
	var refused *lease.RefusalError
	if errors.As(err, &refused) {
		lw.excusedRefusal(space, refused.Refusal, callAt)
	}
}

// treeSnapshot describes the file or tree at name (without following a
// link): every name under it, its type and a regular file's bytes. ""
// when nothing is there.
func treeSnapshot(root lease.FS, name string) string {
	var b strings.Builder
	var walk func(name, rel string, depth int)
	walk = func(name, rel string, depth int) {
		info, err := root.Lstat(name)
		if err != nil {
			return
		}
		switch {
		case info.IsSymlink():
			target, _ := root.Readlink(name)
			fmt.Fprintf(&b, "%s -> %s\n", rel, target)
		case info.IsDir():
			fmt.Fprintf(&b, "%s/\n", rel)
			entries, _ := root.ReadDir(name)
			for _, e := range entries {
				if depth < 4 {
					walk(fspath.Join(name, e.Name), rel+"/"+e.Name, depth+1)
				}
			}
		default:
			data, _ := workkit.ReadRoot(root, name)
			fmt.Fprintf(&b, "%s %q\n", rel, data)
		}
	}
	walk(name, ".", 0)
	return b.String()
}
