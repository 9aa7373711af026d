// Package aferoenv runs code written against github.com/spf13/afero on
// leasekit's environment: Fs is an afero.Fs over an env.FS, so the same
// code runs on the kernel (lease/osenv) and in the simulator (simfs, a
// sim.Proc's FS) with its crash model and faults.
//
// It is a module of its own so that the main module's users do not
// inherit afero. Every call is the env call of the same shape (or the
// envos function); what env does not have answers ENOSYS in a
// *fs.PathError: Chown, File.WriteAt, and the os flags env has no bit for
// (O_SYNC). Paths must be absolute and clean, as env's are.
package aferoenv

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/spf13/afero"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/envos"
)

// Fs is afero.Fs (with afero.Lstater and afero.Symlinker) over FS.
type Fs struct{ FS env.FS }

var (
	_ afero.Fs        = Fs{}
	_ afero.Lstater   = Fs{}
	_ afero.Symlinker = Fs{}
)

// New returns the afero view of fsys.
func New(fsys env.FS) Fs { return Fs{FS: fsys} }

// Name is afero.Fs.Name.
func (Fs) Name() string { return "leasekit-env" }

// Create is os.Create: read-write, created or truncated, mode 0666 before
// the umask.
func (f Fs) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Open is os.Open: read-only.
func (f Fs) Open(name string) (afero.File, error) { return f.OpenFile(name, os.O_RDONLY, 0) }

// OpenFile is os.OpenFile with the os flags env has bits for.
func (f Fs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	envFlag, ok := openFlag(flag)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOSYS}
	}
	opened, err := f.FS.OpenFile(name, envFlag, perm)
	if err != nil {
		return nil, err
	}
	return &File{file: opened}, nil
}

// openFlag maps os flags to env's; ok is false for a flag env lacks.
func openFlag(flag int) (env.OpenFlag, bool) {
	var out env.OpenFlag
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		out = env.O_WRONLY
	case os.O_RDWR:
		out = env.O_RDWR
	}
	known := os.O_RDONLY | os.O_WRONLY | os.O_RDWR | syscall.O_CLOEXEC // osenv always adds O_CLOEXEC
	for _, pair := range openFlagBits {
		known |= pair.os
		if flag&pair.os != 0 {
			out |= pair.env
		}
	}
	if flag&^known != 0 {
		return 0, false
	}
	return out, true
}

// openFlagBits are the os flags env has a bit for, beside the access mode.
var openFlagBits = []struct {
	os  int
	env env.OpenFlag
}{
	{os.O_CREATE, env.O_CREATE}, {os.O_EXCL, env.O_EXCL}, {os.O_TRUNC, env.O_TRUNC}, {os.O_APPEND, env.O_APPEND},
	{syscall.O_NOFOLLOW, env.O_NOFOLLOW}, {syscall.O_DIRECTORY, env.O_DIRECTORY},
}

// Mkdir is os.Mkdir.
func (f Fs) Mkdir(name string, perm os.FileMode) error { return f.FS.Mkdir(name, perm) }

// MkdirAll is os.MkdirAll.
func (f Fs) MkdirAll(path string, perm os.FileMode) error { return envos.MkdirAll(f.FS, path, perm) }

// Remove is os.Remove.
func (f Fs) Remove(name string) error { return f.FS.Remove(name) }

// RemoveAll is os.RemoveAll.
func (f Fs) RemoveAll(path string) error { return envos.RemoveAll(f.FS, path) }

// Rename is os.Rename.
func (f Fs) Rename(oldname, newname string) error { return f.FS.Rename(oldname, newname) }

// Stat is os.Stat.
func (f Fs) Stat(name string) (os.FileInfo, error) {
	info, err := f.FS.Stat(name)
	if err != nil {
		return nil, err
	}
	return FileInfo{info}, nil
}

// LstatIfPossible is os.Lstat (afero.Lstater); env always has it.
func (f Fs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	info, err := f.FS.Lstat(name)
	if err != nil {
		return nil, true, err
	}
	return FileInfo{info}, true, nil
}

// SymlinkIfPossible is os.Symlink (afero.Linker).
func (f Fs) SymlinkIfPossible(oldname, newname string) error { return f.FS.Symlink(oldname, newname) }

// ReadlinkIfPossible is os.Readlink (afero.LinkReader).
func (f Fs) ReadlinkIfPossible(name string) (string, error) { return f.FS.Readlink(name) }

// Chmod is os.Chmod.
func (f Fs) Chmod(name string, mode os.FileMode) error { return f.FS.Chmod(name, mode) }

// Chown is ENOSYS: env has no chown (every simulated process has one uid).
func (Fs) Chown(name string, _, _ int) error {
	return &fs.PathError{Op: "chown", Path: name, Err: syscall.ENOSYS}
}

// Chtimes is os.Chtimes (envos.Chtimes: ENOSYS where the FS has no
// env.AttrFS).
func (f Fs) Chtimes(name string, atime, mtime time.Time) error {
	return envos.Chtimes(f.FS, name, atime, mtime)
}

// FileInfo is os.FileInfo over env.FileInfo; Sys returns the env.FileInfo
// (device, inode, birth time, uid).
type FileInfo struct{ Info env.FileInfo }

func (i FileInfo) Name() string       { return i.Info.Name }
func (i FileInfo) Size() int64        { return i.Info.Size }
func (i FileInfo) Mode() os.FileMode  { return i.Info.Mode }
func (i FileInfo) ModTime() time.Time { return i.Info.ModTime() }
func (i FileInfo) IsDir() bool        { return i.Info.IsDir() }
func (i FileInfo) Sys() any           { return i.Info }
