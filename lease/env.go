package lease

import (
	"context"
	"time"

	"github.com/leasekit/leasekit/internal/statefile"
)

// This file declares everything the engines may touch outside their own
// memory. Engine code (lease, admission, dirlease, internal/...) reaches the
// filesystem, time, process table and randomness only through these
// interfaces, so the same code runs on the real OS (lease/osenv) and inside the
// deterministic simulator (simfs, simproc, sim). A test forbids engines from
// importing os, syscall or x/sys, calling time.Now or time.Sleep, using global
// math/rand, or starting goroutines.
//
// Errors returned by an FS or File are *fs.PathError (one path) or
// *os.LinkError (two paths: Rename, RenameNoReplace, Link, Symlink) wrapping a
// syscall.Errno, exactly as the os package returns them. Engines cannot import
// syscall, so they test errors with the io/fs sentinels: fs.ErrNotExist
// (ENOENT), fs.ErrExist (EEXIST and ENOTEMPTY), fs.ErrPermission (EACCES and
// EPERM). Every other errno is an unexpected failure and is surfaced, never
// interpreted.

// The filesystem surface is declared in internal/statefile (which package
// lease imports, so it cannot import lease) and re-exported here under the
// same names; the aliases are identical types.
type (
	// OpenFlag is the flag set of FS.OpenFile; see statefile.OpenFlag.
	OpenFlag = statefile.OpenFlag
	// FileInfo is what Lstat, Stat and File.Stat return; see statefile.FileInfo.
	FileInfo = statefile.FileInfo
	// FileIdentity is the physical identity of an inode; see statefile.FileIdentity.
	FileIdentity = statefile.FileIdentity
	// DirEntry is one name in a directory listing; see statefile.DirEntry.
	DirEntry = statefile.DirEntry
	// FS is the filesystem the engines see; see statefile.FS.
	FS = statefile.FS
	// File is an open file or directory; see statefile.File.
	File = statefile.File
	// IDSource makes the engines' random identifiers; see statefile.IDSource.
	IDSource = statefile.IDSource
)

// The OpenFile flags; see statefile.O_RDONLY and the others.
const (
	O_RDONLY    = statefile.O_RDONLY
	O_WRONLY    = statefile.O_WRONLY
	O_RDWR      = statefile.O_RDWR
	O_CREATE    = statefile.O_CREATE
	O_EXCL      = statefile.O_EXCL
	O_TRUNC     = statefile.O_TRUNC
	O_APPEND    = statefile.O_APPEND
	O_NOFOLLOW  = statefile.O_NOFOLLOW
	O_DIRECTORY = statefile.O_DIRECTORY
)

// ValidName reports whether name is one path component that File's *at
// methods accept: not "", "." or "..", and without "/" or NUL. An FS
// implementation refuses any other name with EINVAL.
func ValidName(name string) bool { return statefile.ValidName(name) }

// Clock is the engines' only source of time.
type Clock interface {
	// Now is the wall clock. It may step backwards or forwards (NTP, an
	// operator); use it only for timestamps written into records.
	Now() time.Time
	// Monotonic is the time since an arbitrary origin. It never decreases
	// while the host is up and restarts at reboot. Deadlines use it.
	Monotonic() time.Duration
	// Sleep waits for d or until ctx is done, whichever is first, and
	// returns ctx.Err() in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}
