package osenv

import "golang.org/x/sys/unix"

// renameNoReplace is renamex_np(RENAME_EXCL), darwin's atomic rename that
// fails with EEXIST when the target exists.
func renameNoReplace(oldpath, newpath string) error {
	return unix.RenamexNp(oldpath, newpath, unix.RENAME_EXCL)
}
