package osenv

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// eintrRetriesMax bounds every EINTR retry loop. A signal storm long enough
// to exhaust it is reported as EINTR rather than spinning forever.
const eintrRetriesMax = 1000

// retryEINTR runs call until it fails with something other than EINTR, at
// most eintrRetriesMax times.
func retryEINTR(call func() error) error {
	var err error
	for range eintrRetriesMax {
		err = call()
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
	return err
}

// pathError wraps a bare errno as the os package does, or returns nil.
func pathError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: errnoOf(err)}
}

// linkError wraps a bare errno as the os package does for two-path calls,
// or returns nil.
func linkError(op, oldpath, newpath string, err error) error {
	if err == nil {
		return nil
	}
	return &os.LinkError{Op: op, Old: oldpath, New: newpath, Err: errnoOf(err)}
}

// errnoOf returns the syscall.Errno inside err. x/sys always returns a bare
// Errno; anything else is an internal invariant broken.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		panic("osenv: system call returned a non-errno error: " + err.Error())
	}
	return errno
}
