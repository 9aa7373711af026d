package simfs_test

import (
	"path"
	"testing"

	"pgregory.net/rapid"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
)

// rapidChooser draws every crash choice from rapid, so failures shrink.
type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) Intn(n int) int { return rapid.IntRange(0, n-1).Draw(c.t, "choice") }

// durabilityModel tracks what POSIX guarantees survives a power loss: a
// name whose directory was fsynced after the name last changed, and data
// fsynced after it last changed.
type durabilityModel struct {
	names        map[string]int // path -> model inode
	data         map[int]string
	identity     map[int]lease.FileIdentity
	entryDurable map[string]bool // path -> its current presence/absence is durable
	dataDurable  map[int]bool
	// present is the set of paths that were present when their directory
	// was last fsynced and since were only ever replaced (written, or the
	// target of a rename), never removed or renamed away: an atomic
	// replace leaves the old or the new file, so they survive every crash.
	present map[string]bool
	nextID  int
}

func (m *durabilityModel) touch(p string) { m.entryDurable[p] = false }

// TestCrashGuarantees runs random operations, then a power loss of a random
// mode with rapid-drawn choices, and checks that everything POSIX
// guarantees survived exactly, with the same identity, that a durable name
// only ever replaced atomically since is never lost (even when the replaced
// inode's number was reused), and that the post-crash tree is
// self-consistent.
func TestCrashGuarantees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := newTestFS()
		v := f.View(0)
		m := &durabilityModel{names: map[string]int{}, data: map[int]string{},
			identity: map[int]lease.FileIdentity{}, entryDurable: map[string]bool{},
			dataDurable: map[int]bool{}, present: map[string]bool{}}
		paths := []string{"/d/a", "/d/b", "/e/a", "/e/b"}
		for _, p := range paths {
			m.entryDurable[p] = true // absent, durably
		}
		genPath := rapid.SampledFrom(paths)
		steps := rapid.IntRange(1, 30).Draw(t, "steps")
		for step := 0; step < steps; step++ {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0: // write, maybe fsync
				p := genPath.Draw(t, "path")
				data := rapid.SampledFrom([]string{"", "x", "hello"}).Draw(t, "data")
				sync := rapid.Bool().Draw(t, "sync")
				writeFileRapid(t, v, p, data, sync)
				id, ok := m.names[p]
				if !ok {
					m.nextID++
					id = m.nextID
					m.names[p] = id
					m.touch(p)
					info, err := v.Stat(p)
					if err != nil {
						t.Fatalf("stat %s: %v", p, err)
					}
					m.identity[id], _ = info.Identity()
				}
				m.data[id] = data
				m.dataDurable[id] = sync
			case 1: // rename
				from, to := genPath.Draw(t, "from"), genPath.Draw(t, "to")
				if v.Rename(from, to) == nil && from != to && m.names[from] != m.names[to] {
					m.names[to] = m.names[from]
					delete(m.names, from)
					m.touch(from)
					m.touch(to)
					delete(m.present, from)
				}
			case 2: // link
				from, to := genPath.Draw(t, "from"), genPath.Draw(t, "to")
				if v.Link(from, to) == nil {
					m.names[to] = m.names[from]
					m.touch(to)
				}
			case 3: // remove
				p := genPath.Draw(t, "path")
				if v.Remove(p) == nil {
					delete(m.names, p)
					m.touch(p)
					delete(m.present, p)
				}
			case 4, 5: // fsync a directory
				dir := rapid.SampledFrom([]string{"/d", "/e"}).Draw(t, "dir")
				syncDirRapid(t, v, dir)
				for _, p := range paths {
					if path.Dir(p) == dir {
						m.entryDurable[p] = true
						if _, ok := m.names[p]; ok {
							m.present[p] = true
						}
					}
				}
			}
		}
		mode := simfs.CrashMode(rapid.IntRange(0, 4).Draw(t, "mode"))
		checkStateHash(t, f)
		f.Crash(mode, rapidChooser{t})
		checkStateHash(t, f)
		if f.Pending() != 0 {
			t.Fatalf("pending %d after crash", f.Pending())
		}
		v = f.View(0)
		for _, p := range paths {
			info, err := v.Lstat(p)
			if err != nil && m.present[p] {
				t.Fatalf("%s: durably present and only replaced since, lost: %v", p, err)
			}
			id, inModel := m.names[p]
			if mode != simfs.CrashProcess && !m.entryDurable[p] {
				continue
			}
			if !inModel {
				if err == nil {
					t.Fatalf("%s: durably removed name came back", p)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: durable name lost: %v", p, err)
			}
			if got, _ := info.Identity(); got != m.identity[id] {
				t.Fatalf("%s: identity changed across the crash", p)
			}
			if mode == simfs.CrashProcess || m.dataDurable[id] {
				if got := readFileRapid(t, v, p); got != m.data[id] {
					t.Fatalf("%s: durable data %q, got %q", p, m.data[id], got)
				}
			}
		}
		checkLinkCounts(t, v, paths)
	})
}

// checkLinkCounts checks every surviving file's nlink equals its names.
func checkLinkCounts(t *rapid.T, v lease.FS, paths []string) {
	names := map[lease.FileIdentity]uint64{}
	nlink := map[lease.FileIdentity]uint64{}
	for _, p := range paths {
		info, err := v.Lstat(p)
		if err != nil {
			continue
		}
		id, _ := info.Identity()
		names[id]++
		nlink[id] = info.Nlink
	}
	for id, n := range names {
		if nlink[id] != n {
			t.Fatalf("inode %d: nlink %d but %d names", id.Ino, nlink[id], n)
		}
	}
}

func writeFileRapid(t *rapid.T, v lease.FS, p, data string, sync bool) {
	f, err := v.OpenFile(p, lease.O_WRONLY|lease.O_CREATE|lease.O_TRUNC, 0o600)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatalf("sync %s: %v", p, err)
		}
	}
	f.Close()
}

func syncDirRapid(t *rapid.T, v lease.FS, p string) {
	f, err := v.OpenFile(p, lease.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("sync %s: %v", p, err)
	}
	f.Close()
}
