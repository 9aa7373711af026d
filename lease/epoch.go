package lease

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/leasekit/leasekit/internal/statefile"
)

// The epoch counter (receiver.epoch.json) and its issued mark
// (receiver.epoch.issued.json). Both hold the same record ({"epoch":N,
// "schema":1}); every write of the counter writes the issued mark first:
// both temps written and fsynced, the mark renamed into place, then the
// counter, and one fsync of the namespace makes both names durable before
// any owner carries the epoch. A process crash between the renames leaves
// the mark above the counter; a power loss before the namespace fsync may
// keep either rename without the other, but no owner carries that epoch
// yet, so the evidence still covers every epoch an owner carries (and
// nextEpoch builds on the larger of the two). A release leaves both in place. When the
// counter is torn or corrupted, the mark still proves the highest epoch
// issued, and ForceReclaim refuses an epoch floor below it: a lower floor
// would hand out an epoch again.

// epochFile is what one of the two epoch files holds.
type epochFile struct {
	path    string
	present bool
	valid   bool
	value   uint64
	data    []byte
	// problem says why a present file is invalid; changed that it was
	// replaced while read (a writer under the guard, not corruption).
	problem string
	changed bool
}

// describe says what the file is, for diagnostics.
func (f epochFile) describe() string {
	switch {
	case !f.present:
		return f.path + " is missing"
	case !f.valid:
		return fmt.Sprintf("%s is invalid (%s)", f.path, f.problem)
	}
	return fmt.Sprintf("%s holds %d", f.path, f.value)
}

// corrupt reports whether the file is there and unusable.
func (f epochFile) corrupt() bool { return f.present && !f.valid }

func (m *Manager) readEpochFile(path string, uid uint32) (epochFile, error) {
	f := epochFile{path: path}
	data, err := statefile.ReadOwnedFile(m.fs, path, epochBytesMax, uid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil && !isBadFile(err):
		return f, fmt.Errorf("lease: reading %s: %w", path, err)
	}
	f.present, f.data = true, data
	if err == nil {
		f.value, err = parseEpochCached(data)
	}
	if err != nil {
		f.problem, f.changed = err.Error(), statefile.IsError[*statefile.ChangedError](err)
		return f, nil
	}
	f.valid = true
	return f, nil
}

// epochEvidence is what a namespace can still prove of the epochs it
// issued: the two epoch files and the current owner's epoch.
type epochEvidence struct {
	counter, issued epochFile
	// ownerEpoch is the current owner's epoch (0: none): the latest grant,
	// so the highest epoch issued.
	ownerEpoch uint64
	// proven is the highest epoch proven issued (0: none), provenBy the
	// file that proves it.
	proven   uint64
	provenBy string
}

// readEpochEvidence reads both epoch files; ownerEpoch (0: no owner) is
// the current owner's, whose owner.json proves it.
func (m *Manager) readEpochEvidence(uid uint32, ownerEpoch uint64) (epochEvidence, error) {
	counter, err := m.readEpochFile(m.epochPath(), uid)
	if err != nil {
		return epochEvidence{}, err
	}
	issued, err := m.readEpochFile(m.epochIssuedPath(), uid)
	if err != nil {
		return epochEvidence{}, err
	}
	ev := epochEvidence{counter: counter, issued: issued, ownerEpoch: ownerEpoch}
	for _, proof := range []struct {
		valid bool
		value uint64
		path  string
	}{{issued.valid, issued.value, issued.path}, {counter.valid, counter.value, counter.path},
		{ownerEpoch > 0, ownerEpoch, m.ownerPath()}} {
		if proof.valid && proof.value > ev.proven {
			ev.proven, ev.provenBy = proof.value, proof.path
		}
	}
	return ev, nil
}

// stored is the epoch the next acquire builds on: the larger valid file.
func (ev epochEvidence) stored() uint64 {
	var stored uint64
	if ev.counter.valid {
		stored = ev.counter.value
	}
	if ev.issued.valid {
		stored = max(stored, ev.issued.value)
	}
	return stored
}

// unproven reports whether a corrupt epoch file hides what was issued and
// nothing is left to prove it: no valid epoch file, and no owner (the
// current owner is the latest grant, so its epoch is the highest issued).
func (ev epochEvidence) unproven() bool {
	return !ev.counter.valid && !ev.issued.valid && ev.ownerEpoch == 0 && (ev.counter.present || ev.issued.present)
}

// blocked is the corrupt epoch file that blocks acquires, if any: the
// counter first.
func (ev epochEvidence) blocked() (epochFile, bool) {
	if ev.counter.corrupt() {
		return ev.counter, true
	}
	if ev.issued.corrupt() {
		return ev.issued, true
	}
	return epochFile{}, false
}

// advice says where the evidence of the highest epoch issued is and what
// an operator must do with it.
func (ev epochEvidence) advice() string {
	if ev.unproven() {
		return fmt.Sprintf("no valid record of the highest epoch issued is left (%s; %s): an operator must force "+
			"the epoch counter with an epoch floor of at least the largest epoch the fenced resources saw, "+
			"confirming that nothing here proves it", ev.counter.describe(), ev.issued.describe())
	}
	return fmt.Sprintf("the highest epoch this namespace can still prove issued is %d (%s, which release "+
		"leaves in place): an operator must force the epoch counter with an epoch floor of at least %d",
		ev.proven, ev.provenBy, ev.proven)
}

// refusal is nextEpoch's refusal of the evidence, or the zero Refusal.
func (ev epochEvidence) refusal() Refusal {
	if bad, ok := ev.blocked(); ok {
		return Refusal{Reason: RefusalCorruptEpoch, Human: HumanCorruptEpoch, Diagnostic: fmt.Sprintf(
			"%s %s is invalid (%s); %s", epochFileName(bad, ev), bad.path, bad.problem, ev.advice())}
	}
	if stored := ev.stored(); stored >= epochMax {
		return Refusal{Reason: RefusalCorruptEpoch, Human: HumanCorruptEpoch, Diagnostic: fmt.Sprintf(
			"epoch counter %s holds epoch %d, the largest an epoch may be: no later epoch can exceed it; "+
				"an operator must retire this namespace", ev.counter.path, stored)}
	}
	return Refusal{}
}

// epochFileName names f for a diagnostic.
func epochFileName(f epochFile, ev epochEvidence) string {
	if f.path == ev.issued.path {
		return "epoch issued mark"
	}
	return "epoch counter"
}

// writeEpoch makes both epoch files hold epoch, durably: the issued mark's
// rename first, so that no process crash leaves the counter above it, and
// one namespace fsync for both names (see the top of this file).
func (m *Manager) writeEpoch(epoch uint64) error {
	data := encodeEpoch(epoch)
	err := statefile.ReplaceAtomicAll(m.fs, m.ids, epochTempTag,
		statefile.Replacement{Name: m.epochIssuedPath(), Data: data}, statefile.Replacement{Name: m.epochPath(), Data: data})
	if err != nil {
		return fmt.Errorf("lease: writing the epoch issued mark and counter: %w", err)
	}
	return nil
}
