package aferoenv_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/leasekit/leasekit/bridge/aferoenv"
	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/simfs"
)

// world is one FS under test and the directory the scenario works in.
type world struct {
	name string
	fsys env.FS
	dir  string
}

// worlds are the kernel (osenv in a temp dir) and simfs: afero code must
// see the same answers on both.
func worlds(t *testing.T) []world {
	files := simfs.New(simfs.Options{Dev: 7})
	files.MkdirAll("/work", 0o755, uint32(os.Getuid()))
	return []world{
		{"osenv", osenv.NewFS(), t.TempDir()},
		{"simfs", files.View(uint32(os.Getuid())), "/work"},
	}
}

// TestAferoCodeRunsOnBothEnvironments runs afero's own helpers and the
// os-shaped calls through the bridge, on the kernel and on simfs.
func TestAferoCodeRunsOnBothEnvironments(t *testing.T) {
	for _, w := range worlds(t) {
		t.Run(w.name, func(t *testing.T) {
			a := afero.Afero{Fs: aferoenv.New(w.fsys)}
			must(t, a.MkdirAll(w.dir+"/a/b", 0o755))
			must(t, a.WriteFile(w.dir+"/a/b/f.txt", []byte("hello"), 0o644))
			data, err := a.ReadFile(w.dir + "/a/b/f.txt")
			if err != nil || string(data) != "hello" {
				t.Fatalf("ReadFile: %q, %v", data, err)
			}
			must(t, a.WriteFile(w.dir+"/a/b/f.txt", []byte("hi"), 0o644)) // O_TRUNC: no "llo" left
			if data, err := a.ReadFile(w.dir + "/a/b/f.txt"); err != nil || string(data) != "hi" {
				t.Fatalf("ReadFile after a shorter WriteFile: %q, %v", data, err)
			}
			must(t, a.WriteFile(w.dir+"/a/b/f.txt", []byte("hello"), 0o644))
			info, err := a.Stat(w.dir + "/a/b/f.txt")
			if err != nil || info.Size() != 5 || info.IsDir() || info.Name() != "f.txt" {
				t.Fatalf("Stat: %+v, %v", info, err)
			}
			if _, ok := info.Sys().(env.FileInfo); !ok {
				t.Fatalf("Sys is %T, want env.FileInfo", info.Sys())
			}
			must(t, a.WriteFile(w.dir+"/a/b/g.txt", nil, 0o644))
			names, err := a.ReadDir(w.dir + "/a/b")
			if err != nil || len(names) != 2 || names[0].Name() != "f.txt" || names[1].Name() != "g.txt" {
				t.Fatalf("ReadDir: %v, %v", names, err)
			}
			var walked []string
			must(t, a.Walk(w.dir+"/a", func(path string, _ os.FileInfo, err error) error {
				walked = append(walked, path[len(w.dir):])
				return err
			}))
			sort.Strings(walked)
			if want := []string{"/a", "/a/b", "/a/b/f.txt", "/a/b/g.txt"}; !equal(walked, want) {
				t.Fatalf("Walk: %v, want %v", walked, want)
			}
			must(t, a.Rename(w.dir+"/a/b/g.txt", w.dir+"/a/g.txt"))
			must(t, a.Remove(w.dir+"/a/g.txt"))
			must(t, a.RemoveAll(w.dir+"/a"))
			if exists, err := a.Exists(w.dir + "/a"); exists || err != nil {
				t.Fatalf("after RemoveAll: exists %t, %v", exists, err)
			}
		})
	}
}

// TestFileCallsAndErrors: seek, pread, truncate and Readdir's count rule
// behave as *os.File's, errors keep their errno, and what env lacks is
// ENOSYS.
func TestFileCallsAndErrors(t *testing.T) {
	for _, w := range worlds(t) {
		t.Run(w.name, func(t *testing.T) {
			fsys := aferoenv.New(w.fsys)
			f, err := fsys.OpenFile(w.dir+"/f", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
			must(t, err)
			_, err = f.WriteString("0123456789")
			must(t, err)
			if pos, err := f.Seek(2, io.SeekStart); pos != 2 || err != nil {
				t.Fatalf("Seek: %d, %v", pos, err)
			}
			buf := make([]byte, 3)
			if n, err := f.ReadAt(buf, 5); n != 3 || err != nil || string(buf) != "567" {
				t.Fatalf("ReadAt: %d %q %v", n, buf, err)
			}
			must(t, f.Truncate(4))
			if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.ENOSYS) {
				t.Fatalf("WriteAt: %v, want ENOSYS", err)
			}
			must(t, f.Close())
			if info, err := fsys.Stat(w.dir + "/f"); err != nil || info.Size() != 4 {
				t.Fatalf("size after Truncate: %v, %v", info, err)
			}
			if _, err := fsys.OpenFile(w.dir+"/f", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("O_EXCL on an existing name: %v", err)
			}
			var pathErr *fs.PathError
			if _, err := fsys.Open(w.dir + "/missing"); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pathErr) {
				t.Fatalf("Open of a missing name: %v (%T)", err, err)
			}
			if _, err := fsys.OpenFile(w.dir+"/f", os.O_RDWR|os.O_SYNC, 0); !errors.Is(err, syscall.ENOSYS) {
				t.Fatalf("O_SYNC: %v, want ENOSYS", err)
			}
			if err := fsys.Chown(w.dir+"/f", 0, 0); !errors.Is(err, syscall.ENOSYS) {
				t.Fatalf("Chown: %v, want ENOSYS", err)
			}
			must(t, fsys.SymlinkIfPossible("f", w.dir+"/link"))
			if info, lstat, err := fsys.LstatIfPossible(w.dir + "/link"); !lstat || err != nil || info.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("Lstat of a symlink: %v %t %v", info, lstat, err)
			}
			must(t, fsys.Chtimes(w.dir+"/f", time.Unix(1, 0), time.Unix(1_000_000, 0)))
			if info, err := fsys.Stat(w.dir + "/f"); err != nil || !info.ModTime().Equal(time.Unix(1_000_000, 0)) {
				t.Fatalf("ModTime after Chtimes: %v, %v", info, err)
			}
			readdirCounts(t, fsys, w.dir)
		})
	}
}

// readdirCounts: Readdir(1) walks the entries one by one and then says
// io.EOF; Readdir(-1) lists them all at once.
func readdirCounts(t *testing.T, fsys aferoenv.Fs, dir string) {
	t.Helper()
	d, err := fsys.Open(dir)
	must(t, err)
	defer d.Close()
	var seen []string
	for {
		infos, err := d.Readdir(1)
		if err == io.EOF {
			break
		}
		must(t, err)
		seen = append(seen, infos[0].Name())
	}
	if !equal(seen, []string{"f", "link"}) {
		t.Fatalf("Readdir(1) one by one: %v", seen)
	}
	d2, err := fsys.Open(dir)
	must(t, err)
	defer d2.Close()
	if all, err := d2.Readdirnames(-1); err != nil || !equal(all, []string{"f", "link"}) {
		t.Fatalf("Readdirnames(-1): %v, %v", all, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
