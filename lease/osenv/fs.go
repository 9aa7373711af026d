package osenv

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/lease"
)

// FS is lease.FS on the kernel. Each method is one system call (two for
// Remove, as os.Remove), retried on EINTR and wrapped as the os package does.
type FS struct{}

var _ lease.FS = FS{}

// NewFS returns the real filesystem.
func NewFS() lease.FS { return FS{} }

const (
	// mkdirTempAttemptsMax bounds MkdirTemp's search for a free name, as
	// os.MkdirTemp does.
	mkdirTempAttemptsMax = 10000
	// readlinkBytesMax bounds Readlink's buffer growth; no kernel returns a
	// link target this long (PATH_MAX is 4096 on Linux, 1024 on darwin).
	readlinkBytesMax = 1 << 16
)

// openFlags translates leasekit's flags to the kernel's. O_CLOEXEC is always
// set, so a child started by the host program never inherits a lease fd.
// Read-only opens add O_NONBLOCK: a FIFO swapped in for a state file between
// the caller's Lstat and its open must not block the engine forever (the
// caller's fstat then refuses it); on regular files and directories the flag
// changes nothing.
func openFlags(flag lease.OpenFlag) int {
	out := unix.O_CLOEXEC
	switch flag.AccessMode() {
	case lease.O_RDONLY:
		out |= unix.O_RDONLY | unix.O_NONBLOCK
	case lease.O_WRONLY:
		out |= unix.O_WRONLY
	case lease.O_RDWR:
		out |= unix.O_RDWR
	default:
		// Both O_WRONLY and O_RDWR: the kernel would take it as O_ACCMODE
		// (3), which Linux documents as "check permissions only".
		out |= unix.O_RDWR
	}
	table := []struct {
		ours   lease.OpenFlag
		kernel int
	}{
		{lease.O_CREATE, unix.O_CREAT},
		{lease.O_EXCL, unix.O_EXCL},
		{lease.O_TRUNC, unix.O_TRUNC},
		{lease.O_APPEND, unix.O_APPEND},
		{lease.O_NOFOLLOW, unix.O_NOFOLLOW},
		{lease.O_DIRECTORY, unix.O_DIRECTORY},
	}
	for _, row := range table {
		if flag&row.ours != 0 {
			out |= row.kernel
		}
	}
	return out
}

// syscallMode is os.syscallMode: permission bits plus setuid, setgid and
// sticky, in the kernel's encoding.
func syscallMode(mode fs.FileMode) uint32 {
	out := uint32(mode.Perm())
	if mode&fs.ModeSetuid != 0 {
		out |= unix.S_ISUID
	}
	if mode&fs.ModeSetgid != 0 {
		out |= unix.S_ISGID
	}
	if mode&fs.ModeSticky != 0 {
		out |= unix.S_ISVTX
	}
	return out
}

// fileMode is the inverse of syscallMode plus the type bits, as os.Stat
// fills FileMode from st_mode.
func fileMode(mode uint32) fs.FileMode {
	out := fs.FileMode(mode & 0o777)
	switch mode & unix.S_IFMT {
	case unix.S_IFBLK:
		out |= fs.ModeDevice
	case unix.S_IFCHR:
		out |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		out |= fs.ModeDir
	case unix.S_IFIFO:
		out |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		out |= fs.ModeSymlink
	case unix.S_IFREG:
	case unix.S_IFSOCK:
		out |= fs.ModeSocket
	}
	if mode&unix.S_ISUID != 0 {
		out |= fs.ModeSetuid
	}
	if mode&unix.S_ISGID != 0 {
		out |= fs.ModeSetgid
	}
	if mode&unix.S_ISVTX != 0 {
		out |= fs.ModeSticky
	}
	return out
}

// OpenFile is open(2) with O_CLOEXEC.
func (FS) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	fd := -1
	err := retryEINTR(func() error {
		var err error
		fd, err = unix.Open(name, openFlags(flag), syscallMode(perm))
		return err
	})
	if err != nil {
		return nil, pathError("open", name, err)
	}
	if fd < 0 {
		panic("osenv: open returned a negative fd without an error")
	}
	return &File{fd: fd, name: name}, nil
}

// Mkdir is mkdir(2).
func (FS) Mkdir(name string, perm fs.FileMode) error {
	err := retryEINTR(func() error { return unix.Mkdir(name, syscallMode(perm)) })
	return pathError("mkdir", name, err)
}

// MkdirTemp is os.MkdirTemp: mode 0700, the last "*" of pattern (or its
// end) replaced by a random suffix, retried on EEXIST a bounded number of
// times. A pattern holding a path separator fails with EINVAL.
func (fsys FS) MkdirTemp(dir, pattern string) (string, error) {
	if strings.ContainsRune(pattern, os.PathSeparator) {
		return "", pathError("mkdirtemp", pattern, syscall.EINVAL)
	}
	prefix, suffix := pattern, ""
	if star := strings.LastIndexByte(pattern, '*'); star >= 0 {
		prefix, suffix = pattern[:star], pattern[star+1:]
	}
	var err error
	for range mkdirTempAttemptsMax {
		name := filepath.Join(dir, prefix+randomSuffix()+suffix)
		err = retryEINTR(func() error { return unix.Mkdir(name, 0o700) })
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, syscall.EEXIST) {
			break
		}
	}
	return "", pathError("mkdirtemp", filepath.Join(dir, pattern), err)
}

// randomSuffix returns 12 random hex digits. crypto/rand cannot fail on the
// supported platforms (Go 1.24+ panics instead of returning an error).
func randomSuffix() string {
	var raw [6]byte
	_, _ = rand.Read(raw[:])
	return hex.EncodeToString(raw[:])
}

// Rename is rename(2) (renameat with AT_FDCWD).
func (FS) Rename(oldpath, newpath string) error {
	err := retryEINTR(func() error {
		return unix.Renameat(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath)
	})
	return linkError("rename", oldpath, newpath, err)
}

// RenameNoReplace is rename without replacement: EEXIST if newpath exists.
// See renameNoReplace in rename_*.go for the per-platform call. A
// filesystem without the primitive fails with an errno that is
// errors.ErrUnsupported (ENOSYS, EOPNOTSUPP; Linux's EINVAL for the flag is
// reported as EOPNOTSUPP), so that callers can fall back.
func (FS) RenameNoReplace(oldpath, newpath string) error {
	err := retryEINTR(func() error { return renameNoReplace(oldpath, newpath) })
	return linkError("renamenoreplace", oldpath, newpath, err)
}

// Link is link(2); it does not follow a symlink in oldname.
func (FS) Link(oldname, newname string) error {
	err := retryEINTR(func() error { return unix.Link(oldname, newname) })
	return linkError("link", oldname, newname, err)
}

// Symlink is symlink(2).
func (FS) Symlink(oldname, newname string) error {
	err := retryEINTR(func() error { return unix.Symlink(oldname, newname) })
	return linkError("symlink", oldname, newname, err)
}

// Remove is os.Remove: unlink(2), then rmdir(2) if unlink failed. Neither
// follows a final symlink. Linux and darwin disagree on unlink(dir) (EISDIR
// versus EPERM), but both return ENOTDIR for rmdir(non-directory), so that
// decides which of the two errors is the real one.
func (FS) Remove(name string) error {
	errUnlink := retryEINTR(func() error { return unix.Unlink(name) })
	if errUnlink == nil {
		return nil
	}
	errRmdir := retryEINTR(func() error { return unix.Rmdir(name) })
	if errRmdir == nil {
		return nil
	}
	if !errors.Is(errRmdir, syscall.ENOTDIR) {
		errUnlink = errRmdir
	}
	return pathError("remove", name, errUnlink)
}

// ReadDir is os.ReadDir: entries sorted by name, without "." and "..". It
// opens the directory itself (O_DIRECTORY, so a file fails with ENOTDIR) and
// lets the os package decode getdents, which already retries EINTR and
// falls back to lstat for DT_UNKNOWN.
func (fsys FS) ReadDir(name string) ([]lease.DirEntry, error) {
	fd := -1
	err := retryEINTR(func() error {
		var err error
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, pathError("open", name, err)
	}
	dir := os.NewFile(uintptr(fd), name)
	defer dir.Close()
	raw, err := dir.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	entries := make([]lease.DirEntry, 0, len(raw))
	for _, entry := range raw {
		entries = append(entries, lease.DirEntry{Name: entry.Name(), Type: entry.Type().Type()})
	}
	slices.SortFunc(entries, func(a, b lease.DirEntry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// Lstat is lstat(2) with birth time; it does not follow a final symlink.
func (FS) Lstat(name string) (lease.FileInfo, error) {
	info, err := statPath(name, false)
	return info, pathError("lstat", name, err)
}

// Stat is stat(2) with birth time; it follows symlinks.
func (FS) Stat(name string) (lease.FileInfo, error) {
	info, err := statPath(name, true)
	return info, pathError("stat", name, err)
}

// Readlink is readlink(2), growing its buffer up to readlinkBytesMax.
func (FS) Readlink(name string) (string, error) {
	for size := 256; size <= readlinkBytesMax; size *= 2 {
		buffer := make([]byte, size)
		n := 0
		err := retryEINTR(func() error {
			var err error
			n, err = unix.Readlink(name, buffer)
			return err
		})
		if err != nil {
			return "", pathError("readlink", name, err)
		}
		if n < size {
			return string(buffer[:n]), nil
		}
	}
	return "", pathError("readlink", name, syscall.ENAMETOOLONG)
}

// Chmod is chmod(2); it follows symlinks.
func (FS) Chmod(name string, mode fs.FileMode) error {
	err := retryEINTR(func() error { return unix.Chmod(name, syscallMode(mode)) })
	return pathError("chmod", name, err)
}
