package leasetest

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/leasekit/leasekit/lease"
)

// Op is one FS call seen by HookFS: its name ("OpenFile", "Rename",
// "Sync", ...), its paths, and for OpenFile its flags.
type Op struct {
	Name  string
	Paths []string
	Flag  lease.OpenFlag
}

func (o Op) String() string { return o.Name + " " + strings.Join(o.Paths, " -> ") }

// HookFS wraps a lease.FS, records every call (File.Sync included, named
// "Sync" with the file's name), and lets a test inject an error before a
// call (Before) or change the world right after one (After). Use it on top
// of osenv.NewFS() to script races and check durability order.
type HookFS struct {
	Inner lease.FS

	mu     sync.Mutex
	ops    []Op
	before func(op Op) error
	after  func(op Op, err error)
}

var _ lease.FS = (*HookFS)(nil)

// NewHookFS wraps inner.
func NewHookFS(inner lease.FS) *HookFS { return &HookFS{Inner: inner} }

// Before installs a hook run before every call; a non-nil error is
// returned instead of running the call.
func (h *HookFS) Before(hook func(op Op) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.before = hook
}

// After installs a hook run after every call with its result.
func (h *HookFS) After(hook func(op Op, err error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.after = hook
}

// Ops returns a copy of the calls recorded so far.
func (h *HookFS) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// ResetOps forgets the recorded calls.
func (h *HookFS) ResetOps() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = nil
}

func (h *HookFS) run(op Op, call func() error) error {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	before, after := h.before, h.after
	h.mu.Unlock()
	if before != nil {
		if err := before(op); err != nil {
			return err
		}
	}
	err := call()
	if after != nil {
		after(op, err)
	}
	return err
}

func (h *HookFS) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	var file lease.File
	err := h.run(Op{Name: "OpenFile", Paths: []string{name}, Flag: flag}, func() (err error) {
		file, err = h.Inner.OpenFile(name, flag, perm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &hookFile{File: file, fs: h}, nil
}

func (h *HookFS) Mkdir(name string, perm fs.FileMode) error {
	return h.run(Op{Name: "Mkdir", Paths: []string{name}}, func() error { return h.Inner.Mkdir(name, perm) })
}

func (h *HookFS) MkdirTemp(dir, pattern string) (string, error) {
	var made string
	err := h.run(Op{Name: "MkdirTemp", Paths: []string{dir, pattern}}, func() (err error) {
		made, err = h.Inner.MkdirTemp(dir, pattern)
		return err
	})
	return made, err
}

func (h *HookFS) Rename(oldpath, newpath string) error {
	return h.run(Op{Name: "Rename", Paths: []string{oldpath, newpath}}, func() error { return h.Inner.Rename(oldpath, newpath) })
}

func (h *HookFS) RenameNoReplace(oldpath, newpath string) error {
	return h.run(Op{Name: "RenameNoReplace", Paths: []string{oldpath, newpath}}, func() error {
		return h.Inner.RenameNoReplace(oldpath, newpath)
	})
}

func (h *HookFS) Link(oldname, newname string) error {
	return h.run(Op{Name: "Link", Paths: []string{oldname, newname}}, func() error { return h.Inner.Link(oldname, newname) })
}

func (h *HookFS) Symlink(oldname, newname string) error {
	return h.run(Op{Name: "Symlink", Paths: []string{oldname, newname}}, func() error { return h.Inner.Symlink(oldname, newname) })
}

func (h *HookFS) Remove(name string) error {
	return h.run(Op{Name: "Remove", Paths: []string{name}}, func() error { return h.Inner.Remove(name) })
}

func (h *HookFS) ReadDir(name string) ([]lease.DirEntry, error) {
	var entries []lease.DirEntry
	err := h.run(Op{Name: "ReadDir", Paths: []string{name}}, func() (err error) {
		entries, err = h.Inner.ReadDir(name)
		return err
	})
	return entries, err
}

func (h *HookFS) Lstat(name string) (lease.FileInfo, error) {
	var info lease.FileInfo
	err := h.run(Op{Name: "Lstat", Paths: []string{name}}, func() (err error) {
		info, err = h.Inner.Lstat(name)
		return err
	})
	return info, err
}

func (h *HookFS) Stat(name string) (lease.FileInfo, error) {
	var info lease.FileInfo
	err := h.run(Op{Name: "Stat", Paths: []string{name}}, func() (err error) {
		info, err = h.Inner.Stat(name)
		return err
	})
	return info, err
}

func (h *HookFS) Readlink(name string) (string, error) {
	var target string
	err := h.run(Op{Name: "Readlink", Paths: []string{name}}, func() (err error) {
		target, err = h.Inner.Readlink(name)
		return err
	})
	return target, err
}

func (h *HookFS) Chmod(name string, mode fs.FileMode) error {
	return h.run(Op{Name: "Chmod", Paths: []string{name}}, func() error { return h.Inner.Chmod(name, mode) })
}

type hookFile struct {
	lease.File
	fs *HookFS
}

func (f *hookFile) Sync() error {
	return f.fs.run(Op{Name: "Sync", Paths: []string{f.File.Name()}}, f.File.Sync)
}

// The directory-handle calls are recorded and hooked like the path calls,
// named after the method, with the joined path (the directory's for ReadDir).

func (f *hookFile) ReadDir() ([]lease.DirEntry, error) {
	var entries []lease.DirEntry
	err := f.fs.run(Op{Name: "ReadDirAt", Paths: []string{f.File.Name()}}, func() (err error) {
		entries, err = f.File.ReadDir()
		return err
	})
	return entries, err
}

func (f *hookFile) OpenAt(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	var file lease.File
	err := f.fs.run(Op{Name: "OpenAt", Paths: []string{path.Join(f.File.Name(), name)}, Flag: flag}, func() (err error) {
		file, err = f.File.OpenAt(name, flag, perm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &hookFile{File: file, fs: f.fs}, nil
}

func (f *hookFile) StatAt(name string) (lease.FileInfo, error) {
	var info lease.FileInfo
	err := f.fs.run(Op{Name: "StatAt", Paths: []string{path.Join(f.File.Name(), name)}}, func() (err error) {
		info, err = f.File.StatAt(name)
		return err
	})
	return info, err
}

func (f *hookFile) RemoveAt(name string, dir bool) error {
	return f.fs.run(Op{Name: "RemoveAt", Paths: []string{path.Join(f.File.Name(), name)}}, func() error {
		return f.File.RemoveAt(name, dir)
	})
}

// SyncedAfter reports whether ops holds a Sync of dir after the first op
// named name whose paths include path; it explains itself when not.
func SyncedAfter(ops []Op, name, path, dir string) error {
	for i, op := range ops {
		if op.Name != name || !contains(op.Paths, path) {
			continue
		}
		for _, later := range ops[i+1:] {
			if later.Name == "Sync" && later.Paths[0] == dir {
				return nil
			}
		}
		return fmt.Errorf("no Sync of %s after %v", dir, op)
	}
	return fmt.Errorf("no %s involving %s", name, path)
}

func contains(paths []string, want string) bool {
	for _, p := range paths {
		if p == want {
			return true
		}
	}
	return false
}
