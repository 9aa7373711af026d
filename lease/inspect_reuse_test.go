package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestInspectAcrossAReleaseOnAReusedInodeNumber: a release and a new
// acquire land between Inspect's look at receiver.lock and its second look
// after owner.json was missing, and the new receiver.lock reuses the old
// directory's inode number (as ext4 and simfs do). Inspect must see a new
// directory (the full identity, birth time included, differs) and look
// again: the lease is owned by the new holder. Compared by device and
// inode only, it reported "receiver.lock exists without a complete
// owner.json", a corrupt state that never existed, and an operator acting
// on it would force the live new owner (issue 29 item 5; mutant
// lease-identity-dev-ino-only).
func TestInspectAcrossAReleaseOnAReusedInodeNumber(t *testing.T) {
	w := newFuzzWorld(t)
	receiver := fuzzNamespace + "/receiver.lock"
	if err := w.fsys.Remove(receiver); err != nil { // the fuzz world's empty one
		t.Fatal(err)
	}
	ctx := context.Background()
	first := acquireOrFail(t, w.manager, "s0")
	judged, err := w.fsys.Lstat(receiver)
	if err != nil {
		t.Fatal(err)
	}
	hooked := leasetest.NewHookFS(w.fsys)
	released, reacquired := false, false
	var owner string
	hooked.Before(func(op leasetest.Op) error {
		switch {
		case op.Name == "OpenFile" && op.Paths[0] == receiver+"/owner.json" && !released:
			released = true
			releaseOrFail(t, w.manager, first.Owner.Generation)
		case op.Name == "Lstat" && op.Paths[0] == receiver && released && !reacquired:
			reacquired = true
			owner = reacquireOnTheJudgedInode(t, w, judged)
		}
		return nil
	})
	looker, err := lease.NewManager(lease.Config{
		Namespace: fuzzNamespace, RootID: "root-1", FS: hooked, Clock: leasetest.NewClock(),
		Inspector: leasetest.NewInspector(fuzzIdentity(2)), IDs: leasetest.NewIDsWithPrefix(0xf023),
		GuardWait: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	projection, err := looker.Inspect(ctx)
	if !reacquired {
		t.Fatal("the hooks never ran: Inspect did not look at receiver.lock twice")
	}
	if err != nil || projection.Kind != lease.Owned || projection.Owner.Generation != owner {
		t.Fatalf("Inspect across a release and a new acquire on a reused inode number: %v %q (%v), want owned by %s",
			projection.Kind, projection.Diagnostic, err, owner)
	}
}

// reacquireOnTheJudgedInode acquires and releases until the new
// receiver.lock has the judged directory's inode number (simfs reuses the
// lowest free number, and a release's directory is removed by the next
// acquire, so it takes a few rounds), and returns the holder's generation.
func reacquireOnTheJudgedInode(t *testing.T, w *fuzzWorld, judged lease.FileInfo) string {
	for round := range 8 {
		held := acquireOrFail(t, w.manager, fmt.Sprintf("s%d", round+1))
		now, err := w.fsys.Lstat(fuzzNamespace + "/receiver.lock")
		if err != nil {
			t.Fatal(err)
		}
		if now.Ino == judged.Ino {
			if now.BirthNs == judged.BirthNs {
				t.Fatalf("a reused inode number kept its birth time: %+v", now)
			}
			return held.Owner.Generation
		}
		releaseOrFail(t, w.manager, held.Owner.Generation)
	}
	t.Fatal("no new receiver.lock reused the judged inode number in 8 rounds")
	return ""
}

func acquireOrFail(t *testing.T, m *lease.Manager, session string) lease.AcquireResult {
	t.Helper()
	result, err := m.Acquire(context.Background(), lease.AcquireRequest{SessionID: session})
	if err != nil || result.Kind != lease.Acquired {
		t.Fatalf("acquire: %+v, %v", result, err)
	}
	return result
}

func releaseOrFail(t *testing.T, m *lease.Manager, generation string) {
	t.Helper()
	if _, err := m.Release(context.Background(), generation); err != nil {
		t.Fatalf("release: %v", err)
	}
}
