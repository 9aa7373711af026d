package statefile

import "github.com/leasekit/leasekit/env"

// The filesystem surface the engines see is declared in the public package
// env (so users can implement and import it) and re-exported here under the
// same names as type aliases (statefile.FS = env.FS, ...): statefile.FS and
// env.FS are one type. Package lease re-exports the same declarations; see
// env for the rules that govern them.
type (
	// OpenFlag is the flag set of FS.OpenFile; see env.OpenFlag.
	OpenFlag = env.OpenFlag
	// FileInfo is what Lstat, Stat and File.Stat return; see env.FileInfo.
	FileInfo = env.FileInfo
	// FileIdentity is the physical identity of an inode; see env.FileIdentity.
	FileIdentity = env.FileIdentity
	// DirEntry is one name in a directory listing; see env.DirEntry.
	DirEntry = env.DirEntry
	// FS is the filesystem the engines see; see env.FS.
	FS = env.FS
	// File is an open file or directory; see env.File.
	File = env.File
	// IDSource makes the engines' random identifiers; see env.IDSource.
	IDSource = env.IDSource
)

// The OpenFile flags; see env.O_RDONLY and the others.
const (
	O_RDONLY    = env.O_RDONLY
	O_WRONLY    = env.O_WRONLY
	O_RDWR      = env.O_RDWR
	O_CREATE    = env.O_CREATE
	O_EXCL      = env.O_EXCL
	O_TRUNC     = env.O_TRUNC
	O_APPEND    = env.O_APPEND
	O_NOFOLLOW  = env.O_NOFOLLOW
	O_DIRECTORY = env.O_DIRECTORY
)

// ValidName reports whether name is one path component the *at methods
// accept; see env.ValidName.
func ValidName(name string) bool { return env.ValidName(name) }
