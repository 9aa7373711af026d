package lease_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// plantGuardBeforeRelease replaces the guard file with planted (a new
// inode, as a create-only publish makes) just before the holder's first
// operation that takes the guard away from its name (a Remove of it, or a
// rename from it): the last moment after the holder's identity check.
func plantGuardBeforeRelease(t *testing.T, w *world, planted string) *bool {
	t.Helper()
	armed, done := false, new(bool)
	guard := w.path("receiver.lifecycle.guard.json")
	w.fs.Before(func(op leasetest.Op) error {
		takesAway := (op.Name == "Remove" || strings.HasPrefix(op.Name, "Rename")) && op.Paths[0] == guard
		if !armed || *done || !takesAway {
			return nil
		}
		*done = true
		temp := w.path("planted.tmp")
		require.NoError(t, os.WriteFile(temp, []byte(planted), 0o600))
		require.NoError(t, os.Rename(temp, guard))
		return nil
	})
	t.Cleanup(func() { w.fs.Before(nil) })
	// Armed from the operation on: the guard's creation is not a release.
	armedFlag := &armed
	w.fs.After(func(op leasetest.Op, err error) {
		if err == nil && op.Name == "RenameNoReplace" && op.Paths[1] == w.path("receiver.lock") {
			*armedFlag = true
		}
	})
	return done
}

// Issue 19, item 13: the guard was released by re-reading it, comparing,
// then removing it by path, so a guard planted at that name in between was
// deleted. It is now released as receiver.lock is: renamed to a private
// name, checked there, and only then removed; what is not this call's is
// put back (and the release reports the guard lost).
func TestGuardPlantedAtReleaseIsPutBack(t *testing.T) {
	w := newWorld(t)
	other := leasetest.Identity(9)
	w.table.SetLive(other)
	planted := guardJSON(other, "planted-generation")
	done := plantGuardBeforeRelease(t, w, planted)
	_, err := w.manager(leasetest.Identity(1)).Acquire(context.Background(), request)
	require.True(t, *done, "the guard was planted")
	var lost *lease.GuardLostError
	require.ErrorAs(t, err, &lost)
	require.Contains(t, lost.Why, "planted-generation")
	require.Equal(t, planted, w.read("receiver.lifecycle.guard.json"), "someone else's guard is never deleted")
	for _, name := range w.names() {
		require.False(t, strings.HasPrefix(name, ".receiver.lifecycle.released-"), "nothing left at the private name: %s", name)
	}
}

// Garbage written over a held guard is nobody's guard: the holder keeps it
// in quarantine/ rather than putting a blocker back, and deletes nothing.
func TestCorruptedGuardAtReleaseIsKeptInQuarantine(t *testing.T) {
	w := newWorld(t)
	done := plantGuardBeforeRelease(t, w, "garbage")
	_, err := w.manager(leasetest.Identity(1)).Acquire(context.Background(), request)
	require.True(t, *done)
	var lost *lease.GuardLostError
	require.ErrorAs(t, err, &lost)
	require.Contains(t, lost.Why, "corrupt")
	_, statErr := os.Lstat(w.path("receiver.lifecycle.guard.json"))
	require.ErrorIs(t, statErr, os.ErrNotExist)
	quarantined := w.names("quarantine")
	require.Len(t, quarantined, 1)
	require.True(t, strings.HasPrefix(quarantined[0], "lifecycle.displaced."), quarantined[0])
	require.Equal(t, "garbage", w.read("quarantine/"+quarantined[0]))
}

// A holder that crashed between renaming its guard to the private name and
// removing it leaves the file behind; leftover cleanup removes it once its
// holder is provably gone, and never a live holder's or a mismatched one.
func TestReleasedGuardLeftoversAreRemovedOnlyWhenProvablyAbandoned(t *testing.T) {
	w := newWorld(t)
	dead, alive := leasetest.Identity(7), leasetest.Identity(8)
	w.table.SetLive(alive)
	const deadGen, aliveGen = "00000000-0000-4000-8000-000000000007", "00000000-0000-4000-8000-000000000008"
	initNamespace(t, w)
	w.write(".receiver.lifecycle.released-"+deadGen+".json", guardJSON(dead, deadGen))
	w.write(".receiver.lifecycle.released-"+aliveGen+".json", guardJSON(alive, aliveGen))
	w.write(".receiver.lifecycle.released-mismatch.json", guardJSON(dead, deadGen))
	w.write(".receiver.lifecycle.released-garbage.json", "garbage")
	require.Equal(t, lease.Acquired, w.acquire(w.manager(leasetest.Identity(1))).Kind)
	var left []string
	for _, name := range w.names() {
		if strings.HasPrefix(name, ".receiver.lifecycle.released-") {
			left = append(left, name)
		}
	}
	require.Equal(t, []string{".receiver.lifecycle.released-" + aliveGen + ".json",
		".receiver.lifecycle.released-garbage.json", ".receiver.lifecycle.released-mismatch.json"}, left)
}
