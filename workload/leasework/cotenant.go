package leasework

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The hostile co-tenant (sim.FaultCotenant, same uid) hard-links a live
// record of the namespace (the epoch counter and its issued mark, owner.json, the lifecycle
// guard) under a name of its own outside the state tree. The engine must
// never write through another name of a record's inode: every record is
// published by writing a temporary and renaming it over the name, so the
// co-tenant's link keeps the bytes it had (checkLinks). An engine that
// rewrote a record in place (open O_TRUNC) would rewrite the co-tenant's
// file, outside everything it owns.

// leaseOutside is the co-tenant's directory on each volume.
const leaseOutside = "/outside"

// leaseLinksMax bounds the co-tenant's links per space.
const leaseLinksMax = 4

// leaseLink is one hard link the co-tenant made and the bytes it held.
type leaseLink struct {
	space *leaseSpace
	path  string
	data  []byte
}

// setupCotenant registers the co-tenant's hook and its check. The
// co-tenant makes its directory at its first firing, so a run without the
// fault is the run it was before the co-tenant existed.
func (lw *leaseWorld) setupCotenant() {
	lw.world.FaultHook(sim.FaultCotenant, lw.cotenant)
	lw.world.Invariant("lease-cotenant", lw.checkLinks)
}

// cotenant is the FaultCotenant hook: it links one valid record of a space
// outside the state tree.
func (lw *leaseWorld) cotenant(w *sim.World) {
	d := w.Decisions()
	space := lw.spaces[d.Intn(len(lw.spaces))]
	if lw.opts.CotenantSymlinks >= 0 && d.Intn(2) == 0 {
		lw.plantSymlink(w, space)
		return
	}
	if space.links >= leaseLinksMax || space.unsafeLinks > 0 {
		return
	}
	root := space.cotenant()
	var targets []string
	for _, name := range []string{fspath.Join(leaseNamespace, "receiver.epoch.json"), leaseEpochIssuedPath, leaseOwnerPath, leaseGuardPath} {
		if info, err := root.Lstat(name); err == nil && info.IsRegular() {
			targets = append(targets, name)
		}
	}
	if len(targets) == 0 {
		return
	}
	target := targets[d.Intn(len(targets))]
	space.volume.FS().MkdirAll(leaseOutside, 0o700, leaseUID)
	data, err := workkit.ReadRoot(root, target)
	if err != nil {
		return
	}
	space.links++
	link := fspath.Join(leaseOutside, fmt.Sprintf("link-%d", space.links))
	if root.Link(target, link) != nil {
		return
	}
	workkit.SyncRoot(root, leaseOutside)
	lw.links = append(lw.links, leaseLink{space: space, path: link, data: data})
	w.Tracef("cotenant hardlink %s -> %s", link, target)
	w.Probe("cotenant-hardlink")
}

// leaseLinkCheckEvery is how many steps apart checkLinks reads the links:
// reading them at every step cost a third of a lease campaign, and a record
// rewritten in place stays rewritten, so a later look still sees it.
const leaseLinkCheckEvery = 64

// checkLinks fails the run if a co-tenant's link now holds another valid
// record: an engine rewrote the inode. Garbage is the corruption hooks'
// in-place garble, and the link is dropped.
func (lw *leaseWorld) checkLinks() error {
	if len(lw.links) == 0 || lw.world.Step()%leaseLinkCheckEvery != 0 {
		return nil
	}
	kept := lw.links[:0]
	for _, link := range lw.links {
		data, err := workkit.ReadRoot(link.space.volume.Root(), link.path)
		switch {
		case err == nil && bytes.Equal(data, link.data):
			kept = append(kept, link)
		case err == nil && !json.Valid(data):
			// The corrupt hooks garble a record in place, never into valid
			// JSON (workkit.Garble; a write of theirs cut short by an
			// injected error leaves a prefix): the link went with it.
		default:
			return fmt.Errorf("%s, a hard link outside the state tree to a lease record, changed (%v, %q, was %q): an "+
				"engine wrote a record in place", link.path, err, data, link.data)
		}
	}
	lw.links = kept
	return nil
}
