package osenv

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// renameat2 is the kernel call; tests replace it to play a filesystem that
// lacks RENAME_NOREPLACE.
var renameat2 = unix.Renameat2

// ancestorsMax bounds the walk up from newpath's directory in
// renameIntoItself: PATH_MAX (4096) holds at most 2048 components.
const ancestorsMax = 2048

// renameNoReplace is renameat2(RENAME_NOREPLACE). A filesystem that lacks
// the flag answers EINVAL (FUSE, older NFS, overlayfs over some lowers), as
// does a kernel without renameat2 with ENOSYS. EINVAL is also the answer
// for moving a directory into its own subtree, which stays an error; any
// other EINVAL is reported as EOPNOTSUPP, so that callers' fallbacks for an
// unsupported no-replace rename (errors.ErrUnsupported: a link+unlink
// publish, a plain rename to a fresh unique name under the guard) apply.
// The fallback itself is never emulated here with a racy check-then-rename.
func renameNoReplace(oldpath, newpath string) error {
	err := renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) && !renameIntoItself(oldpath, newpath) {
		return unix.EOPNOTSUPP
	}
	return err
}

// renameIntoItself reports whether oldpath is a directory that newpath's
// directory is, or lies under: the other reason rename(2) gives EINVAL.
// It walks up from newpath's directory through "..", comparing device and
// inode, so symlinks on either path are judged as the kernel resolves them.
// When the walk cannot be made it answers true: an EINVAL it cannot explain
// stays an error rather than starting a fallback.
func renameIntoItself(oldpath, newpath string) bool {
	var old unix.Stat_t
	if err := unix.Lstat(oldpath, &old); err != nil {
		return true
	}
	if old.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	fd, err := unix.Open(filepath.Dir(newpath), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	for range ancestorsMax {
		var here unix.Stat_t
		if err := unix.Fstat(fd, &here); err != nil {
			break
		}
		if here.Dev == old.Dev && here.Ino == old.Ino {
			break
		}
		parent, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		var up unix.Stat_t
		if err := unix.Fstat(parent, &up); err != nil {
			_ = unix.Close(parent)
			break
		}
		_ = unix.Close(fd)
		fd = parent
		if up.Dev == here.Dev && up.Ino == here.Ino {
			_ = unix.Close(fd)
			return false // reached the root without meeting oldpath
		}
	}
	_ = unix.Close(fd)
	return true
}
