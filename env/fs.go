package env

import (
	"io/fs"
	"time"
)

// OpenFlag is the flag set of FS.OpenFile. The values are leasekit's own, not
// the kernel's, so engines can name them without importing os or syscall;
// lease/osenv translates them, and simfs interprets them.
type OpenFlag uint32

const (
	// O_RDONLY opens for reading only (the zero value).
	O_RDONLY OpenFlag = 0
	// O_WRONLY opens for writing only.
	O_WRONLY OpenFlag = 1 << iota
	// O_RDWR opens for reading and writing.
	O_RDWR
	// O_CREATE creates the file if it does not exist.
	O_CREATE
	// O_EXCL, with O_CREATE, fails with EEXIST if the name exists (even as a
	// dangling symlink).
	O_EXCL
	// O_TRUNC truncates a regular file opened for writing.
	O_TRUNC
	// O_APPEND appends every write.
	O_APPEND
	// O_NOFOLLOW fails with ELOOP if the final component is a symlink.
	O_NOFOLLOW
	// O_DIRECTORY fails with ENOTDIR unless the name is a directory.
	O_DIRECTORY
)

// AccessMode returns the O_RDONLY/O_WRONLY/O_RDWR part of f.
func (f OpenFlag) AccessMode() OpenFlag { return f & (O_WRONLY | O_RDWR) }

// Writable reports whether f opens for writing.
func (f OpenFlag) Writable() bool { return f&(O_WRONLY|O_RDWR) != 0 }

// FileInfo is what Lstat, Stat and File.Stat return: the fields the engines
// use to identify an inode (dev, ino, birth time) and to check ownership and
// permissions (mode, uid), beyond what io/fs.FileInfo offers.
type FileInfo struct {
	// Name is the final path element, as os.FileInfo.Name.
	Name string
	// Mode holds the type bits (fs.ModeDir, fs.ModeSymlink, fs.ModeNamedPipe,
	// ...) and the permission bits, as os.FileInfo.Mode.
	Mode fs.FileMode
	// Dev and Ino are st_dev and st_ino.
	Dev uint64
	Ino uint64
	// UID is st_uid.
	UID uint32
	// Nlink is st_nlink.
	Nlink uint64
	// Size is st_size.
	Size int64
	// BirthNs is the birth (creation) time in nanoseconds since the Unix
	// epoch. It is meaningful only when HasBirth is true: a filesystem that
	// does not report birth time (statx without STATX_BTIME in its mask)
	// gives HasBirth false and BirthNs 0. An identity without a birth time is
	// unknown, never "born at zero".
	BirthNs  int64
	HasBirth bool
	// MtimeNs is st_mtime in nanoseconds since the Unix epoch: the last
	// change of a file's data (a write, a truncation, O_TRUNC) or a
	// Chtimes. The kernel takes it from the writing host's wall clock, so
	// a clock step moves it, and hosts sharing a volume stamp it each with
	// their own clock. ModTime returns it as a time.Time.
	MtimeNs int64
}

// ModTime is os.FileInfo.ModTime.
func (i FileInfo) ModTime() time.Time { return time.Unix(0, i.MtimeNs) }

// IsDir reports whether the entry is a directory.
func (i FileInfo) IsDir() bool { return i.Mode.IsDir() }

// IsRegular reports whether the entry is a regular file.
func (i FileInfo) IsRegular() bool { return i.Mode.IsRegular() }

// IsSymlink reports whether the entry is a symbolic link (only Lstat can say so).
func (i FileInfo) IsSymlink() bool { return i.Mode&fs.ModeSymlink != 0 }

// Perm returns the permission bits.
func (i FileInfo) Perm() fs.FileMode { return i.Mode.Perm() }

// Identity returns the physical identity of the inode: device, inode number
// and birth time. ok is false when the birth time is unknown, because dev+ino
// alone cannot tell an inode from a later one that reused its number.
func (i FileInfo) Identity() (id FileIdentity, ok bool) {
	if !i.HasBirth || i.BirthNs <= 0 {
		return FileIdentity{}, false
	}
	return FileIdentity{Dev: i.Dev, Ino: i.Ino, BirthNs: i.BirthNs}, true
}

// FileIdentity is the physical identity of an inode. It is stable across
// rename and distinct across inode-number reuse, because a reused number gets
// a new birth time.
type FileIdentity struct {
	Dev     uint64
	Ino     uint64
	BirthNs int64
}

// DirEntry is one name in a directory listing.
type DirEntry struct {
	Name string
	// Type holds only the type bits of the entry's mode (fs.ModeDir,
	// fs.ModeSymlink, ... or 0 for a regular file), as fs.DirEntry.Type.
	Type fs.FileMode
}

// FS is the filesystem the engines see. Each method behaves as the os (or
// golang.org/x/sys/unix) call it names, on Linux; paths are absolute and
// clean. Implementations: lease/osenv (the kernel) and simfs (in memory, with
// a crash model); errors follow the package's errno conventions.
type FS interface {
	// OpenFile is os.OpenFile with leasekit's flags. A directory may be
	// opened O_RDONLY so that File.Sync makes its entries durable.
	OpenFile(name string, flag OpenFlag, perm fs.FileMode) (File, error)
	// Mkdir is os.Mkdir (mkdir(2)). As with the kernel, perm is subject to
	// the umask; the engines ask for 0700, which no sane umask narrows, and
	// verify the mode they got with Lstat where it matters.
	Mkdir(name string, perm fs.FileMode) error
	// MkdirTemp is os.MkdirTemp: a new directory, mode 0700, named
	// dir/pattern with the last "*" (or the end) replaced by a random string.
	MkdirTemp(dir, pattern string) (string, error)
	// Rename is os.Rename (rename(2)): atomically replaces newpath.
	Rename(oldpath, newpath string) error
	// RenameNoReplace is renameat2(RENAME_NOREPLACE): as Rename, but fails
	// with EEXIST if newpath exists.
	RenameNoReplace(oldpath, newpath string) error
	// Link is os.Link (link(2)); it fails with EEXIST if newname exists.
	Link(oldname, newname string) error
	// Symlink is os.Symlink.
	Symlink(oldname, newname string) error
	// Remove is os.Remove: unlink(2) for a non-directory, rmdir(2) for an
	// empty directory. It never follows a symlink in the final component.
	Remove(name string) error
	// ReadDir is os.ReadDir: the entries sorted by name, without "." and "..".
	ReadDir(name string) ([]DirEntry, error)
	// Lstat is os.Lstat; it does not follow a final symlink.
	Lstat(name string) (FileInfo, error)
	// Stat is os.Stat; it follows symlinks.
	Stat(name string) (FileInfo, error)
	// Readlink is os.Readlink.
	Readlink(name string) (string, error)
	// Chmod is os.Chmod (follows symlinks, as chmod(2)).
	Chmod(name string, mode fs.FileMode) error
}

// File is an open file or directory, as *os.File.
type File interface {
	// Name is os.File.Name: the name given to OpenFile.
	Name() string
	// Read is os.File.Read.
	Read(p []byte) (int, error)
	// Write is os.File.Write.
	Write(p []byte) (int, error)
	// Sync is os.File.Sync (fsync(2)). On a directory it makes the
	// directory's entry changes durable.
	Sync() error
	// Stat is os.File.Stat (fstat(2)).
	Stat() (FileInfo, error)
	// Close is os.File.Close.
	Close() error

	// The directory-handle methods mirror the *at system calls: each acts
	// on the directory this File has open, whatever path now leads to it,
	// so a rename or a symlink swapped in for that path after the open
	// cannot redirect it (the kernel semantics; simfs binds the handle to
	// the directory inode the same way). name is one path component: "",
	// ".", ".." or a name holding "/" fails with EINVAL. On a File that is
	// not a directory they fail with ENOTDIR.

	// ReadDir is getdents(2) on the open directory: its entries sorted by
	// name, without "." and "..".
	ReadDir() ([]DirEntry, error)
	// OpenAt is openat(2) relative to the open directory, with leasekit's
	// flags. Creating in a directory that was removed fails with ENOENT.
	OpenAt(name string, flag OpenFlag, perm fs.FileMode) (File, error)
	// StatAt is fstatat(2) (statx) with AT_SYMLINK_NOFOLLOW.
	StatAt(name string) (FileInfo, error)
	// RemoveAt is unlinkat(2): with dir, AT_REMOVEDIR (rmdir of an empty
	// directory; ENOTDIR for anything else); without, unlink of a
	// non-directory (EISDIR on Linux for a directory). Neither follows a
	// symlink.
	RemoveAt(name string, dir bool) error
}

// ValidName reports whether name is one path component the *at methods
// accept: not "", ".", "..", and without "/" or NUL.
func ValidName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' || name[i] == 0 {
			return false
		}
	}
	return true
}

// IDSource makes the random identifiers the engines write: lease
// generations, revisions, guard and intent names, quarantine suffixes.
type IDSource interface {
	// NewID returns a fresh RFC 4122 version-4 UUID in its canonical
	// lower-case text form.
	NewID() string
}
