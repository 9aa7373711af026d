package envos_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/envos"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/simfs"
)

type seqIDs struct{ n int }

func (s *seqIDs) NewID() string { s.n++; return strings.Repeat("x", s.n%3) + string(rune('a'+s.n%26)) }

// filesystems are the kernel (in a temporary directory) and simfs.
func filesystems(t *testing.T) map[string]func() (env.FS, string) {
	return map[string]func() (env.FS, string){
		"os": func() (env.FS, string) { return osenv.NewFS(), t.TempDir() },
		"simfs": func() (env.FS, string) {
			var now int64 = 1_700_000_000_000_000_000
			f := simfs.New(simfs.Options{Dev: 7, Now: func() int64 { now += 1000; return now }})
			f.MkdirAll("/w", 0o755, 0)
			return f.View(0), "/w"
		},
	}
}

// The os-shaped helpers behave alike on the kernel and on simfs.
func TestHelpersOnBothFilesystems(t *testing.T) {
	for name, newFS := range filesystems(t) {
		t.Run(name, func(t *testing.T) {
			fsys, root := newFS()
			if err := envos.MkdirAll(fsys, root+"/a/b/c", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := envos.MkdirAll(fsys, root+"/a/b", 0o755); err != nil {
				t.Fatalf("existing: %v", err)
			}
			if err := envos.WriteFile(fsys, root+"/a/b/c/f", []byte("hello"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := envos.MkdirAll(fsys, root+"/a/b/c/f/g", 0o755); !errors.Is(err, syscall.ENOTDIR) {
				t.Fatalf("MkdirAll through a file: %v", err)
			}
			data, err := envos.ReadFile(fsys, root+"/a/b/c/f")
			if err != nil || string(data) != "hello" {
				t.Fatalf("ReadFile: %q %v", data, err)
			}
			if _, err := envos.ReadFile(fsys, root+"/missing"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("ReadFile missing: %v", err)
			}
			f, err := envos.CreateTemp(fsys, &seqIDs{}, root+"/a", "tmp-*.lock")
			if err != nil || !strings.HasSuffix(f.Name(), ".lock") || !strings.HasPrefix(f.Name(), root+"/a/tmp-") {
				t.Fatalf("CreateTemp: %v", err)
			}
			fi, _ := f.Stat()
			si, _ := fsys.Stat(f.Name())
			other, _ := fsys.Stat(root + "/a/b/c/f")
			if !envos.SameFile(fi, si) || envos.SameFile(fi, other) {
				t.Fatal("SameFile")
			}
			f.Close()
			if err := envos.RemoveAll(fsys, root+"/a"); err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.Lstat(root + "/a"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after RemoveAll: %v", err)
			}
			if err := envos.RemoveAll(fsys, root+"/a"); err != nil {
				t.Fatalf("RemoveAll of nothing: %v", err)
			}
		})
	}
}

// kill(pid, 0) as Linux answers it, on the real process table.
func TestKill0OnTheKernel(t *testing.T) {
	in := osenv.NewInspector()
	pid, err := envos.Getpid(in)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("Getpid %d %v, want %d", pid, err, os.Getpid())
	}
	if err := envos.Kill0(in, pid); err != nil {
		t.Fatalf("self: %v", err)
	}
	if err := envos.Kill0(in, 1<<22+12345); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("absent: %v", err)
	}
	if err := envos.Kill0(in, 0); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("pid 0: %v", err)
	}
}

type fakeInspector struct {
	self env.ProcessIdentity
	pids map[int]env.Inspection
}

func (f fakeInspector) Current() (env.ProcessIdentity, error) { return f.self, nil }
func (f fakeInspector) Inspect(pid int) env.Inspection {
	if in, ok := f.pids[pid]; ok {
		return in
	}
	return env.Inspection{Kind: env.InspectAbsent}
}

// kill(pid, 0)'s answers: EPERM for another user's process unless root,
// nil for a zombie, EPERM when the table cannot be read.
func TestKill0Answers(t *testing.T) {
	pids := map[int]env.Inspection{
		10: {Kind: env.InspectLive, Identity: env.ProcessIdentity{PID: 10, UID: 1000}},
		11: {Kind: env.InspectLive, Identity: env.ProcessIdentity{PID: 11, UID: 2000}},
		12: {Kind: env.InspectLive, Identity: env.ProcessIdentity{PID: 12, UID: 1000}, State: env.StateZombie},
		13: {Kind: env.InspectUnknown, Diagnostic: "EACCES on /proc/13/stat"},
	}
	for _, c := range []struct {
		uid, pid int
		want     error
	}{
		{1000, 10, nil}, {1000, 11, syscall.EPERM}, {0, 11, nil}, {1000, 12, nil},
		{1000, 13, syscall.EPERM}, {1000, 14, syscall.ESRCH},
	} {
		in := fakeInspector{self: env.ProcessIdentity{PID: 1, UID: c.uid}, pids: pids}
		if err := envos.Kill0(in, c.pid); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("uid %d kill(%d, 0) = %v, want %v", c.uid, c.pid, err, c.want)
		}
	}
}

// Chtimes, Truncate, Seek, ReadAt and a file's Truncate behave alike on the
// kernel and on simfs.
func TestTimesAndRandomAccessOnBothFilesystems(t *testing.T) {
	stamp := time.Unix(1_000_000_000, 5)
	for name, newFS := range filesystems(t) {
		t.Run(name, func(t *testing.T) {
			fsys, root := newFS()
			path := root + "/f"
			if err := envos.WriteFile(fsys, path, []byte("0123456789"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := envos.Chtimes(fsys, path, stamp, stamp); err != nil {
				t.Fatal(err)
			}
			if info, err := fsys.Stat(path); err != nil || !info.ModTime().Equal(stamp) {
				t.Fatalf("ModTime after Chtimes: %v %v", info.ModTime(), err)
			}
			if err := envos.Truncate(fsys, path, 6); err != nil {
				t.Fatal(err)
			}
			if info, _ := fsys.Stat(path); info.Size != 6 || !info.ModTime().After(stamp) {
				t.Fatalf("after Truncate: size %d, mtime %v", info.Size, info.ModTime())
			}
			f, err := fsys.OpenFile(path, env.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if pos, err := envos.Seek(f, -2, io.SeekEnd); pos != 4 || err != nil {
				t.Fatalf("Seek: %d %v", pos, err)
			}
			buf := make([]byte, 4)
			if n, err := envos.ReadAt(f, buf, 3); n != 3 || !errors.Is(err, io.EOF) || string(buf[:n]) != "345" {
				t.Fatalf("ReadAt: %d %q %v", n, buf[:n], err)
			}
			if err := envos.FileTruncate(f, 1); err != nil {
				t.Fatal(err)
			}
			if data, _ := envos.ReadFile(fsys, path); string(data) != "0" {
				t.Fatalf("after the file's Truncate: %q", data)
			}
			if err := envos.Truncate(fsys, root+"/missing", 0); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Truncate missing: %v", err)
			}
		})
	}
}

// An FS or File without the optional interfaces answers ENOSYS, in a
// *fs.PathError naming the call.
func TestTimesWithoutTheOptionalInterfaces(t *testing.T) {
	var bare struct{ env.FS }
	var pathErr *fs.PathError
	if err := envos.Chtimes(bare, "/x", time.Time{}, time.Now()); !errors.As(err, &pathErr) || pathErr.Op != "chtimes" || !errors.Is(err, syscall.ENOSYS) {
		t.Fatalf("Chtimes: %v", err)
	}
	if err := envos.Truncate(bare, "/x", 0); !errors.Is(err, syscall.ENOSYS) {
		t.Fatalf("Truncate: %v", err)
	}
	var file struct{ env.File }
	file.File = nameOnly("/x")
	if _, err := envos.Seek(file, 0, io.SeekStart); !errors.Is(err, syscall.ENOSYS) {
		t.Fatalf("Seek: %v", err)
	}
}

// nameOnly is a File that has only a name.
type nameOnly string

func (n nameOnly) Name() string                   { return string(n) }
func (nameOnly) Read([]byte) (int, error)         { return 0, io.EOF }
func (nameOnly) Write([]byte) (int, error)        { return 0, syscall.EBADF }
func (nameOnly) Sync() error                      { return nil }
func (nameOnly) Stat() (env.FileInfo, error)      { return env.FileInfo{}, nil }
func (nameOnly) Close() error                     { return nil }
func (nameOnly) ReadDir() ([]env.DirEntry, error) { return nil, syscall.ENOTDIR }
func (nameOnly) OpenAt(string, env.OpenFlag, fs.FileMode) (env.File, error) {
	return nil, syscall.ENOTDIR
}
func (nameOnly) StatAt(string) (env.FileInfo, error) { return env.FileInfo{}, syscall.ENOTDIR }
func (nameOnly) RemoveAt(string, bool) error         { return syscall.ENOTDIR }
