package lease

import (
	"context"
	"fmt"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
)

// Release removes the lease if generation is current and the owner's rootId
// is this Manager's. The generation is a capability: whoever presents it
// (any process, any session) may release, exactly as in the original; Release
// does not check that the caller is the owning process. Keep generations
// private to the holder.
//
// Under the guard, receiver.lock is renamed to a private
// .receiver.released-<generation>-<id> directory (fsynced: from here on the
// lease is free), and that directory is then removed. If the removal fails,
// Kind is still Released and the error says which leftover remains; a later
// call removes it.
func (m *Manager) Release(ctx context.Context, generation string) (ReleaseResult, error) {
	if err := checkGeneration(generation); err != nil {
		return ReleaseResult{}, err
	}
	c, refusal, err := m.begin(ctx)
	if err != nil {
		return ReleaseResult{}, err
	}
	if !refusal.IsZero() {
		return ReleaseResult{Kind: ReleaseRefused, Refusal: refusal}, nil
	}
	var result ReleaseResult
	refusal, err = m.withGuard(c, func() error {
		var err error
		result, err = m.releaseHeld(c, generation)
		return err
	})
	if !refusal.IsZero() {
		result = ReleaseResult{Kind: ReleaseRefused, Refusal: refusal}
	}
	if err == nil && result.Kind == 0 {
		panic("lease: release finished without a result")
	}
	return result, err
}

func (m *Manager) releaseHeld(c *call, generation string) (ReleaseResult, error) {
	if err := m.cleanLeftovers(c); err != nil {
		return ReleaseResult{}, err
	}
	projection, _, receiver, err := m.projectWithInfo(c.uid)
	if err != nil {
		return ReleaseResult{}, err
	}
	switch projection.Kind {
	case Empty:
		return ReleaseResult{Kind: NotOwner, Why: "no lease is held"}, nil
	case Corrupt:
		return ReleaseResult{Kind: ReleaseRefused, Refusal: Refusal{
			Reason: RefusalCorruptOwner, Diagnostic: projection.Diagnostic, Human: projection.Human}}, nil
	}
	owner := projection.Owner
	if owner.Generation != generation {
		return ReleaseResult{Kind: NotOwner, Owner: &owner, Why: fmt.Sprintf(
			"generation %s is not current; the lease has generation %s", generation, owner.Generation)}, nil
	}
	if owner.RootID != m.rootID {
		return ReleaseResult{Kind: NotOwner, Owner: &owner, Why: fmt.Sprintf(
			"the lease belongs to root %q, this manager serves root %q", owner.RootID, m.rootID)}, nil
	}
	released := fspath.Join(m.namespace, releasedPrefix+safePathPart(generation)+"-"+safePathPart(m.ids.NewID()))
	if err := m.renameNoReplace(m.receiverPath(), released); err != nil {
		return ReleaseResult{}, fmt.Errorf("lease: releasing receiver.lock: %w", err)
	}
	if err := statefile.SyncDir(m.fs, m.namespace); err != nil {
		return ReleaseResult{}, err
	}
	result := ReleaseResult{Kind: Released}
	removed, err := m.removeLeftoverDir(c, released, &receiver)
	if err != nil {
		return result, fmt.Errorf("lease: released, but removing %s failed (a later call retries): %w", released, err)
	}
	if !removed {
		return result, fmt.Errorf("lease: released, but %s is not the receiver.lock judged (swapped before the rename?); "+
			"it is left for an operator", released)
	}
	// No fsync for the removal: if a power loss undoes it, the
	// .receiver.released-* directory comes back as a leftover that leftover
	// cleanup removes (docs/BENCH.md, "fsyncs per acquire and per release").
	return result, nil
}
