package simfs

import (
	"io/fs"
	"math/rand/v2"
	"testing"

	"github.com/leasekit/leasekit/lease"
)

// TestPrefixCacheMatchesFullWalk holds the views' prefix cache to the walk
// it shortcuts: after random renames, removes, mkdirs, symlinks, chmods and
// crashes, resolving a path through the cache gives exactly what a full walk
// from the root gives, for root and for an unprivileged uid.
func TestPrefixCacheMatchesFullWalk(t *testing.T) {
	comps := []string{"a", "b", "c", "l", "x", ".", "..", ""}
	randPath := func(rng *rand.Rand) string {
		p := ""
		if rng.IntN(8) != 0 {
			p = "/"
		}
		for n := 1 + rng.IntN(4); n > 0; n-- {
			p += comps[rng.IntN(len(comps))]
			if n > 1 || rng.IntN(6) == 0 {
				p += "/"
			}
		}
		return p
	}
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		f := New(Options{Dev: 1})
		f.MkdirAll("/a/b", 0o777, 1000)
		views := []*view{f.View(0).(*view), f.View(1000).(*view), f.View(2000).(*view)}
		for step := 0; step < 2000; step++ {
			v := views[rng.IntN(len(views))]
			switch rng.IntN(8) {
			case 0:
				v.Mkdir(randPath(rng), fs.FileMode(rng.IntN(0o1000)))
			case 1:
				v.Rename(randPath(rng), randPath(rng))
			case 2:
				v.Remove(randPath(rng))
			case 3:
				v.Symlink(randPath(rng), randPath(rng))
			case 4:
				v.Chmod(randPath(rng), fs.FileMode(rng.IntN(0o1000)))
			case 5:
				if fl, err := v.OpenFile(randPath(rng), lease.O_WRONLY|lease.O_CREATE, 0o644); err == nil {
					fl.Close()
				}
			case 6:
				if rng.IntN(20) == 0 {
					f.Crash(CrashMode(rng.IntN(int(crashModeCount))), randChooser{rng})
				}
			}
			// Query every view, mostly under the prefix it has cached, so
			// that a stale cache entry would be used.
			for _, v := range views {
				for q := 0; q < 3; q++ {
					p := randPath(rng)
					if slot := v.prefix[rng.IntN(prefixSlots)]; q > 0 && slot.dir != nil {
						p = slot.path + comps[rng.IntN(len(comps)-1)]
					}
					checkResolve(t, v, p, rng.IntN(2) == 0)
				}
			}
		}
	}
}

// checkResolve compares v.resolve, which may use the prefix cache, with a
// full walk from the root.
func checkResolve(t *testing.T, v *view, p string, follow bool) {
	t.Helper()
	hops := 0
	wd, wb, wn, we := v.walkPath(v.fs.root, p, follow, &hops, false)
	d, b, n, e := v.resolve(p, follow)
	if d != wd || b != wb || n != wn || e != we {
		t.Fatalf("uid %d resolve(%q, %v) = (%p %q %p %v), full walk (%p %q %p %v)",
			v.uid, p, follow, d, b, n, e, wd, wb, wn, we)
	}
}

// randChooser adapts a seeded math/rand/v2 source to Chooser.
type randChooser struct{ rng *rand.Rand }

func (c randChooser) Intn(n int) int { return c.rng.IntN(n) }

// TestNameGenerationMovesWithNames: the name generation advances with
// every create, rename, remove, mkdir and crash, and stays put through
// writes, reads, fsyncs and stats (what trackCorruption relies on).
func TestNameGenerationMovesWithNames(t *testing.T) {
	f := New(Options{Dev: 1})
	f.MkdirAll("/d", 0o700, 1000)
	v := f.View(1000)
	steps := []struct {
		name    string
		changes bool
		do      func() error
	}{
		{"create", true, func() error {
			file, err := v.OpenFile("/d/a", lease.O_WRONLY|lease.O_CREATE|lease.O_EXCL, 0o600)
			if err == nil {
				err = file.Close()
			}
			return err
		}},
		{"write and fsync", false, func() error {
			file, err := v.OpenFile("/d/a", lease.O_WRONLY|lease.O_TRUNC, 0)
			if err != nil {
				return err
			}
			if _, err := file.Write([]byte("x")); err != nil {
				return err
			}
			if err := file.Sync(); err != nil {
				return err
			}
			return file.Close()
		}},
		{"stat", false, func() error { _, err := v.Lstat("/d/a"); return err }},
		{"rename", true, func() error { return v.Rename("/d/a", "/d/b") }},
		{"mkdir", true, func() error { return v.Mkdir("/d/e", 0o700) }},
		{"remove", true, func() error { return v.Remove("/d/b") }},
		{"crash", true, func() error { f.Crash(CrashSyncedOnly, randChooser{rand.New(rand.NewPCG(1, 1))}); return nil }},
	}
	for _, step := range steps {
		before := f.NameGeneration()
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if changed := f.NameGeneration() != before; changed != step.changes {
			t.Fatalf("%s: name generation changed %v, want %v", step.name, changed, step.changes)
		}
	}
}

// TestDataGenerationMovesWithData: the data generation advances with every
// write, truncation and crash, and stays put through opens, reads, stats,
// fsyncs and closes (what dirleasework's checkOutside relies on to skip
// re-reading its hard links).
func TestDataGenerationMovesWithData(t *testing.T) {
	f := New(Options{Dev: 1})
	f.MkdirAll("/d", 0o700, 1000)
	v := f.View(1000)
	var file lease.File
	steps := []struct {
		name    string
		changes bool
		do      func() error
	}{
		{"create", false, func() (err error) {
			file, err = v.OpenFile("/d/a", lease.O_RDWR|lease.O_CREATE|lease.O_EXCL, 0o600)
			return err
		}},
		{"write", true, func() error { _, err := file.Write([]byte("xy")); return err }},
		{"fsync", false, file0(&file, lease.File.Sync)},
		{"stat", false, func() error { _, err := v.Lstat("/d/a"); return err }},
		{"close", false, file0(&file, lease.File.Close)},
		{"read", false, func() error {
			r, err := v.OpenFile("/d/a", lease.O_RDONLY, 0)
			if err != nil {
				return err
			}
			if _, err := r.Read(make([]byte, 8)); err != nil {
				return err
			}
			return r.Close()
		}},
		{"rename", false, func() error { return v.Rename("/d/a", "/d/b") }},
		{"truncate", true, func() error {
			w, err := v.OpenFile("/d/b", lease.O_WRONLY|lease.O_TRUNC, 0)
			if err != nil {
				return err
			}
			return w.Close()
		}},
		{"crash", true, func() error { f.Crash(CrashSyncedOnly, randChooser{rand.New(rand.NewPCG(1, 1))}); return nil }},
	}
	for _, step := range steps {
		before := f.DataGeneration()
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if changed := f.DataGeneration() != before; changed != step.changes {
			t.Fatalf("%s: data generation changed %v, want %v", step.name, changed, step.changes)
		}
	}
}

// file0 calls method on *file when the step runs (the file is opened by an
// earlier step).
func file0(file *lease.File, method func(lease.File) error) func() error {
	return func() error { return method(*file) }
}
