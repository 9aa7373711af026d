package osenv

import (
	"errors"
	"io"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/lease"
)

// File is lease.File on a raw file descriptor. It is not safe for
// concurrent use; the engines use each File from one goroutine.
type File struct {
	// fd is -1 once closed.
	fd   int
	name string
}

var _ lease.File = (*File)(nil)

// Name is the name given to OpenFile.
func (f *File) Name() string { return f.name }

// Read is read(2). As os.File.Read, it returns io.EOF at end of file.
func (f *File) Read(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, pathError("read", f.name, syscall.EBADF)
	}
	n := 0
	err := retryEINTR(func() error {
		var err error
		n, err = unix.Read(f.fd, p)
		return err
	})
	if err != nil {
		return 0, pathError("read", f.name, err)
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Write is write(2), looped over short writes as os.File.Write. A write that
// makes no progress without an error (never seen from a blocking fd) is
// reported as EIO rather than looping forever.
func (f *File) Write(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, pathError("write", f.name, syscall.EBADF)
	}
	written := 0
	for written < len(p) {
		n := 0
		err := retryEINTR(func() error {
			var err error
			n, err = unix.Write(f.fd, p[written:])
			return err
		})
		if err != nil {
			return written, pathError("write", f.name, err)
		}
		if n <= 0 {
			return written, pathError("write", f.name, syscall.EIO)
		}
		written += n
	}
	return written, nil
}

// Sync is fsync(2). It works on a directory opened O_RDONLY, making its
// entry changes durable.
func (f *File) Sync() error {
	if f.fd < 0 {
		return pathError("sync", f.name, syscall.EBADF)
	}
	err := retryEINTR(func() error { return unix.Fsync(f.fd) })
	return pathError("sync", f.name, err)
}

// Stat is fstat(2) with birth time.
func (f *File) Stat() (lease.FileInfo, error) {
	if f.fd < 0 {
		return lease.FileInfo{}, pathError("stat", f.name, syscall.EBADF)
	}
	info, err := statFD(f.fd, filepath.Base(f.name))
	return info, pathError("stat", f.name, err)
}

// Close is close(2). It is not retried on EINTR: on Linux and darwin the fd
// is released even then, and a retry could close a reused descriptor. A
// second Close fails with EBADF.
func (f *File) Close() error {
	if f.fd < 0 {
		return pathError("close", f.name, syscall.EBADF)
	}
	fd := f.fd
	f.fd = -1
	err := unix.Close(fd)
	if errors.Is(err, syscall.EINTR) {
		return nil
	}
	return pathError("close", f.name, err)
}
