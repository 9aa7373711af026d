package simfs_test

import (
	"errors"
	"path"
	"slices"
	"strings"
	"syscall"
	"testing"

	"pgregory.net/rapid"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
)

// model is a plain map model of the non-crash namespace: paths to inode
// ids, and per id its kind and data. It knows the errno rules as a
// specification, with no code shared with simfs.
type model struct {
	names  map[string]int // path -> inode id
	dirs   map[int]bool
	data   map[int]string
	nextID int
}

func (m *model) lookup(p string) (int, bool) { id, ok := m.names[p]; return id, ok }

// parentErr is the errno of resolving p's parent: ENOENT if missing,
// ENOTDIR if it is a file (or a missing grandparent's error).
func (m *model) parentErr(p string) syscall.Errno {
	dir := path.Dir(p)
	if dir == "/" {
		return 0
	}
	if e := m.parentErr(dir); e != 0 {
		return e
	}
	id, ok := m.lookup(dir)
	if !ok {
		return syscall.ENOENT
	}
	if !m.dirs[id] {
		return syscall.ENOTDIR
	}
	return 0
}

func (m *model) children(dir string) []string {
	var out []string
	for p := range m.names {
		if path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	slices.Sort(out)
	return out
}

func (m *model) nlink(id int) uint64 {
	if m.dirs[id] {
		n := uint64(2)
		for p, child := range m.names {
			if m.dirs[child] && m.names[path.Dir(p)] == id && path.Dir(p) != "/" {
				n++
			}
		}
		return n
	}
	n := uint64(0)
	for _, other := range m.names {
		if other == id {
			n++
		}
	}
	return n
}

func (m *model) newID(dir bool, data string) int {
	m.nextID++
	m.dirs[m.nextID] = dir
	m.data[m.nextID] = data
	return m.nextID
}

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// rename is the model of rename(2) and RENAME_NOREPLACE.
func (m *model) rename(from, to string, noreplace bool) syscall.Errno {
	if e := m.parentErr(from); e != 0 {
		return e
	}
	if e := m.parentErr(to); e != 0 {
		return e
	}
	src, ok := m.lookup(from)
	if !ok {
		return syscall.ENOENT
	}
	dst, dstOK := m.lookup(to)
	if noreplace && dstOK {
		return syscall.EEXIST
	}
	if m.dirs[src] && to != from && under(to, from) {
		return syscall.EINVAL
	}
	if dstOK && m.dirs[dst] && from != to && under(from, to) {
		return syscall.ENOTEMPTY
	}
	if dstOK && src == dst {
		return 0
	}
	if dstOK && m.dirs[src] && !m.dirs[dst] {
		return syscall.ENOTDIR
	}
	if dstOK && !m.dirs[src] && m.dirs[dst] {
		return syscall.EISDIR
	}
	if dstOK && m.dirs[dst] && len(m.children(to)) > 0 {
		return syscall.ENOTEMPTY
	}
	moved := map[string]int{}
	for p, id := range m.names {
		if under(p, from) {
			moved[to+strings.TrimPrefix(p, from)] = id
			delete(m.names, p)
		}
	}
	delete(m.names, to)
	for p, id := range moved {
		m.names[p] = id
	}
	return 0
}

func errnoOf(t *rapid.T, err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		t.Fatalf("error without errno: %v", err)
	}
	return errno
}

func checkErrno(t *rapid.T, what string, err error, want syscall.Errno) {
	if got := errnoOf(t, err); got != want {
		t.Fatalf("%s: got %s, want %s", what, simfs.ErrnoName(got), simfs.ErrnoName(want))
	}
}

// TestModel runs random operations on simfs and on the map model and
// compares every result and the whole tree after each step.
func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := simfs.New(simfs.Options{Dev: 1})
		v := f.View(0)
		m := &model{names: map[string]int{}, dirs: map[int]bool{}, data: map[int]string{}}
		identities := map[int]lease.FileIdentity{}
		paths := []string{"/a", "/b", "/d", "/d/a", "/d/b", "/d/e", "/e", "/e/a", "/d/e/a"}
		genPath := rapid.SampledFrom(paths)
		genData := rapid.SampledFrom([]string{"", "x", "hello"})
		t.Repeat(map[string]func(*rapid.T){
			"mkdir": func(t *rapid.T) {
				p := genPath.Draw(t, "path")
				want := m.parentErr(p)
				if _, ok := m.lookup(p); want == 0 && ok {
					want = syscall.EEXIST
				}
				checkErrno(t, "mkdir "+p, v.Mkdir(p, 0o700), want)
				if want == 0 {
					m.names[p] = m.newID(true, "")
				}
			},
			"write": func(t *rapid.T) {
				p, data := genPath.Draw(t, "path"), genData.Draw(t, "data")
				excl := rapid.Bool().Draw(t, "excl")
				flag := lease.O_WRONLY | lease.O_CREATE | lease.O_TRUNC
				if excl {
					flag |= lease.O_EXCL
				}
				want := m.parentErr(p)
				id, ok := m.lookup(p)
				switch {
				case want != 0:
				case ok && excl:
					want = syscall.EEXIST
				case ok && m.dirs[id]:
					want = syscall.EISDIR
				}
				fl, err := v.OpenFile(p, flag, 0o600)
				checkErrno(t, "open "+p, err, want)
				if want != 0 {
					return
				}
				if _, err := fl.Write([]byte(data)); err != nil {
					t.Fatalf("write: %v", err)
				}
				if err := fl.Close(); err != nil {
					t.Fatalf("close: %v", err)
				}
				if !ok {
					id = m.newID(false, "")
					m.names[p] = id
				}
				m.data[id] = data
			},
			"remove": func(t *rapid.T) {
				p := genPath.Draw(t, "path")
				want := m.parentErr(p)
				id, ok := m.lookup(p)
				switch {
				case want != 0:
				case !ok:
					want = syscall.ENOENT
				case m.dirs[id] && len(m.children(p)) > 0:
					want = syscall.ENOTEMPTY
				}
				checkErrno(t, "remove "+p, v.Remove(p), want)
				if want == 0 {
					delete(m.names, p)
				}
			},
			"link": func(t *rapid.T) {
				from, to := genPath.Draw(t, "from"), genPath.Draw(t, "to")
				want := m.parentErr(from)
				src, ok := m.lookup(from)
				if want == 0 && !ok {
					want = syscall.ENOENT
				}
				if want == 0 {
					want = m.parentErr(to)
				}
				if _, exists := m.lookup(to); want == 0 && exists {
					want = syscall.EEXIST
				}
				if want == 0 && m.dirs[src] {
					want = syscall.EPERM
				}
				checkErrno(t, "link "+from+" "+to, v.Link(from, to), want)
				if want == 0 {
					m.names[to] = src
				}
			},
			"rename": func(t *rapid.T) {
				from, to := genPath.Draw(t, "from"), genPath.Draw(t, "to")
				noreplace := rapid.Bool().Draw(t, "noreplace")
				before := len(m.names)
				var err error
				if noreplace {
					err = v.RenameNoReplace(from, to)
				} else {
					err = v.Rename(from, to)
				}
				want := m.rename(from, to, noreplace)
				checkErrno(t, "rename "+from+" "+to, err, want)
				if want != 0 && len(m.names) != before {
					t.Fatalf("model changed on a failed rename")
				}
			},
			"stat": func(t *rapid.T) {
				p := genPath.Draw(t, "path")
				info, err := v.Stat(p)
				want := m.parentErr(p)
				id, ok := m.lookup(p)
				if want == 0 && !ok {
					want = syscall.ENOENT
				}
				checkErrno(t, "stat "+p, err, want)
				if want != 0 {
					return
				}
				if info.Nlink != m.nlink(id) {
					t.Fatalf("stat %s: nlink %d, model %d", p, info.Nlink, m.nlink(id))
				}
				if info.IsDir() != m.dirs[id] || (!info.IsDir() && info.Size != int64(len(m.data[id]))) {
					t.Fatalf("stat %s: kind/size %v %d differ from the model", p, info.Mode, info.Size)
				}
				got, _ := info.Identity()
				if known, ok := identities[id]; ok && known != got {
					t.Fatalf("stat %s: identity changed", p)
				}
				for otherID, other := range identities {
					if otherID != id && other == got {
						t.Fatalf("stat %s: two inodes share an identity", p)
					}
				}
				identities[id] = got
			},
			"": func(t *rapid.T) {
				// StateHash's reuse is exact: the action since the last
				// check (and this check's own reads) left it equal to Hash.
				checkStateHash(t, f)
				defer checkStateHash(t, f)
				// The whole tree matches the model: names, kinds, contents.
				var walk func(dir string)
				walk = func(dir string) {
					entries, err := v.ReadDir(dir)
					if err != nil {
						t.Fatalf("readdir %s: %v", dir, err)
					}
					var names []string
					for _, e := range entries {
						names = append(names, e.Name)
					}
					if want := m.children(dir); !slices.Equal(names, want) {
						t.Fatalf("readdir %s: %v, model %v", dir, names, want)
					}
					for _, e := range entries {
						p := path.Join(dir, e.Name)
						id := m.names[p]
						if e.Type.IsDir() != m.dirs[id] {
							t.Fatalf("%s: kind differs from the model", p)
						}
						if e.Type.IsDir() {
							walk(p)
						} else if got := readFileRapid(t, v, p); got != m.data[id] {
							t.Fatalf("%s: %q, model %q", p, got, m.data[id])
						}
					}
				}
				walk("/")
			},
		})
	})
}

func readFileRapid(t *rapid.T, v lease.FS, p string) string {
	fl, err := v.OpenFile(p, lease.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	defer fl.Close()
	buf := make([]byte, 64)
	n, _ := fl.Read(buf)
	return string(buf[:n])
}

// checkStateHash fails when StateHash reuses a hash the state has moved
// away from (a call that changed the state without counting as a change).
func checkStateHash(t *rapid.T, f *simfs.FS) {
	if got, want := f.StateHash(), f.Hash(); got != want {
		t.Fatalf("StateHash %x, Hash %x: a call changed the state without counting", got, want)
	}
}
