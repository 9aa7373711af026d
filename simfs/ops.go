package simfs

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lease"
)

// view is the FS as one uid sees it; it implements lease.FS.
type view struct {
	fs   *FS
	uid  uint32
	open []*file // files open through this view, valid at epoch
	// prefix holds where recent walks from the root stood before their
	// final component (see prefixCache); prefixNext is the slot to replace.
	prefix     [prefixSlots]prefixCache
	prefixNext int
	// epoch is the FS epoch open belongs to; a Crash since makes the list
	// stale (those files are invalid), and it is dropped on next use.
	epoch uint64
	// now is the wall clock of the host the process runs on (SetClock),
	// which stamps the modification times it causes; nil means Options.Now.
	now func() int64
	// harness marks a HarnessView: no fault is injected into its calls.
	harness bool
}

// forgetStale drops the open-file list if a Crash invalidated it.
func (v *view) forgetStale() {
	if v.epoch != v.fs.epoch {
		clear(v.open)
		v.open = v.open[:0]
		v.epoch = v.fs.epoch
	}
}

var _ env.FS = (*view)(nil) // the public interface (lease.FS is its alias)

// inject consults the injector before an operation. A non-errno error from
// an injector is a programming error.
func (v *view) inject(kind OpKind, p1, p2 string) syscall.Errno {
	in := v.fs.opts.Injector
	if in == nil || v.harness {
		return 0
	}
	err := in.Inject(Op{Kind: kind, Path: p1, Path2: p2, UID: v.uid})
	if err == nil {
		return 0
	}
	if errno, ok := err.(syscall.Errno); ok {
		return errno // the common case, without errors.As's allocation
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		panic("simfs: injector returned an error that is not a syscall.Errno: " + err.Error())
	}
	return errno
}

func linkErr(op, oldpath, newpath string, errno syscall.Errno) error {
	return &os.LinkError{Op: op, Old: oldpath, New: newpath, Err: errno}
}

// link adds name -> n to dir in the volatile tree.
func (f *FS) link(dir *inode, name string, n *inode) {
	dir.entries[name] = n
	dir.noteEntryChanged(name)
	f.nameGen++
	n.links++
	if n.isDir() {
		f.treeGen++
		n.parent = dir
		dir.subdirs++
	}
}

// unlink removes name (naming n) from dir in the volatile tree and frees n
// when nothing holds it any more.
func (f *FS) unlink(dir *inode, name string, n *inode) {
	delete(dir.entries, name)
	dir.noteEntryChanged(name)
	f.nameGen++
	n.links--
	if n.links < 0 {
		panic("simfs: negative link count")
	}
	if n.isDir() {
		f.treeGen++
		dir.subdirs--
		if n.links == 0 {
			n.parent = nil
		}
	}
	if n.links == 0 {
		if n.opens > 0 {
			f.orphans[n] = struct{}{}
		} else {
			f.release(n)
		}
	}
}

// create makes a new inode named base in dir, durable once dir is synced.
func (v *view) create(kind OpKind, dir *inode, base string, mode fs.FileMode) *inode {
	f := v.fs
	if mode&fs.ModeSymlink == 0 {
		mode &^= f.umask // symlinks are always 0777
	}
	n := f.newInode(mode, v.uid)
	n.syncedMode = n.mode
	n.mtime = v.clock()
	n.syncedMtime = n.mtime
	if n.isDir() {
		n.syncedEntries = map[string]*inode{}
	}
	f.link(dir, base, n)
	f.logAppend(kind, effect{dir: dir, name: base, node: n}, nil)
	return n
}

// sticky reports whether the sticky bit of dir forbids this uid to remove or
// rename n (Linux check_sticky): only n's owner, dir's owner or root may.
func (v *view) sticky(dir, n *inode) bool {
	return dir.mode&fs.ModeSticky != 0 && v.uid != 0 && n.uid != v.uid && dir.uid != v.uid
}

// Mkdir is os.Mkdir.
func (v *view) Mkdir(name string, perm fs.FileMode) error {
	v.fs.changes++
	if errno := v.mkdir(name, perm); errno != 0 {
		return pathErr("mkdir", name, errno)
	}
	return nil
}

func (v *view) mkdir(name string, perm fs.FileMode) syscall.Errno {
	if errno := v.inject(OpMkdir, name, ""); errno != 0 {
		return errno
	}
	dir, base, node, errno := v.resolve(name, false)
	if errno != 0 {
		return errno
	}
	if special(base) || node != nil {
		return syscall.EEXIST
	}
	if !v.may(dir, mayWrite|mayExec) {
		return syscall.EACCES
	}
	v.create(OpMkdir, dir, base, fs.ModeDir|perm.Perm()|perm&fs.ModeSticky)
	return 0
}

// tempAttemptsMax bounds MkdirTemp's retries on name collisions, as os does.
const tempAttemptsMax = 10000

// MkdirTemp is os.MkdirTemp; names come from Options.Rand.
func (v *view) MkdirTemp(dir, pattern string) (string, error) {
	v.fs.changes++
	if strings.IndexByte(pattern, '/') >= 0 {
		return "", pathErr("mkdirtemp", pattern, syscall.EINVAL)
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	if dir != "" && !strings.HasSuffix(dir, "/") {
		prefix = dir + "/" + prefix
	} else {
		prefix = dir + prefix
	}
	for attempt := 0; attempt < tempAttemptsMax; attempt++ {
		name := prefix + v.fs.tempName() + suffix
		errno := v.mkdir(name, 0o700)
		if errno == 0 {
			return name, nil
		}
		if errno != syscall.EEXIST {
			return "", pathErr("mkdirtemp", name, errno)
		}
	}
	return "", pathErr("mkdirtemp", prefix+"*"+suffix, syscall.EEXIST)
}

func (f *FS) tempName() string {
	if f.opts.Rand != nil {
		return strconv.Itoa(f.opts.Rand.Intn(1 << 31))
	}
	f.tempSeq++
	return strconv.Itoa(f.tempSeq)
}

// OpenFile is os.OpenFile.
func (v *view) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	v.fs.changes++
	fl, errno := v.openFile(name, flag, perm)
	if errno != 0 {
		return nil, pathErr("open", name, errno)
	}
	return fl, nil
}

func (v *view) openFile(name string, flag lease.OpenFlag, perm fs.FileMode) (*file, syscall.Errno) {
	return v.openFileFrom(v.fs.root, name, name, flag, perm)
}

// openFileFrom is openat(2): p is resolved from start (unless absolute);
// name is what the handle reports as its Name.
func (v *view) openFileFrom(start *inode, p, name string, flag lease.OpenFlag, perm fs.FileMode) (*file, syscall.Errno) {
	if errno := v.inject(OpOpen, name, ""); errno != 0 {
		return nil, errno
	}
	f := v.fs
	creat := flag&lease.O_CREATE != 0
	excl := creat && flag&lease.O_EXCL != 0
	follow := !excl && flag&lease.O_NOFOLLOW == 0
	dir, base, node, errno := v.resolveAt(start, p, follow)
	if errno != 0 {
		return nil, errno
	}
	if node == nil {
		if !creat {
			return nil, syscall.ENOENT
		}
		if dir.links == 0 {
			return nil, syscall.ENOENT // a removed directory takes no new entries
		}
		if !v.may(dir, mayWrite|mayExec) {
			return nil, syscall.EACCES
		}
		node = v.create(OpOpen, dir, base, perm.Perm())
	} else {
		if excl {
			return nil, syscall.EEXIST
		}
		if node.isSymlink() {
			// O_NOFOLLOW on a symlink. Linux checks O_DIRECTORY against
			// the link itself first, so that case is ENOTDIR.
			if flag&lease.O_DIRECTORY != 0 {
				return nil, syscall.ENOTDIR
			}
			return nil, syscall.ELOOP
		}
		if creat && node.isDir() {
			return nil, syscall.EISDIR
		}
		if flag&lease.O_DIRECTORY != 0 && !node.isDir() {
			return nil, syscall.ENOTDIR
		}
		if node.isDir() && flag.Writable() {
			return nil, syscall.EISDIR
		}
		want := fs.FileMode(0)
		if flag.AccessMode() != lease.O_WRONLY {
			want |= mayRead
		}
		if flag.Writable() || flag&lease.O_TRUNC != 0 {
			want |= mayWrite
		}
		if !v.may(node, want) {
			return nil, syscall.EACCES
		}
		if flag&lease.O_TRUNC != 0 && node.mode.IsRegular() {
			node.mtime = v.clock() // even when already empty, as do_truncate does
			if len(node.data) > 0 {
				node.data, node.shared = nil, false
				f.markDirty(node)
			}
		}
	}
	v.forgetStale()
	fl := f.newFile()
	*fl = file{v: v, node: node, name: name, flag: flag, epoch: f.epoch, index: len(v.open)}
	node.opens++
	v.open = append(v.open, fl)
	return fl, 0
}

// Rename is os.Rename (rename(2)).
func (v *view) Rename(oldpath, newpath string) error {
	v.fs.changes++
	if errno := v.rename(oldpath, newpath, false); errno != 0 {
		return linkErr("rename", oldpath, newpath, errno)
	}
	return nil
}

// RenameNoReplace is renameat2(RENAME_NOREPLACE).
func (v *view) RenameNoReplace(oldpath, newpath string) error {
	v.fs.changes++
	if errno := v.rename(oldpath, newpath, true); errno != 0 {
		return linkErr("rename", oldpath, newpath, errno)
	}
	return nil
}

// rename follows the checks of Linux's do_renameat2, vfs_rename and
// ext4_rename, in their order.
func (v *view) rename(oldpath, newpath string, noreplace bool) syscall.Errno {
	if errno := v.inject(OpRename, oldpath, newpath); errno != 0 {
		return errno
	}
	f := v.fs
	odir, obase, onode, errno := v.resolve(oldpath, false)
	if errno != 0 {
		return errno
	}
	ndir, nbase, nnode, errno := v.resolve(newpath, false)
	if errno != 0 {
		return errno
	}
	if special(obase) {
		return syscall.EBUSY
	}
	if special(nbase) {
		if noreplace {
			return syscall.EEXIST
		}
		return syscall.EBUSY
	}
	if onode == nil {
		return syscall.ENOENT
	}
	if noreplace && nnode != nil {
		return syscall.EEXIST
	}
	if onode.isDir() && isAncestor(onode, ndir) {
		return syscall.EINVAL // a move into its own subtree
	}
	if nnode != nil && nnode.isDir() && isAncestor(nnode, odir) {
		return syscall.ENOTEMPTY // the target is an ancestor of the source
	}
	if onode == nnode {
		return 0 // two names of one inode: rename(2) does nothing
	}
	if !v.may(odir, mayWrite|mayExec) || !v.may(ndir, mayWrite|mayExec) {
		return syscall.EACCES
	}
	if v.sticky(odir, onode) || (nnode != nil && v.sticky(ndir, nnode)) {
		return syscall.EPERM
	}
	if nnode != nil {
		if onode.isDir() && !nnode.isDir() {
			return syscall.ENOTDIR
		}
		if !onode.isDir() && nnode.isDir() {
			return syscall.EISDIR
		}
	}
	if onode.isDir() && odir != ndir && !v.may(onode, mayWrite) {
		return syscall.EACCES // ".." must be rewritten
	}
	if nnode != nil && nnode.isDir() && len(nnode.entries) > 0 {
		return syscall.ENOTEMPTY
	}
	// Link the new name before dropping the old, so onode is never free.
	if nnode != nil {
		f.unlink(ndir, nbase, nnode)
	}
	f.link(ndir, nbase, onode)
	f.unlink(odir, obase, onode)
	if odir == ndir {
		f.logAppend(OpRename, effect{dir: ndir, name: nbase, node: onode, del: obase}, nil)
	} else {
		f.logAppend(OpRename, effect{dir: odir, name: obase}, &effect{dir: ndir, name: nbase, node: onode})
	}
	return 0
}

// Link is os.Link (link(2)): it does not follow a final symlink.
func (v *view) Link(oldname, newname string) error {
	v.fs.changes++
	if errno := v.hardLink(oldname, newname); errno != 0 {
		return linkErr("link", oldname, newname, errno)
	}
	return nil
}

func (v *view) hardLink(oldname, newname string) syscall.Errno {
	if errno := v.inject(OpLink, oldname, newname); errno != 0 {
		return errno
	}
	_, _, onode, errno := v.resolve(oldname, false)
	if errno != 0 {
		return errno
	}
	if onode == nil {
		return syscall.ENOENT
	}
	ndir, nbase, nnode, errno := v.resolve(newname, false)
	if errno != 0 {
		return errno
	}
	if special(nbase) || nnode != nil {
		return syscall.EEXIST
	}
	if !v.may(ndir, mayWrite|mayExec) {
		return syscall.EACCES
	}
	if onode.isDir() {
		return syscall.EPERM
	}
	// fs.protected_hardlinks: a non-owner may link only a file it can
	// read and write.
	if v.uid != 0 && onode.uid != v.uid && !v.may(onode, mayRead|mayWrite) {
		return syscall.EPERM
	}
	v.fs.link(ndir, nbase, onode)
	v.fs.logAppend(OpLink, effect{dir: ndir, name: nbase, node: onode}, nil)
	return 0
}

// Symlink is os.Symlink.
func (v *view) Symlink(oldname, newname string) error {
	v.fs.changes++
	if errno := v.symlink(oldname, newname); errno != 0 {
		return linkErr("symlink", oldname, newname, errno)
	}
	return nil
}

func (v *view) symlink(target, newname string) syscall.Errno {
	if errno := v.inject(OpSymlink, newname, target); errno != 0 {
		return errno
	}
	dir, base, node, errno := v.resolve(newname, false)
	if errno != 0 {
		return errno
	}
	if special(base) || node != nil {
		return syscall.EEXIST
	}
	if target == "" {
		return syscall.ENOENT
	}
	if !v.may(dir, mayWrite|mayExec) {
		return syscall.EACCES
	}
	n := v.create(OpSymlink, dir, base, fs.ModeSymlink|0o777)
	n.data = []byte(target)
	return 0
}

// Remove is os.Remove: unlink(2), or rmdir(2) for a directory.
func (v *view) Remove(name string) error {
	v.fs.changes++
	if errno := v.remove(name); errno != 0 {
		return pathErr("remove", name, errno)
	}
	return nil
}

func (v *view) remove(name string) syscall.Errno {
	if errno := v.inject(OpRemove, name, ""); errno != 0 {
		return errno
	}
	dir, base, node, errno := v.resolve(name, false)
	if errno != 0 {
		return errno
	}
	return v.removeEntry(dir, base, node)
}

// removeEntry unlinks base (node, possibly nil) from dir: unlink(2) or
// rmdir(2), whichever node needs.
func (v *view) removeEntry(dir *inode, base string, node *inode) syscall.Errno {
	switch base {
	case "":
		return syscall.EBUSY
	case ".":
		return syscall.EINVAL
	case "..":
		return syscall.ENOTEMPTY
	}
	if node == nil {
		return syscall.ENOENT
	}
	if !v.may(dir, mayWrite|mayExec) {
		return syscall.EACCES
	}
	if v.sticky(dir, node) {
		return syscall.EPERM
	}
	if node.isDir() && len(node.entries) > 0 {
		return syscall.ENOTEMPTY
	}
	v.fs.unlink(dir, base, node)
	kind := OpRemove
	v.fs.logAppend(kind, effect{dir: dir, name: base}, nil)
	return 0
}

// ReadDir is os.ReadDir: entries sorted by name.
func (v *view) ReadDir(name string) ([]lease.DirEntry, error) {
	if errno := v.inject(OpReadDir, name, ""); errno != 0 {
		return nil, pathErr("open", name, errno)
	}
	_, _, node, errno := v.resolve(name, true)
	if errno == 0 && node == nil {
		errno = syscall.ENOENT
	}
	if errno == 0 && !node.isDir() {
		errno = syscall.ENOTDIR
	}
	if errno == 0 && !v.may(node, mayRead) {
		errno = syscall.EACCES
	}
	if errno != 0 {
		return nil, pathErr("open", name, errno)
	}
	return sortedEntries(node), nil
}

// sortedEntries lists a directory inode's entries sorted by name.
func sortedEntries(node *inode) []lease.DirEntry {
	out := make([]lease.DirEntry, 0, len(node.entries))
	for childName, child := range node.entries {
		out = append(out, lease.DirEntry{Name: childName, Type: child.mode.Type()})
	}
	slices.SortFunc(out, func(a, b lease.DirEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lstat is os.Lstat.
func (v *view) Lstat(name string) (lease.FileInfo, error) { return v.stat("lstat", name, false) }

// Stat is os.Stat.
func (v *view) Stat(name string) (lease.FileInfo, error) { return v.stat("stat", name, true) }

func (v *view) stat(op, name string, follow bool) (lease.FileInfo, error) {
	if errno := v.inject(OpStat, name, ""); errno != 0 {
		return lease.FileInfo{}, pathErr(op, name, errno)
	}
	_, base, node, errno := v.resolve(name, follow)
	if errno == 0 && node == nil {
		errno = syscall.ENOENT
	}
	if errno != 0 {
		return lease.FileInfo{}, pathErr(op, name, errno)
	}
	if base == "" {
		base = "/"
	}
	return v.fs.info(node, base), nil
}

func (f *FS) info(n *inode, name string) lease.FileInfo {
	return lease.FileInfo{
		Name: name, Mode: n.mode, Dev: f.opts.Dev, Ino: n.ino, UID: n.uid,
		Nlink: n.nlink(), Size: n.size(), BirthNs: n.birth, HasBirth: true, MtimeNs: n.mtime,
	}
}

// Readlink is os.Readlink.
func (v *view) Readlink(name string) (string, error) {
	if errno := v.inject(OpReadlink, name, ""); errno != 0 {
		return "", pathErr("readlink", name, errno)
	}
	_, _, node, errno := v.resolve(name, false)
	if errno == 0 && node == nil {
		errno = syscall.ENOENT
	}
	if errno == 0 && !node.isSymlink() {
		errno = syscall.EINVAL
	}
	if errno != 0 {
		return "", pathErr("readlink", name, errno)
	}
	return node.linkTarget(), nil
}

// Chmod is os.Chmod: only the owner (or root) may change the mode.
func (v *view) Chmod(name string, mode fs.FileMode) error {
	v.fs.changes++
	if errno := v.chmod(name, mode); errno != 0 {
		return pathErr("chmod", name, errno)
	}
	return nil
}

func (v *view) chmod(name string, mode fs.FileMode) syscall.Errno {
	if errno := v.inject(OpChmod, name, ""); errno != 0 {
		return errno
	}
	_, _, node, errno := v.resolve(name, true)
	if errno != 0 {
		return errno
	}
	if node == nil {
		return syscall.ENOENT
	}
	if v.uid != 0 && node.uid != v.uid {
		return syscall.EPERM
	}
	node.mode = node.mode.Type() | mode.Perm() | mode&fs.ModeSticky
	v.fs.treeGen++ // search permission may have changed
	v.fs.logAppend(OpChmod, effect{attr: node, mode: node.mode}, nil)
	return 0
}
