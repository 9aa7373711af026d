package simfs

import (
	"io"
	"path"
	"syscall"

	"github.com/leasekit/leasekit/lease"
)

// file is an open file description; it implements lease.File.
type file struct {
	v      *view
	node   *inode
	name   string
	flag   lease.OpenFlag
	pos    int
	epoch  uint64
	index  int // position in v.open
	closed bool
}

var _ lease.File = (*file)(nil)

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
	fl.pos = end
	fl.v.fs.markDirty(n)
	return len(p), nil
}

// Sync is os.File.Sync (fsync(2)). An injected EIO or ENOSPC behaves as
// Linux writeback errors do: the dirty data is marked clean without reaching
// the disk, so the next Sync succeeds and a crash loses the data.
func (fl *file) Sync() error {
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
