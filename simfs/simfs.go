// Package simfs is a crash-consistent in-memory filesystem with Linux/ext4
// semantics. It implements lease.FS so that the deterministic simulator can
// run the lease engines against it and explore every post-crash state a
// lease protocol can meet. Style anchor: Pebble's vfs.MemFS and errorfs;
// unlike MemFS, errors carry real errnos and inodes keep their identity.
//
// # Non-crash semantics
//
// Every non-crash path matches Linux on ext4, and a shared conformance suite
// (internal/fsconformance) runs the same script against simfs and the kernel:
// inodes carry dev, ino, birth time, mode, uid and nlink; freed inode numbers
// are reused eagerly (lowest free first) while birth times are strictly
// increasing, so identity (dev, ino, birth) never repeats; hard links,
// O_CREATE|O_EXCL, O_TRUNC, O_APPEND, O_NOFOLLOW, O_DIRECTORY, symlinks,
// unlink/rmdir (os.Remove), rename(2) with all its rules, and
// renameat2(RENAME_NOREPLACE). Discretionary access control follows Linux
// for the owner and "other" classes (simfs has no groups, so a non-owner is
// always "other"); uid 0 bypasses it, as CAP_DAC_OVERRIDE does. Errors are
// *fs.PathError or *os.LinkError around a syscall.Errno.
//
// A use of a File after Close, or after a Crash invalidated it, fails with
// EBADF (the os package would say os.ErrClosed for the former).
//
// # Crash model
//
// Every file has volatile and synced data; every directory has volatile and
// synced entries; an ordered log holds the pending metadata operations, each
// with one effect per directory it changes. fsync(file) makes its data
// durable; fsync(dir) makes that directory's entry effects durable; a new
// directory also needs its parent synced; a cross-directory rename has two
// effects, durable independently, so both names or neither can survive. An
// fsync also marks the ext4 journal commit point for the metadata-prefix
// profile. An injected EIO on a file fsync marks the data clean without
// writing it, as Linux does: the next fsync succeeds and a crash loses it.
//
// Crash reduces the state to one legal post-crash state of a CrashMode
// (process, synced-only, metadata-prefix, random-subset, torn-data), drawing
// every choice from a Chooser in a fixed order, so a recorded choice list
// replays bit-exactly. CRASHMODEL.md describes the model in full.
//
// # Determinism
//
// Nothing in simfs reads the clock, global randomness or map iteration order:
// birth times come from Options.Now, MkdirTemp names and crash choices from
// Choosers, and every map is visited in sorted key order.
package simfs

import (
	"io/fs"
	"syscall"

	"github.com/leasekit/leasekit/lease"
)

// Chooser is a deterministic source of choices. The simulator records every
// answer so that a run replays bit-exactly.
type Chooser interface {
	// Intn returns a value in [0, n). n is always >= 1.
	Intn(n int) int
}

// Options configures New.
type Options struct {
	// Dev is the st_dev of every inode.
	Dev uint64
	// Now returns the time in nanoseconds since the epoch; it sets birth
	// times. Births are forced strictly increasing (a birth at or before the
	// previous one becomes previous+1), so two inodes never share an
	// identity. Nil means a counter starting at 1.
	Now func() int64
	// Rand is the seeded source of MkdirTemp names, and of nothing else
	// outside Crash. Nil means a fixed sequence 1, 2, 3, ...
	Rand Chooser
	// Umask masks the permission bits of Mkdir, MkdirTemp and OpenFile with
	// O_CREATE, as the process umask does. Zero means the common default
	// 0o022; to disable masking use UmaskNone.
	Umask fs.FileMode
	// UmaskNone disables masking (a process umask of 0).
	UmaskNone bool
	// Injector, if not nil, is consulted before every operation.
	Injector Injector
}

// FS is the filesystem. It is not safe for concurrent use: the simulator runs
// exactly one simulated process at a time.
type FS struct {
	opts  Options
	umask fs.FileMode
	root  *inode

	// used[ino] is true while inode number ino is allocated. Index 0 is
	// never used; the root is 2, as on ext4.
	used       []bool
	freeLowest uint64 // no free number below this
	birthLast  int64
	tempSeq    int // fallback MkdirTemp sequence when Rand is nil

	// The pending log of metadata operations, in order. seqNext numbers them;
	// seqCommitted is the sequence number of the last operation that an
	// fsync committed in the ext4-ordered journaling profile.
	log          []logOp
	seqNext      uint64
	seqCommitted uint64
	gcAt         int // collect unreachable effects when the log grows past this
	logDone      int // operations in the log whose effects are all durable
	dirtyCount   int // files whose volatile data is not yet synced

	// mtimesHashed is set by the first Chtimes or Truncate: from then on
	// Hash folds every inode's modification times (times.go).
	mtimesHashed bool

	// locks are the advisory locks (lock.go).
	locks lockTable

	// orphans are inodes with no volatile name that are still open.
	orphans map[*inode]struct{}
	// epoch invalidates every File opened before the last Crash.
	epoch uint64
	// treeGen advances whenever a path walk through directories could
	// change its course: a directory linked or unlinked, a chmod, a Crash.
	// It invalidates the views' prefix caches.
	treeGen uint64
	// nameGen advances whenever any name is linked or unlinked, and at a
	// Crash (see NameGeneration).
	nameGen uint64
	// dataGen counts the calls that may have changed a file's data, and
	// crashes (DataGeneration); syncGen counts fsyncs (Shapes).
	dataGen, syncGen uint64

	// fileSlab is the unused rest of the array newFile carves file
	// descriptions from.
	fileSlab []file

	// changes counts the calls that may have changed what Hash hashes
	// (every call but the pure reads); StateHash reuses its last Hash
	// while it is unchanged.
	changes   uint64
	memo      uint64
	memoAt    uint64
	memoValid bool
	// shapes is Shapes's last list, valid while shapesAt is shapeKey().
	shapes      []uint64
	shapesAt    [3]uint64
	shapesValid bool
	// folds holds the names Shapes folded (shape.go).
	folds map[string]folded

	// Scratch space of Hash, reused so hashing allocates little.
	hashGen   uint64
	hashOrder []*inode
	hashNames []string
}

// inode is one file, directory or symlink. The fields are ordered so that
// an inode packs into 192 bytes, a malloc size class: every create
// allocates one.
type inode struct {
	ino        uint64
	birth      int64
	mode       fs.FileMode // type bits + permission bits (volatile)
	syncedMode fs.FileMode // durable mode
	uid        uint32
	links      int32 // volatile names (for a directory: 1 while linked)
	opens      int32
	hashIndex  uint32 // Hash's number for this inode (never 2^32 inodes)

	// Regular files.
	data   []byte
	synced []byte
	shared bool // data aliases synced: copy before modifying in place
	dirty  bool // data may differ from synced and a sync would write it

	freed bool // the volatile side released the number

	// Directories.
	changedAll    bool  // see changedNames
	subdirs       int32 // volatile subdirectories, for nlink
	entries       map[string]*inode
	syncedEntries map[string]*inode
	parent        *inode // volatile parent (root: itself)
	// changedNames are the names whose volatile entry changed since
	// syncedEntries last copied entries, so that an fsync updates only
	// them (see syncEntries); changedAll replaces the list once it grows
	// past changedNamesMax.
	changedNames []string

	// pendingSeqs are the sequence numbers of the log operations with an
	// effect on this inode that is not yet durable.
	pendingSeqs []uint64

	// mtime and syncedMtime are st_mtime (ns) in the volatile and the
	// durable state. A symlink's target is its data (never synced or
	// shared), which keeps the inode at 192 bytes.
	mtime, syncedMtime int64

	hashGen uint64 // Hash's visit mark
}

func (n *inode) isDir() bool     { return n.mode&fs.ModeDir != 0 }
func (n *inode) isSymlink() bool { return n.mode&fs.ModeSymlink != 0 }

// nlink is st_nlink as ext4 reports it: a directory has 2 plus one per
// subdirectory (its ".." entries); anything else one per name.
func (n *inode) nlink() uint64 {
	if n.isDir() {
		if n.links == 0 {
			return 0
		}
		return 2 + uint64(n.subdirs)
	}
	return uint64(n.links)
}

func (n *inode) size() int64 {
	switch {
	case n.isDir():
		return 4096
	case n.isSymlink():
		return int64(len(n.data))
	default:
		return int64(len(n.data))
	}
}

// New returns an empty FS whose root "/" is a directory of mode 0755 owned by
// uid 0, durable from the start.
func New(opts Options) *FS {
	f := &FS{opts: opts, orphans: map[*inode]struct{}{}, seqNext: 1, gcAt: 64}
	f.umask = opts.Umask & fs.ModePerm
	if f.umask == 0 && !opts.UmaskNone {
		f.umask = 0o022
	}
	f.used = make([]bool, inoFirst, 64)
	f.root = f.newInode(fs.ModeDir|0o755, 0)
	f.reserveInodes()
	f.root.links = 1
	f.root.parent = f.root
	f.root.syncedEntries = map[string]*inode{}
	f.root.syncedMode = f.root.mode
	return f
}

// inoRoot is the root directory's inode number and inoFirst the first
// number for anything else, as on ext4 (1..10 are reserved, 2 is the root).
const (
	inoRoot  = 2
	inoFirst = 11
)

// reserveInodes marks the numbers below inoFirst used.
func (f *FS) reserveInodes() {
	for i := 0; i < inoFirst; i++ {
		f.used[i] = true
	}
	f.freeLowest = inoFirst
}

// newInode allocates the lowest free inode number with a fresh birth time.
func (f *FS) newInode(mode fs.FileMode, uid uint32) *inode {
	ino := f.freeLowest
	if f.root == nil {
		ino = inoRoot
	}
	for ino < uint64(len(f.used)) && f.used[ino] {
		ino++
	}
	if ino == uint64(len(f.used)) {
		f.used = append(f.used, false)
	}
	f.used[ino] = true
	f.freeLowest = ino + 1
	birth := f.birthLast + 1
	if f.opts.Now != nil {
		if now := f.opts.Now(); now > f.birthLast {
			birth = now
		}
	}
	f.birthLast = birth
	n := &inode{ino: ino, mode: mode, uid: uid, birth: birth, mtime: birth, syncedMtime: birth}
	if mode.IsDir() {
		n.entries = map[string]*inode{}
	}
	return n
}

// release frees n's number once it has neither a volatile name nor an open
// handle. Its unsynced data dies with it, as the kernel drops the pages of a
// deleted inode. The object itself may live on in synced entries or in the
// log until a crash or an fsync settles it.
func (f *FS) release(n *inode) {
	if n.links > 0 || n.opens > 0 || n.freed {
		return
	}
	delete(f.orphans, n)
	n.freed = true
	if n.dirty {
		n.dirty = false
		f.dirtyCount--
	}
	if !f.used[n.ino] {
		panic("simfs: freeing an inode number that is not in use")
	}
	f.used[n.ino] = false
	if n.ino < f.freeLowest {
		f.freeLowest = n.ino
	}
}

// View returns the FS as seen by a process running as uid. Permission checks
// use uid; uid 0 bypasses them like Linux root.
func (f *FS) View(uid uint32) lease.FS {
	return &view{fs: f, uid: uid, epoch: f.epoch}
}

// HarnessView is View for a test harness's own looks and acts (a ground
// truth reading the bytes a call moved, a co-tenant's write): its
// operations never consult the Injector. An error injected there would
// blind the harness or fault a party that is not under test, and an
// injector that draws from the running process's fault stream would let
// the harness's reads shift that process's faults.
func (f *FS) HarnessView(uid uint32) lease.FS {
	return &view{fs: f, uid: uid, epoch: f.epoch, harness: true}
}

// CloseAll closes every file that v (a value returned by View) still has
// open, as the kernel does when a process dies.
func (f *FS) CloseAll(v lease.FS) {
	f.changes++
	vw, ok := v.(*view)
	if !ok || vw.fs != f {
		panic("simfs: CloseAll of a view from another FS")
	}
	vw.forgetStale()
	for len(vw.open) > 0 {
		vw.open[len(vw.open)-1].closeNow()
	}
	delete(f.locks.waits, vw) // a dead process waits no more
}

// NameGeneration changes whenever a name is created, removed or moved, or
// the FS crashes: a checker that looks for files by name, and that no file
// changes under in place, can skip looking while it stays the same.
func (f *FS) NameGeneration() uint64 { return f.nameGen }

// DataGeneration changes whenever a file's data may have changed (a write,
// a truncation) or the FS crashes: with NameGeneration, a checker that
// reads files by name can skip reading again while both stay the same.
func (f *FS) DataGeneration() uint64 { return f.dataGen }

// Pending returns the number of operations not yet durable: metadata
// operations in the log plus files whose data has not been synced.
func (f *FS) Pending() int { return len(f.log) - f.logDone + f.dirtyCount }

// pathErr wraps errno as os does for a one-path call.
func pathErr(op, path string, errno syscall.Errno) error {
	return &fs.PathError{Op: op, Path: path, Err: errno}
}

// MkdirAll is a setup helper: it creates every missing directory of path with
// exactly perm (no umask) owned by uid, and makes each durable at once (the
// new directory and its parent are synced). It panics on failure: setup runs
// before the simulation and must not fail.
func (f *FS) MkdirAll(path string, perm fs.FileMode, uid uint32) {
	f.changes++
	root := &view{fs: f, uid: 0}
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		prefix := path[:i]
		dir, base, node, errno := root.resolve(prefix, true)
		if errno != 0 {
			panic("simfs: MkdirAll " + path + ": " + errno.Error())
		}
		if node != nil {
			if !node.isDir() {
				panic("simfs: MkdirAll " + path + ": " + prefix + " is not a directory")
			}
			continue
		}
		n := root.create(OpMkdir, dir, base, fs.ModeDir)
		n.mode = fs.ModeDir | perm.Perm() | perm&fs.ModeSticky
		n.uid = uid
		f.treeGen++ // the walk-relevant mode changed after the link
		f.syncInode(n)
		f.syncInode(dir)
	}
}
