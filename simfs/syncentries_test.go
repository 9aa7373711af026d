package simfs

import (
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/leasekit/leasekit/lease"
)

// TestSyncEntriesMatchesFullCopy holds the incremental directory fsync to
// the rule it replaces: when an fsync of a directory copies its entries
// (it has pending effects, or no synced entries yet), the synced entries
// equal the volatile ones afterwards; otherwise they are left as they were.
// Random renames, links, removes and mkdirs across a few directories, with
// long unsynced stretches, exercise both the changed-name list, its
// overflow to a full copy, and effects that collect retires without an
// fsync.
func TestSyncEntriesMatchesFullCopy(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		f := New(Options{Dev: 1})
		f.MkdirAll("/a/b", 0o755, 0)
		f.MkdirAll("/c", 0o755, 0)
		v := f.View(0).(*view)
		dirs := []string{"/", "/a", "/a/b", "/c", "/c/d", "/a/e"}
		names := []string{"x", "y", "z", "w", "d", "e"}
		pick := func() string {
			d := dirs[rng.IntN(len(dirs))]
			if d == "/" {
				d = ""
			}
			return d + "/" + names[rng.IntN(len(names))]
		}
		// Rare fsyncs let the changed-name lists overflow and the log
		// grow past its collection threshold.
		syncOdds := []int{2, 20, 400}[seed%3]
		for step := 0; step < 3000; step++ {
			if rng.IntN(syncOdds) == 0 {
				checkDirSync(t, v, dirs[rng.IntN(len(dirs))])
				continue
			}
			switch rng.IntN(6) {
			case 0:
				if fl, err := v.OpenFile(pick(), lease.O_WRONLY|lease.O_CREATE, 0o644); err == nil {
					fl.Close()
				}
			case 1:
				v.Mkdir(pick(), 0o755)
			case 2, 3:
				v.Rename(pick(), pick())
			case 4:
				v.Link(pick(), pick())
			default:
				v.Remove(pick())
			}
		}
	}
}

// checkDirSync fsyncs the directory at p, if there is one, and checks the
// synced entries against the full-copy rule.
func checkDirSync(t *testing.T, v *view, p string) {
	t.Helper()
	_, _, d, errno := v.resolve(p, false)
	if errno != 0 || d == nil || !d.isDir() {
		return
	}
	copies := len(d.pendingSeqs) > 0 || d.syncedEntries == nil
	before := maps.Clone(d.syncedEntries)
	fl, err := v.OpenFile(p, lease.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := fl.Sync(); err != nil {
		t.Fatal(err)
	}
	fl.Close()
	want := before
	if copies {
		want = d.entries
	}
	if !maps.Equal(d.syncedEntries, want) {
		t.Fatalf("fsync %s: synced entries %v, want %v", p, d.syncedEntries, want)
	}
}
