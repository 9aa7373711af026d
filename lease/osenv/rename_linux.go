package osenv

import "golang.org/x/sys/unix"

// renameNoReplace is renameat2(RENAME_NOREPLACE). Filesystems that lack it
// fail with EINVAL, which is surfaced, never emulated with a racy
// check-then-rename.
func renameNoReplace(oldpath, newpath string) error {
	return unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
}
