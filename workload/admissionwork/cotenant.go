package admissionwork

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/admission"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The hostile co-tenant (sim.FaultCotenant, same uid): it moves the slot
// record out of the state tree, to a file of its own, and plants a symlink
// to it at the slot's path. Through the link the record is still a valid
// one (the same bytes, the same owner), so only an engine that refuses to
// follow a symlink (lstat, O_NOFOLLOW) tells: the slot is corrupt
// (models.AdmissionCorruption, as a garbled record) until the operator
// removes the link. An engine that follows it acts on an object that is
// not its record: the model catches its answers, and the file outside the
// state tree must never change (checkOutside). When it can, the hook
// swaps another live owner's earlier record in instead (swapin.go).

// admissionOutside is the co-tenant's own copy of the record, outside the
// state tree.
const admissionOutside = "/home/outside/slot.json"

// cotenant is the FaultCotenant hook.
func (aw *admissionWorld) cotenant(w *sim.World) {
	if aw.loose.Fire(w) {
		return
	}
	if current, sources := aw.swapCandidates(); len(sources) > 0 && w.Decisions().Intn(2) == 0 {
		aw.swapInRecord(w, current, sources[w.Decisions().Intn(len(sources))])
		return
	}
	if aw.corrupted || aw.outsideData != nil || aw.swap != nil || aw.claimBusy() {
		return
	}
	root := aw.volume.FS().View(admissionUID)
	data, err := workkit.ReadRoot(root, admissionFile)
	if err != nil || len(data) == 0 || data[0] != '{' {
		return
	}
	aw.volume.FS().MkdirAll(fspath.Dir(admissionOutside), 0o700, admissionUID)
	if root.Rename(admissionFile, admissionOutside) != nil {
		return
	}
	if err := root.Symlink(admissionOutside, admissionFile); err != nil {
		panic(fmt.Sprintf("sim: admission co-tenant: %v", err))
	}
	workkit.SyncRoot(root, fspath.Dir(admissionFile))
	workkit.SyncRoot(root, fspath.Dir(admissionOutside))
	info, err := root.Lstat(admissionFile)
	if err != nil {
		panic(fmt.Sprintf("sim: admission co-tenant: %v", err))
	}
	aw.outsideData, aw.symlinked = data, true
	aw.outsideChecked.Forget()
	aw.symlinkID, _ = info.Identity()
	aw.corrupted, aw.corruption = true, nil
	aw.slot.Spoil()
	aw.repairAt = w.Step() + 1 + w.Decisions().Intn(admissionRepairDelayMax)
	aw.legacy = false
	w.RecordEvent("corrupt", models.AdmissionCorruption{})
	w.Tracef("cotenant symlink %s -> %s", admissionFile, admissionOutside)
	w.Probe("cotenant-symlink-planted")
}

// repairSymlink is the operator's repair of a planted symlink: it removes
// the link (the record it points at is the co-tenant's now), once no process
// is inside a compare-and-swap.
func (aw *admissionWorld) repairSymlink(force bool) {
	if !force && aw.claimBusy() {
		return
	}
	root := aw.volume.Root()
	info, err := root.Lstat(admissionFile)
	if id, ok := info.Identity(); err != nil || !ok || id != aw.symlinkID {
		aw.fail(fmt.Errorf("the symlink the co-tenant planted at %s changed before its repair (%v): the engine replaced it",
			admissionFile, err), false)
		return
	}
	if err := root.Remove(admissionFile); err != nil {
		aw.fail(fmt.Errorf("operator repair of %s: %v", admissionFile, err), false)
		return
	}
	workkit.SyncRoot(root, fspath.Dir(admissionFile))
	aw.corrupted, aw.symlinked = false, false
	aw.slot.Spoil()
	aw.world.RecordEvent("clear", models.AdmissionClear{})
	aw.world.Probe("admission-operator-repair-symlink")
}

// checkOutside fails the run if the co-tenant's file outside the state tree
// changed: an engine followed the symlink and wrote through it.
func (aw *admissionWorld) checkOutside() {
	if aw.outsideData == nil || aw.outsideChecked.Still(aw.volume) {
		return
	}
	data, err := workkit.ReadRoot(aw.volume.Root(), admissionOutside)
	if err != nil || !bytes.Equal(data, aw.outsideData) {
		aw.fail(fmt.Errorf("%s, outside the state tree, changed (%v, %q): an engine followed the symlink the co-tenant "+
			"planted at %s", admissionOutside, err, data, admissionFile), false)
		return
	}
	aw.outsideChecked.Mark(aw.volume)
}

// noteSymlinkRefusal fires the refusal probe: an acquire refused, typed
// (ErrUnsafe: not a regular file), while the slot was a planted symlink.
func (aw *admissionWorld) noteSymlinkRefusal(err error) {
	if aw.symlinked && errors.Is(err, admission.ErrUnsafe) {
		aw.world.Probe("admission-symlink-refused")
	}
}
