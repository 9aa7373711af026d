package osenv

import (
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

// The directory-handle methods of File: each is one *at system call on
// f.fd, retried on EINTR, its error a *fs.PathError naming the joined path.

// validName is statefile.ValidName: one path component, not "." or "..".
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// at checks f and name before an *at call; it returns the joined path.
func (f *File) at(name string) (string, error) {
	joined := filepath.Join(f.name, name)
	switch {
	case f.fd < 0:
		return joined, syscall.EBADF
	case !validName(name):
		return joined, syscall.EINVAL
	}
	return joined, nil
}

// ReadDir is getdents(2) on the open directory, sorted by name, without "."
// and "..". It reads through a fresh descriptor of the same directory
// (openat(fd, ".")), so the offset of f is not consumed and every call
// lists from the start; the os package decodes the entries (retrying EINTR,
// and falling back to an lstat by path for DT_UNKNOWN, which only fills in
// the type: callers that act on an entry StatAt it first).
func (f *File) ReadDir() ([]lease.DirEntry, error) {
	if f.fd < 0 {
		return nil, pathError("readdirent", f.name, syscall.EBADF)
	}
	fd := -1
	err := retryEINTR(func() error {
		var err error
		fd, err = unix.Openat(f.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, pathError("readdirent", f.name, err)
	}
	dir := os.NewFile(uintptr(fd), f.name)
	defer dir.Close()
	raw, err := dir.ReadDir(-1)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			return nil, pathError("readdirent", f.name, pathErr.Err)
		}
		return nil, err
	}
	entries := make([]lease.DirEntry, 0, len(raw))
	for _, entry := range raw {
		entries = append(entries, lease.DirEntry{Name: entry.Name(), Type: entry.Type().Type()})
	}
	slices.SortFunc(entries, func(a, b lease.DirEntry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// OpenAt is openat(2) with O_CLOEXEC, relative to the open directory.
func (f *File) OpenAt(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	joined, err := f.at(name)
	if err != nil {
		return nil, pathError("openat", joined, err)
	}
	fd := -1
	err = retryEINTR(func() error {
		var err error
		fd, err = unix.Openat(f.fd, name, openFlags(flag), syscallMode(perm))
		return err
	})
	if err != nil {
		return nil, pathError("openat", joined, err)
	}
	if fd < 0 {
		panic("osenv: openat returned a negative fd without an error")
	}
	return &File{fd: fd, name: joined}, nil
}

// StatAt is fstatat(2) (statx on Linux) with AT_SYMLINK_NOFOLLOW.
func (f *File) StatAt(name string) (lease.FileInfo, error) {
	joined, err := f.at(name)
	if err != nil {
		return lease.FileInfo{}, pathError("fstatat", joined, err)
	}
	info, err := statAt(f.fd, name)
	return info, pathError("fstatat", joined, err)
}

// RemoveAt is unlinkat(2), with AT_REMOVEDIR when dir.
func (f *File) RemoveAt(name string, dir bool) error {
	joined, err := f.at(name)
	if err != nil {
		return pathError("unlinkat", joined, err)
	}
	flags := 0
	if dir {
		flags = unix.AT_REMOVEDIR
	}
	err = retryEINTR(func() error { return unix.Unlinkat(f.fd, name, flags) })
	return pathError("unlinkat", joined, err)
}
