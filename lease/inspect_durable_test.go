package lease_test

import (
	"context"
	"path"
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

// noneChooser answers 0 to every crash choice.
type noneChooser struct{}

func (noneChooser) Intn(int) int { return 0 }

// TestInspectReportsOnlyDurableOwners: an acquirer that renamed its
// prepared directory into receiver.lock and died (or lost power) before
// fsyncing the namespace leaves an owner that a power loss can undo. An
// Inspect that reports that owner must first make it durable, or it has
// said something a power loss makes never true: the lease campaign found
// this at seed 11557 (swarm, powerloss=0.02: an impostor's Inspect saw an
// owner the next power loss removed, and the next acquire reclaimed
// nothing).
func TestInspectReportsOnlyDurableOwners(t *testing.T) {
	w := newFuzzWorld(t)
	if err := w.fsys.Remove(fuzzNamespace + "/receiver.lock"); err != nil { // the fuzz world's empty one
		t.Fatal(err)
	}
	ctx := context.Background()
	acquired, err := w.manager.Acquire(ctx, lease.AcquireRequest{SessionID: "s1", SessionFile: "/sessions/s1"})
	if err != nil || acquired.Kind != lease.Acquired {
		t.Fatalf("acquire: %+v, %v", acquired, err)
	}
	owner, err := statefile.ReadFile(w.fsys, fuzzNamespace+"/receiver.lock/owner.json", 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.manager.Release(ctx, acquired.Owner.Generation); err != nil {
		t.Fatalf("release: %v", err)
	}
	// An acquirer's last steps, cut short before the namespace fsync.
	prepare := path.Join(fuzzNamespace, ".receiver.prepare-x")
	if err := w.fsys.Mkdir(prepare, 0o700); err != nil {
		t.Fatal(err)
	}
	leasetest.WriteNew(t, w.fsys, path.Join(prepare, "owner.json"), owner)
	syncFile(t, w.fsys, path.Join(prepare, "owner.json"))
	for _, dir := range []string{prepare, fuzzNamespace} { // owner.json's name, then prepare's
		if err := statefile.SyncDir(w.fsys, dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.fsys.Rename(prepare, path.Join(fuzzNamespace, "receiver.lock")); err != nil {
		t.Fatal(err)
	}

	before, err := w.manager.Inspect(ctx)
	if err != nil || before.Kind != lease.Owned {
		t.Fatalf("inspect before the power loss: %+v, %v", before, err)
	}
	w.sim.Crash(simfs.CrashSyncedOnly, noneChooser{})
	after, err := w.manager.Inspect(ctx)
	if err != nil || after.Kind != lease.Owned || after.Owner.Generation != before.Owner.Generation {
		t.Fatalf("Inspect reported owner %s, and after a power loss the namespace shows %v (%v): it reported state that was not durable",
			before.Owner.Generation, after.Kind, err)
	}
}

// syncFile fsyncs a regular file (statefile.SyncDir opens directories only).
func syncFile(t *testing.T, fsys lease.FS, name string) {
	t.Helper()
	file, err := fsys.OpenFile(name, lease.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
}
