package simfs

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leasekit/leasekit/lease"
)

func TestFoldName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"receiver.lock", "receiver.lock"},
		{"guard.3", "guard.#"},
		{"s12-p3", "s#-p#"},
		{"intent-deadbeefcafe", "intent-#"},
		{"cafe", "#"}, {"abc", "abc"}, {"x-adbe-1f", "x-#-#"},
	} {
		if got := foldName(c.in); got != c.want {
			t.Errorf("foldName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestShapesMemoFollowsEveryChange: Shapes keeps its last list only while
// nothing changed; after each kind of change it equals a fresh walk, and
// it is a copy (appending to it does not touch the memo).
func TestShapesMemoFollowsEveryChange(t *testing.T) {
	f := New(Options{Dev: 1})
	f.MkdirAll("/d", 0o700, 1000)
	v := f.View(1000)
	fresh := func() []uint64 {
		list := shapeDir(nil, map[string]folded{}, f.root, fnvOffset, 0)
		slices.Sort(list)
		return slices.Compact(list)
	}
	check := func(what string) {
		t.Helper()
		got := f.Shapes(nil)
		if !slices.Equal(got, fresh()) {
			t.Fatalf("after %s: Shapes %v, a fresh walk %v", what, got, fresh())
		}
		_ = append(got[:0], 1, 2, 3)
		if again := f.Shapes([]uint64{7}); again[0] != 7 || !slices.Equal(again[1:], fresh()) {
			t.Fatalf("after %s: a caller's append changed the memo or dst: %v", what, again)
		}
	}
	check("setup")
	file, err := v.OpenFile("/d/a", lease.O_RDWR|lease.O_CREATE|lease.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	check("create")
	if _, err := file.Write(make([]byte, 5000)); err != nil {
		t.Fatal(err)
	}
	check("write (size class)")
	if err := file.Sync(); err != nil {
		t.Fatal(err)
	}
	check("fsync")
	dir, err := v.OpenFile("/d", lease.O_RDONLY|lease.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := dir.Sync(); err != nil {
		t.Fatal(err)
	}
	check("directory fsync (the new name becomes durable)")
	if err := v.Mkdir("/d/e", 0o700); err != nil {
		t.Fatal(err)
	}
	check("mkdir")
	if err := v.Rename("/d/a", "/d/e/b"); err != nil {
		t.Fatal(err)
	}
	check("rename")
	f.Crash(CrashSyncedOnly, randChooser{rand.New(rand.NewPCG(1, 1))})
	check("crash")
}
