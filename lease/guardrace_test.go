package lease_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// These tests script the races of the guard protocol (FORMAT-lease.md,
// "The lifecycle guard") with HookFS and the Clock's sleep hook.

func guardCreated(w *world, op leasetest.Op, err error) bool {
	return err == nil && op.Name == "RenameNoReplace" && op.Paths[1] == w.path("receiver.lifecycle.guard.json")
}

// A live intent appearing right after the guard is created makes the holder
// wait while KEEPING its guard; it proceeds once the intent is gone.
func TestHolderWaitsForALiveIntentKeepingItsGuard(t *testing.T) {
	w := newWorld(t)
	reclaimer := leasetest.Identity(8)
	w.table.SetLive(reclaimer)
	m := w.manager(leasetest.Identity(1))
	planted := false
	w.fs.After(func(op leasetest.Op, err error) {
		if guardCreated(w, op, err) && !planted {
			planted = true
			w.write("lifecycle-reclaims/reclaim.r.json", guardJSON(reclaimer, "r"))
		}
	})
	w.clock.OnSleep(func(index int, _ time.Duration) {
		if index == 2 {
			require.NoError(t, os.Remove(w.path("lifecycle-reclaims/reclaim.r.json")))
		}
	})
	result := w.acquire(m)
	require.Equal(t, lease.Acquired, result.Kind)
	sleeps, _ := w.clock.Sleeps()
	require.Equal(t, 2, sleeps)
	releases := 0
	for _, op := range w.fs.Ops() {
		if (op.Name == "Remove" || strings.HasPrefix(op.Name, "Rename")) && op.Paths[0] == w.path("receiver.lifecycle.guard.json") {
			releases++
		}
	}
	require.Equal(t, 1, releases, "the guard is released once, after the operation, never while waiting")
}

// A reclaimer displaces our guard while we wait and a live process creates
// a new one: we must notice (verify step), never run, and never unlink the
// new holder's guard.
func TestDisplacedHolderNeverTouchesTheNewGuard(t *testing.T) {
	w := newWorld(t)
	reclaimer, newHolder := leasetest.Identity(8), leasetest.Identity(9)
	w.table.SetLive(reclaimer)
	w.table.SetLive(newHolder)
	m := w.managerWith(leasetest.Identity(1), 30*time.Millisecond)
	planted := false
	w.fs.After(func(op leasetest.Op, err error) {
		if guardCreated(w, op, err) && !planted {
			planted = true
			w.write("lifecycle-reclaims/reclaim.r.json", guardJSON(reclaimer, "r"))
		}
	})
	newGuard := guardJSON(newHolder, "new-holder")
	w.clock.OnSleep(func(index int, _ time.Duration) {
		if index == 1 {
			w.write("receiver.lifecycle.guard.json", newGuard)
			require.NoError(t, os.Remove(w.path("lifecycle-reclaims/reclaim.r.json")))
		}
	})
	result := w.acquire(m)
	require.Equal(t, lease.Refused, result.Kind)
	require.Equal(t, lease.RefusalLifecycleBusy, result.Refusal.Reason)
	require.Equal(t, newGuard, w.read("receiver.lifecycle.guard.json"), "the new holder's guard is untouched")
	_, err := os.Lstat(w.path("receiver.lock"))
	require.ErrorIs(t, err, os.ErrNotExist, "the displaced holder never ran")
}

// Between a reclaimer's re-read of the stale guard and its rename, another
// reclaimer moves that guard and a live process creates a new one. The
// rename then grabs the live guard; the reclaimer must give it back.
func TestReclaimerGivesBackALiveGuardItGrabbed(t *testing.T) {
	w := newWorld(t)
	dead, live := leasetest.Identity(7), leasetest.Identity(9)
	w.table.SetLive(live)
	w.write("receiver.lifecycle.guard.json", guardJSON(dead, "dead"))
	liveGuard := guardJSON(live, "live")
	swapped := false
	w.fs.Before(func(op leasetest.Op) error {
		if op.Name == "RenameNoReplace" && op.Paths[0] == w.path("receiver.lifecycle.guard.json") && !swapped {
			swapped = true
			w.write("receiver.lifecycle.guard.json", liveGuard)
		}
		return nil
	})
	result := w.acquire(w.managerWith(leasetest.Identity(1), 20*time.Millisecond))
	require.True(t, swapped)
	require.Equal(t, lease.Refused, result.Kind)
	require.Equal(t, lease.RefusalLifecycleBusy, result.Refusal.Reason)
	require.Equal(t, liveGuard, w.read("receiver.lifecycle.guard.json"), "the live guard is back in place")
	require.Empty(t, w.names("quarantine"))
	require.Empty(t, w.names("lifecycle-reclaims"), "the intent is withdrawn")
}

// Between a reclaimer's re-read of the stale guard and its rename, a
// hostile co-tenant garbles the guard in place. The rename moves the garbage
// into quarantine (which makes an operator's repair of that garbage moot);
// giving it back would wedge the namespace behind a corrupt guard that no
// repair is pending for. The garbage stays in quarantine and the acquire
// proceeds (issue 16, the suspected false alarm: an engine bug).
func TestReclaimerKeepsGarbageItGrabbedInQuarantine(t *testing.T) {
	w := newWorld(t)
	dead := leasetest.Identity(7)
	w.write("receiver.lifecycle.guard.json", guardJSON(dead, "dead"))
	garbled := false
	w.fs.Before(func(op leasetest.Op) error {
		if op.Name == "RenameNoReplace" && op.Paths[0] == w.path("receiver.lifecycle.guard.json") && !garbled {
			garbled = true
			w.write("receiver.lifecycle.guard.json", "{garbled")
		}
		return nil
	})
	result := w.acquire(w.managerWith(leasetest.Identity(1), 20*time.Millisecond))
	require.True(t, garbled)
	require.Equal(t, lease.Acquired, result.Kind, "%v", result.Refusal)
	_, err := os.Lstat(w.path("receiver.lifecycle.guard.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "the garbage is not put back")
	kept := false
	for _, name := range w.names("quarantine") {
		kept = kept || w.read("quarantine/"+name) == "{garbled"
	}
	require.True(t, kept, "the garbage is kept in quarantine: %v", w.names("quarantine"))
}

func TestSymlinkInPlaceOfQuarantineIsRefused(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.MkdirAll(w.path("elsewhere"), 0o700))
	require.NoError(t, os.Symlink(w.path("elsewhere"), w.path("quarantine")))
	result := w.acquire(w.manager(leasetest.Identity(1)))
	require.Equal(t, lease.Refused, result.Kind)
	require.Equal(t, lease.RefusalUnsafeNamespace, result.Refusal.Reason)
	require.Contains(t, result.Refusal.Diagnostic, w.path("quarantine"))
	require.True(t, strings.Contains(result.Refusal.Diagnostic, "symlink"), result.Refusal.Diagnostic)
	require.Empty(t, w.names("elsewhere"), "nothing is made through the link")
}

// frozenClock never advances on Sleep: only the attempt counter can end
// the wait.
type frozenClock struct{ *leasetest.Clock }

func (frozenClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func TestAttemptBoundEndsAWaitWhenTimeStandsStill(t *testing.T) {
	w := newWorld(t)
	holder := leasetest.Identity(7)
	w.table.SetLive(holder)
	w.write("receiver.lifecycle.guard.json", guardJSON(holder, "g"))
	m, err := lease.NewManager(lease.Config{Namespace: w.ns, RootID: rootID, FS: w.fs,
		Clock: frozenClock{w.clock}, Inspector: w.table.As(leasetest.Identity(1)), IDs: w.ids,
		GuardWait: 10 * time.Millisecond})
	require.NoError(t, err)
	result := w.acquire(m)
	require.Equal(t, lease.Refused, result.Kind)
	require.Equal(t, lease.RefusalLifecycleBusy, result.Refusal.Reason)
	require.Contains(t, result.Refusal.Diagnostic, "gave up after 68 lifecycle guard attempts")
}

func TestSeedSchemaOneGuardsAreHonoured(t *testing.T) {
	legacyGuard := func(id lease.ProcessIdentity) string {
		return `{"bootIdentity":null,"createdAt":"2025-06-01T10:00:00.000Z","executable":"` + id.Executable +
			`","generation":"seed-guard","hostname":"` + id.Hostname + `","pid":` + itoa(id.PID) +
			`,"processStartIdentity":"` + id.StartTime + `","schema":1}` + "\n"
	}
	holder := leasetest.Identity(7)
	t.Run("live seed guard is busy", func(t *testing.T) {
		w := newWorld(t)
		w.table.SetLive(holder)
		w.write("receiver.lifecycle.guard.json", legacyGuard(holder))
		result := w.acquire(w.managerWith(leasetest.Identity(1), 10*time.Millisecond))
		require.Equal(t, lease.RefusalLifecycleBusy, result.Refusal.Reason)
	})
	t.Run("dead seed guard is reclaimed", func(t *testing.T) {
		w := newWorld(t)
		w.write("receiver.lifecycle.guard.json", legacyGuard(holder))
		result := w.acquire(w.manager(leasetest.Identity(1)))
		require.Equal(t, lease.Acquired, result.Kind)
		require.Len(t, w.names("quarantine"), 1)
	})
}

// A foreign writer swaps owner.json between the reclaimer's re-read and its
// rename: the reclaimer must notice that what it moved is not the owner it
// judged, give it back, and judge again.
func TestOwnerSwappedDuringReclaimIsGivenBack(t *testing.T) {
	w := newWorld(t)
	p, q, live := leasetest.Identity(1), leasetest.Identity(2), leasetest.Identity(9)
	w.acquire(w.manager(p))
	w.table.Kill(1)
	w.table.SetLive(live)
	liveOwner := ownerJSON(live, "00000000-0000-4000-8000-0000000000bb", 5)
	swapped := false
	w.fs.Before(func(op leasetest.Op) error {
		if op.Name == "RenameNoReplace" && op.Paths[0] == w.path("receiver.lock") && !swapped {
			swapped = true
			w.write("receiver.lock/owner.json", liveOwner)
		}
		return nil
	})
	result := w.acquire(w.manager(q))
	require.True(t, swapped)
	require.Equal(t, lease.Held, result.Kind, "%+v", result)
	require.Equal(t, 9, result.Owner.PID)
	require.Empty(t, result.Reclaimed)
	require.Equal(t, liveOwner, w.read("receiver.lock/owner.json"), "the live owner is back in place")
	require.Empty(t, w.names("quarantine"))
}
