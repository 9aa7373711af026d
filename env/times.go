package env

import "time"

// Modification times, truncation and positioned I/O, as optional
// interfaces: FS and File gained no methods, so every implementation
// written before them still compiles. Code asks for them with a type
// assertion (envos does it for the os-shaped calls):
//
//	attrs, ok := fsys.(env.AttrFS)
//	ra, ok := f.(env.RandomAccess)
//
// lease/osenv and simfs implement both, and so do the simulator's
// processes' FS and files (each call a scheduling point).

// AttrFS is the optional attribute-changing part of an FS. Errors are
// *fs.PathError around Linux's errno, Op "chtimes" or "truncate".
type AttrFS interface {
	// Chtimes is os.Chtimes (utimensat(2) following symlinks): a zero
	// time.Time leaves that time unchanged (UTIME_OMIT). Setting explicit
	// times needs the caller to own the file (EPERM otherwise; root may).
	// simfs keeps no access time: atime is accepted and not kept.
	Chtimes(name string, atime, mtime time.Time) error
	// Truncate is os.Truncate (truncate(2)): the file's size becomes size,
	// zero-filled when it grows, and its modification time the caller's
	// clock's now, even when the size does not change. EISDIR for a
	// directory, EINVAL for a negative size, EACCES without write
	// permission.
	Truncate(name string, size int64) error
}

// Seek's whence values, as io.SeekStart, io.SeekCurrent and io.SeekEnd.
const (
	SeekStart   = 0
	SeekCurrent = 1
	SeekEnd     = 2
)

// RandomAccess is the optional positioned-I/O part of a File. Errors are
// *fs.PathError around Linux's errno (Op "seek", "pread", "truncate").
type RandomAccess interface {
	// Seek is os.File.Seek (lseek(2)): EINVAL for a negative result or a
	// bad whence. Seeking past the end is allowed; a write there leaves a
	// zero-filled gap.
	Seek(offset int64, whence int) (int64, error)
	// ReadAt is os.File.ReadAt (pread(2), looped): it does not move the
	// file position; fewer than len(p) bytes come with io.EOF. EINVAL for a
	// negative offset.
	ReadAt(p []byte, off int64) (int, error)
	// Truncate is os.File.Truncate (ftruncate(2)): as AttrFS.Truncate,
	// but EINVAL when the file is not open for writing or not a regular
	// file.
	Truncate(size int64) error
}
