package simfs

import (
	"io"
	"io/fs"
	"path"
	"syscall"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lease"
)

// file is an open file description; it implements lease.File.
type file struct {
	v      *view
	node   *inode
	name   string
	pos    int
	epoch  uint64
	index  int // position in v.open
	flag   lease.OpenFlag
	closed bool
}

// fileSlabLen is how many file descriptions one allocation holds. Opens are
// the most frequent FS call, and their handles are short-lived, so carving
// them from a shared array saves most of an allocation per open; a slab
// lives on while any of its handles does, which bounds the waste.
const fileSlabLen = 16

// newFile returns a zero file description carved from the FS's slab.
func (f *FS) newFile() *file {
	if len(f.fileSlab) == 0 {
		f.fileSlab = make([]file, fileSlabLen)
	}
	fl := &f.fileSlab[0]
	f.fileSlab = f.fileSlab[1:]
	return fl
}

var _ env.File = (*file)(nil) // the public interface (lease.File is its alias)

// valid reports whether the file may still be used: not closed, and not
// invalidated by a Crash since it was opened.
func (fl *file) valid() bool { return !fl.closed && fl.epoch == fl.v.fs.epoch }

// Name is os.File.Name.
func (fl *file) Name() string { return fl.name }

// Read is os.File.Read: io.EOF at the end of the data.
func (fl *file) Read(p []byte) (int, error) {
	if !fl.valid() {
		return 0, pathErr("read", fl.name, syscall.EBADF)
	}
	if errno := fl.v.inject(OpRead, fl.name, ""); errno != 0 {
		return 0, pathErr("read", fl.name, errno)
	}
	if fl.node.isDir() {
		return 0, pathErr("read", fl.name, syscall.EISDIR)
	}
	if fl.flag.AccessMode() == lease.O_WRONLY {
		return 0, pathErr("read", fl.name, syscall.EBADF)
	}
	if len(p) == 0 {
		return 0, nil
	}
	data := fl.node.data
	if fl.pos >= len(data) {
		return 0, io.EOF
	}
	n := copy(p, data[fl.pos:])
	fl.pos += n
	return n, nil
}

// Write is os.File.Write; with O_APPEND every write goes to the end.
func (fl *file) Write(p []byte) (int, error) {
	fl.v.fs.changes++
	if !fl.valid() {
		return 0, pathErr("write", fl.name, syscall.EBADF)
	}
	if errno := fl.v.inject(OpWrite, fl.name, ""); errno != 0 {
		return 0, pathErr("write", fl.name, errno)
	}
	if !fl.flag.Writable() {
		return 0, pathErr("write", fl.name, syscall.EBADF)
	}
	n := fl.node
	if len(p) == 0 {
		return 0, nil
	}
	if fl.flag&lease.O_APPEND != 0 {
		fl.pos = len(n.data)
	}
	end := fl.pos + len(p)
	if fl.pos == len(n.data) && !n.shared {
		// Writing at the end (a record written whole into a new file):
		// append, without clearing the room first.
		n.data = append(n.data, p...)
	} else {
		fl.writeAt(p, end)
	}
	fl.pos = end
	n.mtime = fl.v.clock()
	fl.v.fs.markDirty(n)
	return len(p), nil
}

// writeAt is Write's copy of p into the data at the file position, which
// ends at end: the data is unshared and extended first as needed.
func (fl *file) writeAt(p []byte, end int) {
	n := fl.node
	if n.shared {
		// The synced data aliases this slice: copy before writing.
		fresh := make([]byte, len(n.data), max(end, len(n.data)))
		copy(fresh, n.data)
		n.data, n.shared = fresh, false
	}
	if end > len(n.data) {
		n.data = append(n.data[:len(n.data)], make([]byte, end-len(n.data))...)
	}
	copy(n.data[fl.pos:end], p)
}

// Sync is os.File.Sync (fsync(2)). An injected EIO or ENOSPC behaves as
// Linux writeback errors do: the dirty data is marked clean without reaching
// the disk, so the next Sync succeeds and a crash loses the data.
func (fl *file) Sync() error {
	fl.v.fs.changes++
	if !fl.valid() {
		return pathErr("sync", fl.name, syscall.EBADF)
	}
	f := fl.v.fs
	n := fl.node
	if errno := fl.v.inject(OpSync, fl.name, ""); errno != 0 {
		if (errno == syscall.EIO || errno == syscall.ENOSPC) && n.dirty {
			n.dirty = false
			f.dirtyCount--
		}
		return pathErr("sync", fl.name, errno)
	}
	f.syncInode(n)
	return nil
}

// Stat is os.File.Stat (fstat(2)); it works on an unlinked file too.
func (fl *file) Stat() (lease.FileInfo, error) {
	if !fl.valid() {
		return lease.FileInfo{}, pathErr("stat", fl.name, syscall.EBADF)
	}
	if errno := fl.v.inject(OpStat, fl.name, ""); errno != 0 {
		return lease.FileInfo{}, pathErr("stat", fl.name, errno)
	}
	return fl.v.fs.info(fl.node, path.Base(fl.name)), nil
}

// Close is os.File.Close.
func (fl *file) Close() error {
	fl.v.fs.changes++
	if !fl.valid() {
		return pathErr("close", fl.name, syscall.EBADF)
	}
	fl.closeNow()
	return nil
}

// closeNow drops the handle and frees an unlinked inode it kept alive.
func (fl *file) closeNow() {
	v := fl.v
	fl.closed = true
	v.fs.locks.closed(fl)
	last := len(v.open) - 1
	if v.open[fl.index] != fl {
		panic("simfs: open-file registry out of step")
	}
	v.open[fl.index] = v.open[last]
	v.open[fl.index].index = fl.index
	v.open[last] = nil
	v.open = v.open[:last]
	fl.node.opens--
	if fl.node.opens < 0 {
		panic("simfs: negative open count")
	}
	v.fs.release(fl.node)
}

// dirHandle checks that fl is a valid directory handle and name one
// component; op and the joined path name the error.
func (fl *file) dirHandle(op, name string) (joined string, errno syscall.Errno) {
	joined = joinName(fl.name, name)
	switch {
	case !fl.valid():
		return joined, syscall.EBADF
	case !validName(name):
		return joined, syscall.EINVAL
	case !fl.node.isDir():
		return joined, syscall.ENOTDIR
	}
	return joined, 0
}

// ReadDir is getdents(2) on the open directory inode, sorted by name.
func (fl *file) ReadDir() ([]lease.DirEntry, error) {
	if !fl.valid() {
		return nil, pathErr("readdirent", fl.name, syscall.EBADF)
	}
	if errno := fl.v.inject(OpReadDir, fl.name, ""); errno != 0 {
		return nil, pathErr("readdirent", fl.name, errno)
	}
	if !fl.node.isDir() {
		return nil, pathErr("readdirent", fl.name, syscall.ENOTDIR)
	}
	if !fl.v.may(fl.node, mayRead) {
		return nil, pathErr("readdirent", fl.name, syscall.EACCES)
	}
	if fl.node.links == 0 {
		return nil, pathErr("readdirent", fl.name, syscall.ENOENT) // Linux: a removed directory lists as ENOENT
	}
	return sortedEntries(fl.node), nil
}

// OpenAt is openat(2) from the open directory inode.
func (fl *file) OpenAt(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	fl.v.fs.changes++
	joined, errno := fl.dirHandle("openat", name)
	if errno != 0 {
		return nil, pathErr("openat", joined, errno)
	}
	opened, errno := fl.v.openFileFrom(fl.node, name, joined, flag, perm)
	if errno != 0 {
		return nil, pathErr("openat", joined, errno)
	}
	return opened, nil
}

// StatAt is fstatat(2) with AT_SYMLINK_NOFOLLOW from the open directory inode.
func (fl *file) StatAt(name string) (lease.FileInfo, error) {
	joined, errno := fl.dirHandle("fstatat", name)
	if errno == 0 {
		errno = fl.v.inject(OpStat, joined, "")
	}
	if errno != 0 {
		return lease.FileInfo{}, pathErr("fstatat", joined, errno)
	}
	_, _, node, errno := fl.v.resolveAt(fl.node, name, false)
	if errno == 0 && node == nil {
		errno = syscall.ENOENT
	}
	if errno != 0 {
		return lease.FileInfo{}, pathErr("fstatat", joined, errno)
	}
	return fl.v.fs.info(node, name), nil
}

// RemoveAt is unlinkat(2) from the open directory inode.
func (fl *file) RemoveAt(name string, dir bool) error {
	fl.v.fs.changes++
	joined, errno := fl.dirHandle("unlinkat", name)
	if errno == 0 {
		errno = fl.v.inject(OpRemove, joined, "")
	}
	if errno != 0 {
		return pathErr("unlinkat", joined, errno)
	}
	parent, base, node, errno := fl.v.resolveAt(fl.node, name, false)
	switch {
	case errno != 0:
	case node == nil:
		errno = syscall.ENOENT
	case dir && !node.isDir():
		errno = syscall.ENOTDIR
	case !dir && node.isDir():
		errno = syscall.EISDIR
	default:
		errno = fl.v.removeEntry(parent, base, node)
	}
	if errno != 0 {
		return pathErr("unlinkat", joined, errno)
	}
	return nil
}

// joinName is path.Join(dir, name). A handle's name is almost always clean
// and name one valid component, and then the join is a plain concatenation:
// one allocation instead of path.Join's two. (path.Clean of a clean path
// returns it unchanged without allocating.)
func joinName(dir, name string) string {
	if !validName(name) || dir == "" || dir == "." || path.Clean(dir) != dir {
		return path.Join(dir, name)
	}
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// validName is lease.ValidName: one path component, not "." or "..".
func validName(name string) bool { return lease.ValidName(name) }
