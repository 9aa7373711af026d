package lease_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// Issue 19, item 8: every state that refuses every call until an operator
// acts is listed by Inspect (Projection.Blockers) and resolved by
// ForceReclaim, which moves the evidence into quarantine/ and deletes
// nothing. Before, a corrupt guard read as an empty lease and nothing in
// the library could move it.
func TestEveryBlockerIsReportedAndForcedIntoQuarantine(t *testing.T) {
	p := leasetest.Identity(1)
	holder := leasetest.Identity(7)
	remote := holder
	remote.Hostname = "host-b"
	foreign := holder
	foreign.PIDNamespace = "4026532000"
	const generation = "00000000-0000-4000-8000-0000000000aa"
	cases := []struct {
		name       string
		entry      string // relative to the namespace
		content    string
		kind       lease.BlockerKind
		human      lease.HumanState
		generation string // the record's, "" for a corrupt entry
		refusal    lease.RefusalReason
	}{
		{"corrupt guard", "receiver.lifecycle.guard.json", `{"schema":2}`, lease.BlockerGuard,
			lease.HumanCorruptGuard, "", lease.RefusalLifecycleUnverifiable},
		{"guard of invalid UTF-8", "receiver.lifecycle.guard.json", strings.Replace(guardJSON(holder, generation),
			holder.Hostname, "host-\xff", 1), lease.BlockerGuard, lease.HumanCorruptGuard, "", lease.RefusalLifecycleUnverifiable},
		{"remote guard", "receiver.lifecycle.guard.json", guardJSON(remote, generation), lease.BlockerGuard,
			lease.HumanRemoteRecord, generation, lease.RefusalLifecycleUnverifiable},
		{"guard in another pid namespace", "receiver.lifecycle.guard.json", guardJSON(foreign, generation),
			lease.BlockerGuard, lease.HumanForeignNamespace, generation, lease.RefusalLifecycleUnverifiable},
		{"corrupt intent", "lifecycle-reclaims/reclaim.x.json", "nope", lease.BlockerIntent,
			lease.HumanCorruptIntent, "", lease.RefusalLifecycleUnverifiable},
		{"remote intent", "lifecycle-reclaims/reclaim.x.json", guardJSON(remote, generation), lease.BlockerIntent,
			lease.HumanRemoteRecord, generation, lease.RefusalLifecycleUnverifiable},
		{"corrupt owner", "receiver.lock/owner.json", `{"schema":2}`, lease.BlockerReceiver,
			lease.HumanCorruptOwner, "", lease.RefusalCorruptOwner},
		{"remote owner", "receiver.lock/owner.json", ownerJSON(remote, generation, 5), lease.BlockerReceiver,
			lease.HumanRemoteRecord, generation, lease.RefusalRemoteOwner},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			m := w.manager(p)
			ctx := context.Background()
			initNamespace(t, w)
			w.write(tc.entry, tc.content)
			blocked := w.acquire(m)
			require.Equal(t, lease.Refused, blocked.Kind)
			require.Equal(t, tc.refusal, blocked.Refusal.Reason)
			require.Equal(t, tc.human, blocked.Refusal.Human)

			projection := mustInspect(t, m)
			require.Len(t, projection.Blockers, 1, "%+v", projection)
			blocker := projection.Blockers[0]
			require.Equal(t, tc.kind, blocker.Kind)
			require.Equal(t, tc.human, blocker.Human)
			require.Equal(t, tc.generation, blocker.Generation)
			require.NotEmpty(t, blocker.Diagnostic)
			want := w.path(tc.entry)
			if tc.kind == lease.BlockerReceiver {
				want = w.path("receiver.lock")
			}
			require.Equal(t, want, blocker.Path)

			request := lease.ForceRequest{Kind: blocker.Kind, Path: blocker.Path}
			if tc.generation == "" {
				// A confirmation naming a generation judged a valid record:
				// the corrupt entry there now is not it.
				before := w.tree()
				stale, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: blocker.Kind, Path: blocker.Path, Generation: generation})
				require.NoError(t, err)
				require.Equal(t, lease.ForceRefused, stale.Kind, "a corrupt entry under a generation's confirmation: %+v", stale)
				require.Contains(t, stale.Why, "corrupt now")
				require.Equal(t, before, w.tree())
			}
			if tc.kind == lease.BlockerReceiver && tc.generation == "" {
				// Nothing names the holder of a corrupt receiver.lock: it
				// may still run, so moving it needs the confirmation.
				before := w.tree()
				unconfirmed, err := m.ForceReclaim(ctx, request)
				require.NoError(t, err)
				require.Equal(t, lease.ForceRefused, unconfirmed.Kind, "an unidentified holder without confirmation: %+v", unconfirmed)
				require.Contains(t, unconfirmed.Why, lease.UnidentifiedHolderAdvice)
				require.Equal(t, tc.content, string(unconfirmed.Evidence))
				require.Equal(t, before, w.tree())
				request.HolderMayRunConfirmed = true
			}
			if tc.generation != "" {
				before := w.tree()
				wrong, err := m.ForceReclaim(ctx, request)
				require.NoError(t, err)
				require.Equal(t, lease.ForceRefused, wrong.Kind, "a valid record needs its generation as confirmation")
				require.Contains(t, wrong.Why, tc.generation)
				require.Equal(t, before, w.tree())
				request.Generation = tc.generation
			}
			forced, err := m.ForceReclaim(ctx, request)
			require.NoError(t, err)
			require.Equal(t, lease.ForceMoved, forced.Kind, "%+v", forced)
			require.Equal(t, w.path("quarantine"), filepath.Dir(forced.QuarantinePath))
			require.Equal(t, tc.content, string(forced.Evidence))
			moved := forced.QuarantinePath
			if tc.kind == lease.BlockerReceiver {
				moved = filepath.Join(moved, "owner.json")
			}
			data, err := os.ReadFile(moved)
			require.NoError(t, err)
			require.Equal(t, tc.content, string(data), "the evidence is kept, byte for byte")

			require.Empty(t, mustInspect(t, m).Blockers)
			acquired := w.acquire(m)
			require.Equal(t, lease.Acquired, acquired.Kind, "%+v", acquired)
			if tc.name == "remote owner" {
				require.Equal(t, uint64(6), acquired.Owner.Epoch, "the forced owner's epoch still bounds the next one")
			}
			again, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: blocker.Kind, Path: blocker.Path})
			require.NoError(t, err)
			if tc.kind == lease.BlockerReceiver {
				require.Equal(t, lease.ForceRefused, again.Kind, "our own live lease needs its generation")
			} else {
				require.Equal(t, lease.ForceNothing, again.Kind)
			}
		})
	}
}

// ForceReclaim never moves a record whose process is alive here, and
// leaves stale guards to the engine's own reclaim protocol.
func TestForceReclaimRefusesLiveAndLeavesStaleRecords(t *testing.T) {
	p := leasetest.Identity(1)
	holder := leasetest.Identity(7)
	const generation = "00000000-0000-4000-8000-0000000000bb"
	ctx := context.Background()
	t.Run("live guard", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		initNamespace(t, w)
		w.table.SetLive(holder)
		w.write("receiver.lifecycle.guard.json", guardJSON(holder, generation))
		before := w.tree()
		result, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerGuard, Generation: generation})
		require.NoError(t, err)
		require.Equal(t, lease.ForceRefused, result.Kind)
		require.Contains(t, result.Why, "alive")
		require.Equal(t, before, w.tree())
		require.Empty(t, mustInspect(t, m).Blockers, "a live guard is not a blocker")
	})
	t.Run("stale guard", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		initNamespace(t, w)
		w.write("receiver.lifecycle.guard.json", guardJSON(holder, generation))
		before := w.tree()
		result, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerGuard, Generation: generation})
		require.NoError(t, err)
		require.Equal(t, lease.ForceNothing, result.Kind)
		require.Equal(t, before, w.tree())
	})
	t.Run("live owner", func(t *testing.T) {
		w := newWorld(t)
		owner := w.acquire(w.manager(holder)).Owner
		before := w.tree()
		result, err := w.manager(p).ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerReceiver, Generation: owner.Generation})
		require.NoError(t, err)
		require.Equal(t, lease.ForceRefused, result.Kind)
		require.Contains(t, result.Why, "alive")
		require.Equal(t, before, w.tree())
	})
	t.Run("receiver behind a corrupt guard", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		initNamespace(t, w)
		w.write("receiver.lock/owner.json", "garbage")
		w.write("receiver.lifecycle.guard.json", "garbage")
		projection := mustInspect(t, m)
		require.Len(t, projection.Blockers, 2)
		result, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerReceiver})
		require.NoError(t, err)
		require.Equal(t, lease.ForceRefused, result.Kind, "receiver.lock is forced under the guard")
		require.Equal(t, lease.HumanCorruptGuard, result.Refusal.Human)
		for _, blocker := range []lease.BlockerKind{lease.BlockerGuard, lease.BlockerReceiver} {
			result, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: blocker, HolderMayRunConfirmed: blocker == lease.BlockerReceiver})
			require.NoError(t, err)
			require.Equal(t, lease.ForceMoved, result.Kind, "%s: %+v", blocker, result)
		}
		require.Equal(t, lease.Acquired, w.acquire(m).Kind)
		require.Len(t, w.names("quarantine"), 2)
	})
	t.Run("bad requests", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		for _, req := range []lease.ForceRequest{
			{Kind: "owner"},
			{Kind: lease.BlockerIntent, Path: w.path("receiver.lifecycle.guard.json")},
			{Kind: lease.BlockerIntent, Path: w.path("lifecycle-reclaims", "other.json")},
			{Kind: lease.BlockerEpoch},
		} {
			_, err := m.ForceReclaim(ctx, req)
			var requestErr *lease.RequestError
			require.ErrorAs(t, err, &requestErr, "%+v", req)
		}
	})
}

// A corrupt epoch counter is kept in quarantine/ and replaced by the
// operator's floor (never below the current owner's epoch); the next
// epoch is above it.
func TestForcedEpochCounterContinuesAboveTheFloor(t *testing.T) {
	w := newWorld(t)
	p := leasetest.Identity(1)
	m := w.manager(p)
	ctx := context.Background()
	first := w.acquire(m).Owner
	_, err := m.Release(ctx, first.Generation)
	require.NoError(t, err)
	w.write("receiver.epoch.json", `{"epoch":"lost"}`)
	refused := w.acquire(m)
	require.Equal(t, lease.RefusalCorruptEpoch, refused.Refusal.Reason)
	projection := mustInspect(t, m)
	require.Len(t, projection.Blockers, 1)
	require.Equal(t, lease.BlockerEpoch, projection.Blockers[0].Kind)
	require.Equal(t, lease.HumanCorruptEpoch, projection.Blockers[0].Human)

	forced, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerEpoch, EpochFloor: 41})
	require.NoError(t, err)
	require.Equal(t, lease.ForceMoved, forced.Kind)
	require.Equal(t, uint64(41), forced.Epoch)
	kept, err := os.ReadFile(forced.QuarantinePath)
	require.NoError(t, err)
	require.Equal(t, `{"epoch":"lost"}`, string(kept))
	require.Empty(t, mustInspect(t, m).Blockers)
	require.Equal(t, uint64(42), w.acquire(m).Owner.Epoch)

	lower, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerEpoch, EpochFloor: 3})
	require.NoError(t, err)
	require.Equal(t, lease.ForceNothing, lower.Kind, "a valid counter is never lowered")
	require.Equal(t, uint64(42), lower.Epoch)

	raised, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerEpoch, EpochFloor: 100})
	require.NoError(t, err)
	require.Equal(t, lease.ForceMoved, raised.Kind, "a valid counter below the floor is raised")
	require.Equal(t, uint64(100), raised.Epoch)
	require.Empty(t, raised.QuarantinePath, "nothing corrupt to keep")
	require.Equal(t, `{"epoch":100,"schema":1}`+"\n", w.read("receiver.epoch.json"))
}

// The current owner's epoch bounds the rewritten counter: a floor below it
// is refused (the owner is the latest grant, so its epoch is proven).
func TestForcedEpochCounterNeverFallsBelowTheOwner(t *testing.T) {
	w := newWorld(t)
	p := leasetest.Identity(1)
	m := w.manager(p)
	ctx := context.Background()
	initNamespace(t, w)
	w.write("receiver.lock/owner.json", ownerJSON(p, "00000000-0000-4000-8000-0000000000cc", 42))
	w.write("receiver.epoch.json", "garbage")
	low, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerEpoch, EpochFloor: 3})
	require.NoError(t, err)
	require.Equal(t, lease.ForceRefused, low.Kind, "a floor below the owner's epoch is refused: %+v", low)
	require.Equal(t, uint64(42), low.ProvenEpoch)
	require.Equal(t, w.path("receiver.lock", "owner.json"), low.ProvenBy)
	forced, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerEpoch, EpochFloor: 42})
	require.NoError(t, err)
	require.Equal(t, lease.ForceMoved, forced.Kind, "%+v", forced)
	require.Equal(t, uint64(42), forced.Epoch)
	released, err := m.Release(ctx, "00000000-0000-4000-8000-0000000000cc")
	require.NoError(t, err)
	require.Equal(t, lease.Released, released.Kind)
	require.Equal(t, uint64(43), w.acquire(m).Owner.Epoch)
}

func mustInspect(t *testing.T, m *lease.Manager) lease.Projection {
	t.Helper()
	projection, err := m.Inspect(context.Background())
	require.NoError(t, err)
	return projection
}

// initNamespace makes the namespace's directories, as a first call would.
func initNamespace(t *testing.T, w *world) {
	t.Helper()
	for _, dir := range []string{"quarantine", "lifecycle-reclaims"} {
		require.NoError(t, os.MkdirAll(w.path(dir), 0o700))
	}
}

// A guard that takes the corrupt guard's name between ForceReclaim's
// judgement and its move (the operator's race with a new holder) is put
// back, never kept in quarantine, and the call refuses.
func TestForcedGuardThatChangedIsPutBack(t *testing.T) {
	w := newWorld(t)
	m := w.manager(leasetest.Identity(1))
	initNamespace(t, w)
	guard := w.path("receiver.lifecycle.guard.json")
	w.write("receiver.lifecycle.guard.json", "garbage")
	newHolder := leasetest.Identity(9)
	w.table.SetLive(newHolder)
	fresh := guardJSON(newHolder, "fresh")
	w.fs.Before(func(op leasetest.Op) error {
		if strings.HasPrefix(op.Name, "Rename") && op.Paths[0] == guard && strings.Contains(op.Paths[1], "/quarantine/") {
			w.fs.Before(nil)
			require.NoError(t, os.Remove(guard))
			w.write("receiver.lifecycle.guard.json", fresh)
		}
		return nil
	})
	result, err := m.ForceReclaim(context.Background(), lease.ForceRequest{Kind: lease.BlockerGuard})
	require.NoError(t, err)
	require.Equal(t, lease.ForceRefused, result.Kind, "%+v", result)
	require.Contains(t, result.Why, "put back")
	require.Equal(t, fresh, w.read("receiver.lifecycle.guard.json"))
	require.Empty(t, w.names("quarantine"))
}

// TestForcedGuardNeverRunsBesideAHolder is the put-back window: an
// operator forces a remote guard whose holder is finishing. Right after
// ForceReclaim opens that guard to judge it, the holder removes it and a
// local holder L takes the guard for WithCurrentLease. Before the fix the
// force then moved L's guard into quarantine, saw it was not the record it
// judged, and put it back; meanwhile L's fn ran without its guard, and a
// second process could take the guard and change the lease. Now the force
// announces an intent before it judges: L sees it in its post-scan and
// waits (here, until its guard wait ends), and its fn never runs while the
// force is in flight.
func TestForcedGuardNeverRunsBesideAHolder(t *testing.T) {
	w := newWorld(t)
	operator, local := leasetest.Identity(1), leasetest.Identity(7)
	remote := leasetest.Identity(9)
	remote.Hostname = "host-b"
	w.table.SetLive(local)
	holder := w.managerWith(local, 20*time.Millisecond)
	owned := w.acquire(holder)
	require.Equal(t, lease.Acquired, owned.Kind)
	const judged = "00000000-0000-4000-8000-0000000000cc"
	w.write("receiver.lifecycle.guard.json", guardJSON(remote, judged))
	m := w.manager(operator)
	blockers := mustInspect(t, m).Blockers
	require.Len(t, blockers, 1)
	require.Equal(t, judged, blockers[0].Generation)

	forcing, swapped, entered := false, false, false
	var holderErr error
	w.fs.After(func(op leasetest.Op, err error) {
		if !forcing || swapped || err != nil || op.Name != "OpenFile" || op.Paths[0] != w.path("receiver.lifecycle.guard.json") {
			return
		}
		swapped = true
		require.NoError(t, os.Remove(w.path("receiver.lifecycle.guard.json"))) // the remote holder finishes
		holderErr = holder.WithCurrentLease(context.Background(), owned.Owner.Generation,
			func(context.Context, lease.Owner) error { entered = true; return nil })
	})
	forcing = true
	result, err := m.ForceReclaim(context.Background(), lease.ForceRequest{Kind: lease.BlockerGuard, Generation: judged})
	forcing = false
	require.NoError(t, err)
	require.True(t, swapped)
	require.False(t, entered, "the local holder ran its fenced body while a force that judged another guard was in flight")
	var busy *lease.BusyError
	require.ErrorAs(t, holderErr, &busy)
	require.NotEqual(t, lease.ForceMoved, result.Kind, "%+v", result)
	require.Empty(t, w.names("lifecycle-reclaims"), "the intent is withdrawn")
	_, err = os.Lstat(w.path("receiver.lifecycle.guard.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, holder.WithCurrentLease(context.Background(), owned.Owner.Generation,
		func(context.Context, lease.Owner) error { entered = true; return nil }))
	require.True(t, entered)
}

// TestForcedGuardKeepsASymlinkPlantedAfterTheJudgement: between the
// operator's judgement of a remote guard and its move, a co-tenant replaces
// the guard with a symlink. What moved is no process's guard (the engine
// never writes a symlink), so it stays in quarantine/, as garbage written
// over the guard does. Before, the force could not read it as a record,
// took it for a holder's new guard and put it back, and the namespace
// stayed blocked with nothing left for the operator's next look to judge
// by generation: lease seed 8899 of a mutant hunt's real-build check
// ended in a liveness failure ("lifecycle guard is corrupt: ... is not a
// regular file (mode Lrwxrwxrwx)").
func TestForcedGuardKeepsASymlinkPlantedAfterTheJudgement(t *testing.T) {
	w := newWorld(t)
	operator, remote := leasetest.Identity(1), leasetest.Identity(9)
	remote.Hostname = "host-b"
	const judged = "00000000-0000-4000-8000-0000000000cd"
	guard := w.path("receiver.lifecycle.guard.json")
	w.write("receiver.lifecycle.guard.json", guardJSON(remote, judged))
	m := w.manager(operator)
	forcing, swapped := false, false
	w.fs.After(func(op leasetest.Op, err error) {
		if !forcing || swapped || err != nil || op.Name != "OpenFile" || op.Paths[0] != guard {
			return
		}
		swapped = true
		require.NoError(t, os.Remove(guard))
		require.NoError(t, os.Symlink("/etc/passwd", guard))
	})
	forcing = true
	result, err := m.ForceReclaim(context.Background(), lease.ForceRequest{Kind: lease.BlockerGuard, Generation: judged})
	forcing = false
	require.NoError(t, err)
	require.True(t, swapped)
	require.Equal(t, lease.ForceMoved, result.Kind, "%+v", result)
	_, err = os.Lstat(guard)
	require.ErrorIs(t, err, os.ErrNotExist, "the planted symlink was given back to the guard's name")
	info, err := os.Lstat(result.QuarantinePath)
	require.NoError(t, err)
	require.Equal(t, os.ModeSymlink, info.Mode().Type(), "quarantine/ keeps the symlink as evidence")
}
