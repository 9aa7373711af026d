package lease

import "github.com/leasekit/leasekit/env"

// This file re-exports everything the engines may touch outside their own
// memory. The declarations, and the rules that govern them (the errno
// conventions, determinism), are in the public package env, so users can
// implement and import them; the names here are type aliases (lease.FS =
// env.FS, ...), identical types. Engine code (lease, admission, dirlease,
// internal/...) reaches the filesystem, time, process table and randomness
// only through these interfaces, so the same code runs on the real OS
// (lease/osenv) and inside the deterministic simulator (simfs, simproc,
// sim). A test forbids engines from importing os, syscall or x/sys, calling
// time.Now or time.Sleep, using global math/rand, or starting goroutines.
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
	// Clock is the engines' only source of time; see env.Clock.
	Clock = env.Clock
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

// ValidName reports whether name is one path component that File's *at
// methods accept: not "", "." or "..", and without "/" or NUL. An FS
// implementation refuses any other name with EINVAL.
func ValidName(name string) bool { return env.ValidName(name) }
