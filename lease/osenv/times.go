package osenv

import (
	"io"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/env"
)

var (
	_ env.AttrFS       = FS{}
	_ env.RandomAccess = (*File)(nil)
)

// Chtimes is os.Chtimes: utimensat(2) following symlinks, a zero time
// left unchanged (UTIME_OMIT).
func (FS) Chtimes(name string, atime, mtime time.Time) error {
	ts := []unix.Timespec{timespec(atime), timespec(mtime)}
	err := retryEINTR(func() error { return unix.UtimesNanoAt(unix.AT_FDCWD, name, ts, 0) })
	return pathError("chtimes", name, err)
}

// timespec is t for utimensat, UTIME_OMIT for the zero time.
func timespec(t time.Time) unix.Timespec {
	if t.IsZero() {
		return unix.Timespec{Nsec: utimeOmit}
	}
	return unix.NsecToTimespec(t.UnixNano())
}

// Truncate is os.Truncate (truncate(2)).
func (FS) Truncate(name string, size int64) error {
	err := retryEINTR(func() error { return unix.Truncate(name, size) })
	return pathError("truncate", name, err)
}

// Seek is os.File.Seek (lseek(2)).
func (f *File) Seek(offset int64, whence int) (int64, error) {
	if f.fd < 0 {
		return 0, pathError("seek", f.name, syscall.EBADF)
	}
	pos, err := unix.Seek(f.fd, offset, whence)
	if err != nil {
		return 0, pathError("seek", f.name, err)
	}
	return pos, nil
}

// preadsMax bounds ReadAt's loop over short reads.
const preadsMax = 1 << 16

// ReadAt is os.File.ReadAt: pread(2) until p is full or the file ends;
// a short read comes with io.EOF.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.fd < 0 {
		return 0, pathError("pread", f.name, syscall.EBADF)
	}
	read := 0
	for range preadsMax {
		if read == len(p) {
			return read, nil
		}
		n := 0
		err := retryEINTR(func() error {
			var err error
			n, err = unix.Pread(f.fd, p[read:], off+int64(read))
			return err
		})
		if err != nil {
			return read, pathError("pread", f.name, err)
		}
		if n == 0 {
			return read, io.EOF
		}
		read += n
	}
	return read, pathError("pread", f.name, syscall.EIO)
}

// Truncate is os.File.Truncate (ftruncate(2)).
func (f *File) Truncate(size int64) error {
	if f.fd < 0 {
		return pathError("truncate", f.name, syscall.EBADF)
	}
	err := retryEINTR(func() error { return unix.Ftruncate(f.fd, size) })
	return pathError("truncate", f.name, err)
}
