// Package envos is the os package's shape over leasekit's injected
// interfaces (package env), so that porting lock code that calls os today
// is mostly search and replace: os.ReadFile(name) becomes
// envos.ReadFile(fsys, name), and the same code runs on the real kernel
// (lease/osenv) and in the simulator (a sim.Proc's FS and Inspector).
// Errors are the *fs.PathError values the FS returns, as os gives them;
// Kill0 answers a bare syscall.Errno, as kill(2) does.
package envos

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"strconv"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/env"
)

// readsMax bounds ReadFile's loop: 1 GiB in 32 KiB reads.
const readsMax = 1 << 15

// ReadFile is os.ReadFile.
func ReadFile(fsys env.FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, env.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []byte
	buf := make([]byte, 32<<10)
	for range readsMax {
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
	return out, &fs.PathError{Op: "read", Path: name, Err: syscall.EFBIG}
}

// WriteFile is os.WriteFile: create or truncate, write, close. Like
// os.WriteFile it does not fsync.
func WriteFile(fsys env.FS, name string, data []byte, perm fs.FileMode) error {
	f, err := fsys.OpenFile(name, env.O_WRONLY|env.O_CREATE|env.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err
}

// MkdirAll is os.MkdirAll.
func MkdirAll(fsys env.FS, name string, perm fs.FileMode) error {
	if info, err := fsys.Stat(name); err == nil {
		if info.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: name, Err: syscall.ENOTDIR}
	}
	if parent := path.Dir(name); parent != name {
		if err := MkdirAll(fsys, parent, perm); err != nil {
			return err
		}
	}
	err := fsys.Mkdir(name, perm)
	if err != nil {
		if info, statErr := fsys.Lstat(name); statErr == nil && info.IsDir() {
			return nil // made concurrently, as os.MkdirAll accepts
		}
	}
	return err
}

// removeDepthMax bounds RemoveAll's recursion.
const removeDepthMax = 256

// RemoveAll is os.RemoveAll: removes name and everything below it; a
// missing name is not an error.
func RemoveAll(fsys env.FS, name string) error { return removeAll(fsys, name, 0) }

func removeAll(fsys env.FS, name string, depth int) error {
	err := fsys.Remove(name)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	info, statErr := fsys.Lstat(name)
	if statErr != nil {
		if errors.Is(statErr, fs.ErrNotExist) {
			return nil
		}
		return statErr
	}
	if !info.IsDir() || depth >= removeDepthMax {
		return err
	}
	entries, readErr := fsys.ReadDir(name)
	if readErr != nil {
		return readErr
	}
	for _, e := range entries {
		if err := removeAll(fsys, name+"/"+e.Name, depth+1); err != nil {
			return err
		}
	}
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// createTempTries bounds CreateTemp's name attempts, as os does (10000).
const createTempTries = 10000

// CreateTemp is os.CreateTemp: a new file dir/pattern with the last "*"
// (or the end) replaced by a random string, opened read-write, mode 0600.
// The random string comes from ids (the injected ID source).
func CreateTemp(fsys env.FS, ids env.IDSource, dir, pattern string) (env.File, error) {
	prefix, suffix := pattern, ""
	for i := len(pattern) - 1; i >= 0; i-- {
		if pattern[i] == '*' {
			prefix, suffix = pattern[:i], pattern[i+1:]
			break
		}
	}
	var err error
	for range createTempTries {
		name := dir + "/" + prefix + strconv.FormatUint(hashID(ids.NewID()), 10) + suffix
		var f env.File
		f, err = fsys.OpenFile(name, env.O_RDWR|env.O_CREATE|env.O_EXCL, 0o600)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return nil, err
}

// hashID shortens an ID to a number, as os.CreateTemp's names are.
func hashID(id string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return h % 1_000_000_000
}

// MkdirTemp is os.MkdirTemp (the FS's own).
func MkdirTemp(fsys env.FS, dir, pattern string) (string, error) { return fsys.MkdirTemp(dir, pattern) }

// SameFile is os.SameFile: the two infos name one inode (device and inode
// number, as os compares them).
func SameFile(a, b env.FileInfo) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// Getpid is os.Getpid: the calling process's PID, from the inspector.
func Getpid(in env.Inspector) (int, error) {
	id, err := in.Current()
	if err != nil {
		return 0, err
	}
	return id.PID, nil
}

// Kill0 is kill(pid, 0) (process.Signal(syscall.Signal(0)) in os terms),
// answered from the process table as Linux answers it: nil for a process
// the caller may signal (a zombie too), ESRCH when no process has the PID,
// EPERM for another user's process when the caller is not root. A table
// that could not be read for the PID (EACCES on /proc) answers EPERM,
// which is what kill says for the other users' processes /proc hides.
func Kill0(in env.Inspector, pid int) error {
	if pid <= 0 {
		return syscall.EINVAL
	}
	inspection := in.Inspect(pid)
	switch inspection.Kind {
	case env.InspectAbsent:
		return syscall.ESRCH
	case env.InspectLive:
		self, err := in.Current()
		if err != nil {
			return err
		}
		if self.UID != 0 && self.UID != inspection.Identity.UID {
			return syscall.EPERM
		}
		return nil
	}
	return syscall.EPERM
}

// Chtimes is os.Chtimes: the FS's env.AttrFS, ENOSYS where it has none.
func Chtimes(fsys env.FS, name string, atime, mtime time.Time) error {
	attrs, ok := fsys.(env.AttrFS)
	if !ok {
		return &fs.PathError{Op: "chtimes", Path: name, Err: syscall.ENOSYS}
	}
	return attrs.Chtimes(name, atime, mtime)
}

// Truncate is os.Truncate: the FS's env.AttrFS, ENOSYS where it has none.
func Truncate(fsys env.FS, name string, size int64) error {
	attrs, ok := fsys.(env.AttrFS)
	if !ok {
		return &fs.PathError{Op: "truncate", Path: name, Err: syscall.ENOSYS}
	}
	return attrs.Truncate(name, size)
}

// randomAccess is f's env.RandomAccess, or ENOSYS naming op.
func randomAccess(f env.File, op string) (env.RandomAccess, error) {
	ra, ok := f.(env.RandomAccess)
	if !ok {
		return nil, &fs.PathError{Op: op, Path: f.Name(), Err: syscall.ENOSYS}
	}
	return ra, nil
}

// Seek is f.Seek of *os.File (whence io.SeekStart, io.SeekCurrent, io.SeekEnd).
func Seek(f env.File, offset int64, whence int) (int64, error) {
	ra, err := randomAccess(f, "seek")
	if err != nil {
		return 0, err
	}
	return ra.Seek(offset, whence)
}

// ReadAt is f.ReadAt of *os.File.
func ReadAt(f env.File, p []byte, off int64) (int, error) {
	ra, err := randomAccess(f, "pread")
	if err != nil {
		return 0, err
	}
	return ra.ReadAt(p, off)
}

// FileTruncate is f.Truncate of *os.File (ftruncate(2)).
func FileTruncate(f env.File, size int64) error {
	ra, err := randomAccess(f, "truncate")
	if err != nil {
		return err
	}
	return ra.Truncate(size)
}
