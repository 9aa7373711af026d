package dirlease

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestRenameRaceSwappedDirectoryIsNeverDeleted: between recovery's identity
// check and its quarantine rename, a co-tenant renames the leased directory
// away and puts another directory with the same name in its place. The
// quarantine check sees a foreign identity, renames it back and refuses;
// both directories survive with their contents.
func TestRenameRaceSwappedDirectoryIsNeverDeleted(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	w.inspector.Kill(ownerPID)
	target := l.Claim().Path
	movedAway := filepath.Join(w.work, "moved-away")
	swapped := false
	hooked := leasetest.NewHookFS(w.fs)
	hooked.Before(func(op leasetest.Op) error {
		if op.Name == "RenameNoReplace" && strings.Contains(op.Paths[1], ".leasekit-removing-") && !swapped {
			swapped = true
			must(t, os.Rename(target, movedAway))
			must(t, os.Mkdir(target, 0o700))
			must(t, os.WriteFile(filepath.Join(target, "impostor.txt"), []byte("keep me"), 0o600))
		}
		return nil
	})
	config := w.recoverer()
	config.FS = hooked
	_, err := Recover(ctx, config)
	if !swapped {
		t.Fatal("the race never ran")
	}
	if !errors.Is(err, ErrChanged) || !errors.Is(err, statecas.ErrChanged) {
		t.Fatalf("want ErrChanged, got %v", err)
	}
	if content, err := os.ReadFile(filepath.Join(target, "impostor.txt")); err != nil || string(content) != "keep me" {
		t.Fatalf("the swapped-in directory was touched: %v", err)
	}
	if content, err := os.ReadFile(filepath.Join(movedAway, "nested", "data.bin")); err != nil || string(content) != "payload" {
		t.Fatalf("the original directory was touched: %v", err)
	}
	if !exists(t, l.ClaimPath()) {
		t.Fatal("the claim was released although nothing was recovered")
	}
	entries, err := os.ReadDir(w.work)
	must(t, err)
	for _, entry := range entries {
		if strings.HasPrefix(entry.Name(), ".leasekit-removing-") {
			t.Fatalf("a quarantine was left behind: %s", entry.Name())
		}
	}
}

// TestRecoverRefusesChangedTargets: the lease path or its parent is not
// what the claim recorded before recovery even starts (a symlink planted;
// the parent replaced). Recovery refuses and the tree is unchanged.
func TestRecoverRefusesChangedTargets(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world, l *Lease)
		want  error
	}{
		{"symlink planted at the lease path", func(w *world, l *Lease) {
			victim := w.dir("victim")
			must(t, os.RemoveAll(l.Claim().Path))
			must(t, os.Symlink(victim, l.Claim().Path))
		}, ErrNotOwnedDirectory},
		{"parent replaced", func(w *world, l *Lease) {
			claim := l.Claim()
			claim.ParentIdentity.Inode = "1"
			rewriteClaim(t, l, claim)
		}, ErrChanged},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l := w.raw("raw")
			w.inspector.Kill(ownerPID)
			tc.setup(w, l)
			before := snapshotTree(t, w.home, w.work)
			_, err := Recover(ctx, w.recoverer())
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			if after := snapshotTree(t, w.home, w.work); after != before {
				t.Fatalf("tree changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// TestRecoverReleasesAClaimWhosePathHoldsAnotherDirectory: the directory at
// a dead owner's lease path is not the one its claim recorded (the
// recorded one was moved away, or removed and the path made again; or the
// identity differs, as after inode reuse). Recovery touches no directory,
// releases the claim (counted Replaced), and the pass succeeds: failing
// it, as the original implementations did, failed every later pass and
// kept the path busy for good.
func TestRecoverReleasesAClaimWhosePathHoldsAnotherDirectory(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world, l *Lease)
	}{
		{"replaced by another directory", func(w *world, l *Lease) {
			must(t, os.Rename(l.Claim().Path, filepath.Join(w.work, "elsewhere")))
			must(t, os.Mkdir(l.Claim().Path, 0o700))
		}},
		{"inode number reused (birth time differs)", func(w *world, l *Lease) {
			claim := l.Claim()
			claim.DirectoryIdentity.BirthtimeNs = "1"
			rewriteClaim(t, l, claim)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l := w.raw("raw")
			w.inspector.Kill(ownerPID)
			tc.setup(w, l)
			before := snapshotTree(t, w.work)
			report, err := Recover(ctx, w.recoverer())
			if err != nil || report.Replaced != 1 || report.Recovered != 0 {
				t.Fatalf("report %+v, err %v", report, err)
			}
			if after := snapshotTree(t, w.work); after != before {
				t.Fatalf("a directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if exists(t, l.ClaimPath()) {
				t.Fatal("the claim was kept: the next pass would meet it again")
			}
		})
	}
}

// rewriteClaim replaces the claim file with claim's canonical bytes, as an
// earlier writer (or a reused inode) would have left them.
func rewriteClaim(t *testing.T, l *Lease, claim Claim) {
	t.Helper()
	must(t, os.WriteFile(l.ClaimPath(), claim.Bytes(), 0o600))
}

// TestCorruptClaimsFailClosed: each bad claim file gets a typed ErrCorrupt
// with a clear message, and recovery removes nothing at all, not even the
// directory of another, perfectly recoverable claim.
func TestCorruptClaimsFailClosed(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(good string) string
		message string
	}{
		{"bad JSON", func(good string) string { return good[:len(good)/2] }, "not valid JSON"},
		{"non-canonical bytes", func(good string) string { return strings.Replace(good, ":", ": ", 1) }, "not canonical"},
		{"missing trailing newline", func(good string) string { return strings.TrimSuffix(good, "\n") }, "not canonical"},
		{"unknown field", func(good string) string { return strings.Replace(good, "{", `{"zzz":true,`, 1) }, "unsupported shape"},
		{"over the size limit", func(good string) string {
			return good[:len(good)-2] + strings.Repeat(" ", ClaimBytesMax) + "}\n"
		}, "size bound"},
		{"inconsistent coordinates", func(good string) string {
			return strings.Replace(good, `"phase":"preparing"`, `"phase":"running"`, 1)
		}, "coordinates are inconsistent"},
		{"owner of the wrong shape", func(good string) string {
			return strings.Replace(good, `"hostname":"host-a",`, "", 1)
		}, "owner is invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			bad := w.raw("bad")
			w.raw("good") // recoverable once the owner is dead
			w.inspector.Kill(ownerPID)
			good, err := os.ReadFile(bad.ClaimPath())
			must(t, err)
			must(t, os.WriteFile(bad.ClaimPath(), []byte(tc.mutate(string(good))), 0o600))
			before := snapshotTree(t, w.home, w.work)
			_, err = Recover(ctx, w.recoverer())
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("want ErrCorrupt %q, got %v", tc.message, err)
			}
			if after := snapshotTree(t, w.home, w.work); after != before {
				t.Fatalf("tree changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
	t.Run("unsupported entry in the collection", func(t *testing.T) {
		w := newWorld(t)
		w.raw("good")
		w.inspector.Kill(ownerPID)
		must(t, os.Mkdir(filepath.Join(w.root(), "stray"), 0o700))
		before := snapshotTree(t, w.home, w.work)
		if _, err := Recover(ctx, w.recoverer()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "unsupported entry") {
			t.Fatalf("want ErrCorrupt unsupported entry, got %v", err)
		}
		if after := snapshotTree(t, w.home, w.work); after != before {
			t.Fatal("tree changed")
		}
	})
	t.Run("claim under the wrong name", func(t *testing.T) {
		w := newWorld(t)
		l := w.raw("good")
		w.inspector.Kill(ownerPID)
		must(t, os.Rename(l.ClaimPath(), filepath.Join(w.root(), "00000000-0000-4000-8000-00000000abcd.json")))
		before := snapshotTree(t, w.home, w.work)
		if _, err := Recover(ctx, w.recoverer()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not canonical") {
			t.Fatalf("want ErrCorrupt not canonical, got %v", err)
		}
		if after := snapshotTree(t, w.home, w.work); after != before {
			t.Fatal("tree changed")
		}
	})
}

// TestRecoverClearsOrphanedMutationMachinery: a process that died while it
// held a claim file's mutation claim left the claim, a claim temp and a
// data temp behind. Recovery removes them (owner provably dead) and then
// recovers the lease; a live process's claim blocks the release instead.
func TestRecoverClearsOrphanedMutationMachinery(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	w.inspector.Kill(ownerPID)
	dead := leasetest.IdentityOf(4000, w.uid, "800")
	const deadClaimID = "0000dead-0000-4000-8000-000000000001"
	claimBytes := statecas.MutationClaimBytes(deadClaimID, l.ClaimPath(), dead)
	must(t, os.WriteFile(statecas.ClaimPath(l.ClaimPath()), claimBytes, 0o600))
	must(t, os.WriteFile(filepath.Join(w.root(), ".tmp-mutation-0000dead-0000-4000-8000-000000000002"), claimBytes, 0o600))
	must(t, os.WriteFile(filepath.Join(w.root(), ".tmp-cas-"+deadClaimID+"-0000dead-0000-4000-8000-000000000003"), []byte("half"), 0o600))
	report, err := Recover(ctx, w.recoverer())
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if report != (Report{Recovered: 1}) {
		t.Fatalf("report %+v", report)
	}
	left, err := os.ReadDir(w.root())
	if err != nil || len(left) != 0 {
		t.Fatalf("machinery left behind: %v %v", left, err)
	}

	t.Run("live mutation claim blocks", func(t *testing.T) {
		w := newWorld(t)
		l := w.raw("raw")
		w.inspector.Kill(ownerPID)
		live := leasetest.IdentityOf(4000, w.uid, "800")
		w.inspector.SetLive(live)
		must(t, os.WriteFile(statecas.ClaimPath(l.ClaimPath()),
			statecas.MutationClaimBytes(deadClaimID, l.ClaimPath(), live), 0o600))
		_, err := Recover(ctx, w.recoverer())
		if !errors.Is(err, statecas.ErrMutationActive) || !strings.Contains(err.Error(), statecas.MutationActiveText) {
			t.Fatalf("want mutation-active contention, got %v", err)
		}
		if !exists(t, l.ClaimPath()) {
			t.Fatal("claim released despite the contention")
		}
	})
}

// TestLegacySchema2Claims: claims the original implementations wrote (schema 2, three-key
// owners) are read as on this host and namespace and judged by the original implementation's
// rules; a live PID whose legacy start digest cannot be verified is indeterminate.
func TestLegacySchema2Claims(t *testing.T) {
	cases := []struct {
		name   string
		script func(w *world)
		want   Report
		kept   bool
	}{
		{"owner absent", func(w *world) { w.inspector.Kill(ownerPID) }, Report{Recovered: 1}, false},
		{"owner live, digest matches", func(w *world) {}, Report{Active: 1}, true},
		{"owner PID live, seed digest unverifiable", func(w *world) {
			w.inspector.SetLive(leasetest.IdentityOf(ownerPID, w.uid, "12345"))
		}, Report{Indeterminate: 1}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l := w.raw("raw")
			claim := l.Claim()
			claim.SchemaVersion = 2
			claim.Owner.Legacy = true
			claim.Owner.Hostname, claim.Owner.PIDNamespace = "", ""
			rewriteClaim(t, l, claim)
			if content, _ := os.ReadFile(l.ClaimPath()); strings.Contains(string(content), "hostname") {
				t.Fatal("legacy fixture still has schema-3 owner keys")
			}
			tc.script(w)
			report, err := Recover(ctx, w.recoverer())
			if err != nil || report != tc.want {
				t.Fatalf("report %+v err %v, want %+v", report, err, tc.want)
			}
			if exists(t, claim.Path) != tc.kept || exists(t, l.ClaimPath()) != tc.kept {
				t.Fatalf("directory/claim kept: want %v", tc.kept)
			}
		})
	}
}
