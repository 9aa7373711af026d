package simfs

import (
	"io"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/env"
)

// Modification times, truncation and positioned reads (env.AttrFS and
// env.RandomAccess), with Linux's rules: a write, a truncation or an
// O_TRUNC open stamps st_mtime with the clock of the host the calling
// process runs on (SetClock), so a clock step on that host moves the
// stamps it makes and two hosts sharing a volume stamp with their own
// clocks. A file's modification time is durable with its data: an fsync
// keeps it, and a power loss returns it to the last synced one. A
// directory's time is its creation time unless Chtimes sets it (the
// kernel also moves it when entries change; simfs does not).

var (
	_ env.AttrFS       = (*view)(nil)
	_ env.RandomAccess = (*file)(nil)
)

// fileSizeMax bounds a file's size and position in memory: a truncation
// past it fails with EFBIG, a seek past it with EINVAL (the kernel's
// limits are s_maxbytes, terabytes).
const fileSizeMax = 1 << 30

// SetClock sets the wall clock (ns since the Unix epoch) that stamps the
// modification times v's process causes: its host's clock. Without it,
// Options.Now stamps them.
func (f *FS) SetClock(v env.FS, now func() int64) { f.ownView(v).now = now }

// clock is the modification-time stamp of a change v makes now.
func (v *view) clock() int64 {
	switch {
	case v.now != nil:
		return v.now()
	case v.fs.opts.Now != nil:
		return v.fs.opts.Now()
	}
	return v.fs.birthLast
}

// linkTarget is a symlink's target (its data).
func (n *inode) linkTarget() string { return string(n.data) }

// Chtimes is os.Chtimes (utimensat(2), following symlinks). simfs keeps no
// access time. Explicit times need the owner or root (EPERM); both times
// zero (UTIME_OMIT twice) succeeds without looking at the file, as Linux.
func (v *view) Chtimes(name string, atime, mtime time.Time) error {
	v.fs.changes++
	if atime.IsZero() && mtime.IsZero() {
		return nil
	}
	if errno := v.chtimes(name, mtime); errno != 0 {
		return pathErr("chtimes", name, errno)
	}
	return nil
}

// existing injects kind's fault and resolves name, following symlinks, to
// the inode it names (ENOENT when none).
func (v *view) existing(kind OpKind, name string) (*inode, syscall.Errno) {
	if errno := v.inject(kind, name, ""); errno != 0 {
		return nil, errno
	}
	_, _, node, errno := v.resolve(name, true)
	if errno == 0 && node == nil {
		errno = syscall.ENOENT
	}
	return node, errno
}

func (v *view) chtimes(name string, mtime time.Time) syscall.Errno {
	node, errno := v.existing(OpChtimes, name)
	switch {
	case errno != 0:
		return errno
	case v.uid != 0 && node.uid != v.uid:
		return syscall.EPERM
	}
	v.fs.mtimesHashed = true
	if !mtime.IsZero() {
		node.mtime = mtime.UnixNano()
	}
	return 0
}

// Truncate is os.Truncate (truncate(2), following symlinks).
func (v *view) Truncate(name string, size int64) error {
	v.fs.changes++
	if errno := v.truncatePath(name, size); errno != 0 {
		return pathErr("truncate", name, errno)
	}
	return nil
}

func (v *view) truncatePath(name string, size int64) syscall.Errno {
	node, errno := v.existing(OpTruncate, name)
	switch {
	case errno != 0:
		return errno
	case node.isDir():
		return syscall.EISDIR
	case size < 0:
		return syscall.EINVAL
	case size > fileSizeMax:
		return syscall.EFBIG
	case !v.may(node, mayWrite):
		return syscall.EACCES
	}
	v.resize(node, size)
	return 0
}

// resize sets a regular file's size (zero-filled when it grows) and
// stamps its modification time, as do_truncate does even for the same size.
func (v *view) resize(n *inode, size int64) {
	f := v.fs
	f.mtimesHashed = true
	n.mtime = v.clock()
	if int64(len(n.data)) == size {
		return
	}
	fresh := make([]byte, size)
	copy(fresh, n.data)
	n.data, n.shared = fresh, false
	f.markDirty(n)
}

// Truncate is os.File.Truncate (ftruncate(2)): EINVAL unless the file is a
// regular file open for writing.
func (fl *file) Truncate(size int64) error {
	fl.v.fs.changes++
	if !fl.valid() {
		return pathErr("truncate", fl.name, syscall.EBADF)
	}
	if errno := fl.v.inject(OpTruncate, fl.name, ""); errno != 0 {
		return pathErr("truncate", fl.name, errno)
	}
	if size < 0 || !fl.flag.Writable() || !fl.node.mode.IsRegular() {
		return pathErr("truncate", fl.name, syscall.EINVAL)
	}
	if size > fileSizeMax {
		return pathErr("truncate", fl.name, syscall.EFBIG)
	}
	fl.v.resize(fl.node, size)
	return nil
}

// Seek is os.File.Seek (lseek(2)). A directory's position is not tracked:
// seeking one succeeds and changes nothing a later call sees.
func (fl *file) Seek(offset int64, whence int) (int64, error) {
	if !fl.valid() {
		return 0, pathErr("seek", fl.name, syscall.EBADF)
	}
	var base int64
	switch whence {
	case env.SeekStart:
	case env.SeekCurrent:
		base = int64(fl.pos)
	case env.SeekEnd:
		base = fl.node.size()
	default:
		return 0, pathErr("seek", fl.name, syscall.EINVAL)
	}
	pos := base + offset
	if pos < 0 || pos > fileSizeMax || (offset > 0 && pos < base) {
		return 0, pathErr("seek", fl.name, syscall.EINVAL)
	}
	fl.pos = int(pos)
	return pos, nil
}

// ReadAt is os.File.ReadAt (pread(2)): it leaves the position alone, and
// a short read comes with io.EOF.
func (fl *file) ReadAt(p []byte, off int64) (int, error) {
	if !fl.valid() {
		return 0, pathErr("pread", fl.name, syscall.EBADF)
	}
	if errno := fl.v.inject(OpRead, fl.name, ""); errno != 0 {
		return 0, pathErr("pread", fl.name, errno)
	}
	switch {
	case off < 0:
		return 0, pathErr("pread", fl.name, syscall.EINVAL)
	case fl.node.isDir():
		return 0, pathErr("pread", fl.name, syscall.EISDIR)
	case fl.flag.AccessMode() == env.O_WRONLY:
		return 0, pathErr("pread", fl.name, syscall.EBADF)
	}
	data := fl.node.data
	if off >= int64(len(data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// MtimesTracked reports whether a Chtimes or a Truncate has run on f: from
// then on Hash folds modification times. Before, they follow from the
// calls and the hosts' clocks, which a simulator's run hash folds already;
// leaving them out keeps the hashes of runs that never set a time.
func (f *FS) MtimesTracked() bool { return f.mtimesHashed }
