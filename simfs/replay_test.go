package simfs_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
)

// recorder answers from rapid and records every answer.
type recorder struct {
	t       *rapid.T
	answers []int
}

func (r *recorder) Intn(n int) int {
	v := rapid.IntRange(0, n-1).Draw(r.t, "choice")
	r.answers = append(r.answers, v)
	return v
}

// replayer answers from a recorded list.
type replayer struct {
	t       *rapid.T
	answers []int
}

func (r *replayer) Intn(n int) int {
	if len(r.answers) == 0 {
		r.t.Fatalf("replay asked for more choices than were recorded")
	}
	v := r.answers[0]
	if v >= n {
		r.t.Fatalf("replayed answer %d out of range %d: the runs diverged", v, n)
	}
	r.answers = r.answers[1:]
	return v
}

type fsAction func(f *simfs.FS, v lease.FS, choose simfs.Chooser)

// TestReplayIsBitExact runs one random workload with crashes twice, the
// second time replaying the first run's recorded choices, and compares the
// state hash after every step.
func TestReplayIsBitExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		paths := []string{"/d/a", "/d/b", "/e/a", "/e/sub", "/e/sub/x"}
		genPath := rapid.SampledFrom(paths)
		var actions []fsAction
		for i := rapid.IntRange(1, 40).Draw(t, "steps"); i > 0; i-- {
			p, q := genPath.Draw(t, "p"), genPath.Draw(t, "q")
			switch rapid.IntRange(0, 7).Draw(t, "op") {
			case 0:
				data := rapid.SampledFrom([]string{"", "x", "hello world"}).Draw(t, "data")
				sync := rapid.Bool().Draw(t, "sync")
				actions = append(actions, func(f *simfs.FS, v lease.FS, _ simfs.Chooser) {
					if fl, err := v.OpenFile(p, lease.O_WRONLY|lease.O_CREATE|lease.O_TRUNC, 0o600); err == nil {
						fl.Write([]byte(data))
						if sync {
							fl.Sync()
						}
						fl.Close()
					}
				})
			case 1:
				actions = append(actions, func(f *simfs.FS, v lease.FS, _ simfs.Chooser) { v.Rename(p, q) })
			case 2:
				actions = append(actions, func(f *simfs.FS, v lease.FS, _ simfs.Chooser) { v.Link(p, q) })
			case 3:
				actions = append(actions, func(f *simfs.FS, v lease.FS, _ simfs.Chooser) { v.Remove(p) })
			case 4:
				actions = append(actions, func(f *simfs.FS, v lease.FS, _ simfs.Chooser) { v.Mkdir(p, 0o700) })
			case 5:
				actions = append(actions, func(f *simfs.FS, v lease.FS, _ simfs.Chooser) {
					if fl, err := v.OpenFile(p, lease.O_RDONLY, 0); err == nil {
						fl.Sync()
						fl.Close()
					}
				})
			case 6:
				actions = append(actions, func(f *simfs.FS, v lease.FS, _ simfs.Chooser) { v.MkdirTemp("/d", "t-*") })
			case 7:
				mode := simfs.CrashMode(rapid.IntRange(0, 4).Draw(t, "mode"))
				actions = append(actions, func(f *simfs.FS, v lease.FS, choose simfs.Chooser) { f.Crash(mode, choose) })
			}
		}
		run := func(choose simfs.Chooser) []uint64 {
			f := simfs.New(simfs.Options{Dev: 3, Rand: choose})
			f.MkdirAll("/d", 0o755, 0)
			f.MkdirAll("/e", 0o755, 0)
			v := f.View(0)
			var hashes []uint64
			for _, act := range actions {
				act(f, v, choose)
				checkTree(t, f)
				hashes = append(hashes, f.Hash())
			}
			return hashes
		}
		rec := &recorder{t: t}
		first := run(rec)
		second := run(&replayer{t: t, answers: rec.answers})
		for i := range first {
			if first[i] != second[i] {
				t.Fatalf("step %d: hash %x on the first run, %x on the replay", i, first[i], second[i])
			}
		}
	})
}

// checkTree checks the volatile tree's invariants through the public API:
// nlink of a file equals its names, of a directory 2 + its subdirectories;
// one inode number is one identity; the pending count is not negative.
func checkTree(t *rapid.T, f *simfs.FS) {
	if f.Pending() < 0 {
		t.Fatalf("negative pending count %d", f.Pending())
	}
	v := f.View(0)
	names := map[lease.FileIdentity]uint64{}
	nlink := map[lease.FileIdentity]uint64{}
	byIno := map[uint64]lease.FileIdentity{}
	dirs := map[lease.FileIdentity]bool{}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > 8 {
			t.Fatalf("tree deeper than the workload can make it")
		}
		entries, err := v.ReadDir(dir)
		if err != nil {
			t.Fatalf("readdir %s: %v", dir, err)
		}
		subdirs := uint64(0)
		for _, e := range entries {
			p := dir + "/" + e.Name
			if dir == "/" {
				p = "/" + e.Name
			}
			info, err := v.Lstat(p)
			if err != nil {
				t.Fatalf("lstat %s: %v", p, err)
			}
			id, _ := info.Identity()
			if other, ok := byIno[id.Ino]; ok && other != id {
				t.Fatalf("inode %d has two identities", id.Ino)
			}
			byIno[id.Ino] = id
			names[id]++
			nlink[id] = info.Nlink
			if info.IsDir() {
				dirs[id] = true
				subdirs++
				walk(p, depth+1)
			}
		}
		info, err := v.Stat(dir)
		if err != nil {
			t.Fatalf("stat %s: %v", dir, err)
		}
		if info.Nlink != 2+subdirs {
			t.Fatalf("%s: nlink %d with %d subdirectories", dir, info.Nlink, subdirs)
		}
	}
	walk("/", 0)
	for id, n := range names {
		if dirs[id] && n != 1 {
			t.Fatalf("directory inode %d has %d names", id.Ino, n)
		}
		if !dirs[id] && nlink[id] != n {
			t.Fatalf("inode %d: nlink %d but %d names", id.Ino, nlink[id], n)
		}
	}
}
