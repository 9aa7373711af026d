package lease_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// Issue 29, item 2: after leases were acquired and released, a corrupt
// epoch counter forced with a floor below the epochs issued was accepted,
// and the next lease got an epoch issued before (a fencing token going
// backwards). Released leases leave nothing in quarantine/, so the
// operator could not know better. The issued mark
// (receiver.epoch.issued.json, written before the counter, left by
// release) proves the highest epoch issued; a floor below what the
// namespace can still prove is refused, and Inspect and the refusal say
// where the evidence is.
func TestEpochFloorBelowTheEvidenceIsRefused(t *testing.T) {
	const torn = `{"epoch":5,"sch`
	cases := []struct {
		name string
		// damage changes the namespace after five leases (epochs 1..5)
		// were acquired and released.
		damage func(w *world)
		// blockerPath is the epoch file Inspect lists; provenBy the file
		// that proves epoch 5 ("" when nothing does: unproven).
		blockerPath, provenBy string
		// lowFloor is refused; floor is then accepted (with the
		// unproven confirmation when provenBy is ""); next is the next
		// lease's epoch.
		lowFloor, floor, next uint64
	}{
		{name: "the counter torn, floor 1 (the issue's report)",
			damage:      func(w *world) { w.write("receiver.epoch.json", torn) },
			blockerPath: "receiver.epoch.json", provenBy: "receiver.epoch.issued.json", lowFloor: 1, floor: 5, next: 6},
		{name: "the counter torn, a floor one below the mark",
			damage:      func(w *world) { w.write("receiver.epoch.json", torn) },
			blockerPath: "receiver.epoch.json", provenBy: "receiver.epoch.issued.json", lowFloor: 4, floor: 9, next: 10},
		{name: "the issued mark torn, the counter valid",
			damage:      func(w *world) { w.write("receiver.epoch.issued.json", torn) },
			blockerPath: "receiver.epoch.issued.json", provenBy: "receiver.epoch.json", lowFloor: 2, floor: 5, next: 6},
		{name: "both torn: nothing proves epoch 5",
			damage: func(w *world) {
				w.write("receiver.epoch.json", torn)
				w.write("receiver.epoch.issued.json", "garbage")
			},
			blockerPath: "receiver.epoch.json", provenBy: "", lowFloor: 7, floor: 7, next: 8},
		{name: "the counter torn, the mark missing (a namespace older than the mark)",
			damage: func(w *world) {
				w.write("receiver.epoch.json", torn)
				require.NoError(t, os.Remove(w.path("receiver.epoch.issued.json")))
			},
			blockerPath: "receiver.epoch.json", provenBy: "", lowFloor: 5, floor: 5, next: 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			m := w.manager(leasetest.Identity(1))
			ctx := context.Background()
			for want := uint64(1); want <= 5; want++ {
				owner := w.acquire(m).Owner
				require.Equal(t, want, owner.Epoch)
				released, err := m.Release(ctx, owner.Generation)
				require.NoError(t, err)
				require.Equal(t, lease.Released, released.Kind)
			}
			require.Empty(t, w.names("quarantine"), "released leases leave nothing in quarantine/")
			c.damage(w)

			refused := w.acquire(m)
			require.Equal(t, lease.RefusalCorruptEpoch, refused.Refusal.Reason)
			require.Contains(t, refused.Refusal.Diagnostic, w.path(c.blockerPath))
			projection := mustInspect(t, m)
			require.Len(t, projection.Blockers, 1)
			blocker := projection.Blockers[0]
			require.Equal(t, lease.BlockerEpoch, blocker.Kind)
			require.Equal(t, w.path(c.blockerPath), blocker.Path)
			if c.provenBy != "" {
				require.Equal(t, uint64(5), blocker.ProvenEpoch)
				require.Equal(t, w.path(c.provenBy), blocker.ProvenBy)
				require.False(t, blocker.EpochUnproven)
				require.Contains(t, blocker.Diagnostic, w.path(c.provenBy))
				require.Contains(t, refused.Refusal.Diagnostic, w.path(c.provenBy), "the refusal says where the evidence is")
			} else {
				require.True(t, blocker.EpochUnproven, "%+v", blocker)
				require.Zero(t, blocker.ProvenEpoch)
			}
			before := w.tree()

			low, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerEpoch, EpochFloor: c.lowFloor})
			require.NoError(t, err)
			require.Equal(t, lease.ForceRefused, low.Kind, "%+v", low)
			require.Equal(t, before, w.tree(), "a refused force changes nothing")
			if c.provenBy != "" {
				require.Equal(t, uint64(5), low.ProvenEpoch)
				require.Equal(t, w.path(c.provenBy), low.ProvenBy)
				require.Contains(t, low.Why, w.path(c.provenBy))
			} else {
				require.Contains(t, low.Why, "EpochUnprovenConfirmed")
			}

			forced, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerEpoch, EpochFloor: c.floor,
				EpochUnprovenConfirmed: c.provenBy == ""})
			require.NoError(t, err)
			require.Equal(t, lease.ForceMoved, forced.Kind, "%+v", forced)
			require.Equal(t, c.floor, forced.Epoch)
			require.NotEmpty(t, forced.QuarantinePath, "the corrupt file is kept")
			require.Empty(t, mustInspect(t, m).Blockers)
			require.Equal(t, c.next, w.acquire(m).Owner.Epoch)
			for _, name := range w.names("quarantine") {
				require.True(t, strings.HasPrefix(name, "epoch"), "only the corrupt epoch files are kept: %s", name)
			}
		})
	}
}

// The issued mark is never behind the counter after a process crash: both
// temps are written and fsynced before either rename, the mark is renamed
// first, and one namespace fsync makes both names durable before the owner
// that carries the epoch is published.
func TestEpochFilesAreDurableBeforeTheOwner(t *testing.T) {
	w := newWorld(t)
	w.acquire(w.manager(leasetest.Identity(1)))
	ops := w.fs.Ops()
	mark := opIndex(ops, "Rename", w.path("receiver.epoch.issued.json"))
	counter := opIndex(ops, "Rename", w.path("receiver.epoch.json"))
	publish := opIndex(ops, "RenameNoReplace", w.path("receiver.lock"))
	require.True(t, mark >= 0 && counter > mark && publish > counter, "mark %d, counter %d, owner %d", mark, counter, publish)
	for _, temp := range []string{ops[mark].Paths[0], ops[counter].Paths[0]} {
		require.NoError(t, leasetest.SyncedAfter(ops[:mark], "OpenFile", temp, temp), "each temp's data is fsynced before the renames")
	}
	require.NoError(t, leasetest.SyncedAfter(ops[:publish], "Rename", w.path("receiver.epoch.json"), w.ns),
		"both renames are durable before the owner is published")
	require.Equal(t, `{"epoch":1,"schema":1}`+"\n", w.read("receiver.epoch.issued.json"))
}

// opIndex is the index of the first op named name whose last path is path
// (-1: none).
func opIndex(ops []leasetest.Op, name, path string) int {
	for i, op := range ops {
		if op.Name == name && op.Paths[len(op.Paths)-1] == path {
			return i
		}
	}
	return -1
}

// An epoch counter that is not a regular file (a symlink a co-tenant
// planted, dangling or not) is corrupt, not missing: the acquire refuses,
// and Inspect names the issued mark that proves the epoch issued. Read as
// missing, it would be replaced without an operator ever seeing it.
func TestEpochCounterThatIsNoRegularFileIsRefused(t *testing.T) {
	for _, target := range []string{"elsewhere.json", "missing.json"} {
		t.Run(target, func(t *testing.T) {
			w := newWorld(t)
			m := w.manager(leasetest.Identity(1))
			owner := w.acquire(m).Owner
			_, err := m.Release(context.Background(), owner.Generation)
			require.NoError(t, err)
			outside := filepath.Join(filepath.Dir(w.ns), target)
			if target == "elsewhere.json" {
				require.NoError(t, os.WriteFile(outside, []byte(`{"epoch":1,"schema":1}`+"\n"), 0o600))
			}
			require.NoError(t, os.Remove(w.path("receiver.epoch.json")))
			require.NoError(t, os.Symlink(outside, w.path("receiver.epoch.json")))

			refused := w.acquire(m)
			require.Equal(t, lease.Refused, refused.Kind, "%+v", refused)
			require.Equal(t, lease.RefusalCorruptEpoch, refused.Refusal.Reason)
			blockers := mustInspect(t, m).Blockers
			require.Len(t, blockers, 1)
			require.Equal(t, w.path("receiver.epoch.json"), blockers[0].Path)
			require.Equal(t, uint64(1), blockers[0].ProvenEpoch)
			require.Equal(t, w.path("receiver.epoch.issued.json"), blockers[0].ProvenBy)
		})
	}
}
