package statecas

import (
	"errors"
	"io/fs"
	"path"
	"strconv"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// Bounds of RemoveTree: a lease directory deeper or larger than this is not
// one the engines made, and removal stops with ErrBound (resumable: the
// quarantine stays and a later call completes it).
const (
	treeEntriesMax = 1 << 20
	treeDepthMax   = 128
)

// QuarantineName is the name, in the target's parent, under which RemoveTree
// holds a directory while it verifies and removes it. It is derived from the
// recorded identity, so a removal interrupted by a crash is found again.
func QuarantineName(identity lease.FileIdentity) string {
	return ".leasekit-removing-" + strconv.FormatUint(identity.Dev, 10) + "-" +
		strconv.FormatUint(identity.Ino, 10) + "-" + strconv.FormatInt(identity.BirthNs, 10)
}

// RemoveTree removes the directory tree at target only if it is the
// directory with the recorded identity. It never removes a path blindly:
//
//  1. rename target to QuarantineName(identity) in the same parent
//     (rename-no-replace), so whatever is checked next cannot be swapped
//     under its name any more;
//  2. Lstat the quarantine: if it is not a directory with exactly the
//     recorded dev+ino+birth (renamed away and replaced, inode reused, a
//     symlink), rename it back and refuse with ErrChanged;
//  3. remove the tree through directory handles (removeQuarantined), never
//     following a symlink, within treeEntriesMax entries and treeDepthMax
//     levels; fsync the parent.
//
// When target is absent, RemoveTree completes an interrupted quarantine of
// the same identity if one is present. removed says whether a tree was
// removed.
func RemoveTree(env Env, target string, identity lease.FileIdentity) (removed bool, err error) {
	checkTargetPath(target)
	parent := fspath.Dir(target)
	quarantine := fspath.Join(parent, QuarantineName(identity))
	info, err := env.FS.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return completeQuarantine(env, quarantine, identity)
	}
	if err != nil {
		return false, err
	}
	if info.IsSymlink() || !info.IsDir() {
		return false, newError(ErrUnsafe, target, "not a physical directory; nothing removed", nil)
	}
	if err := env.FS.RenameNoReplace(target, quarantine); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return completeQuarantine(env, quarantine, identity)
		}
		if errors.Is(err, fs.ErrExist) {
			return false, newError(ErrChanged, target, "an earlier quarantine of the recorded directory exists beside a new one; nothing removed", err)
		}
		return false, err
	}
	if err := statefile.SyncDir(env.FS, parent); err != nil {
		return false, err
	}
	if held, err := env.FS.Lstat(quarantine); err != nil || !isDirWithIdentity(held, identity) {
		return false, restoreForeign(env, quarantine, target, err)
	}
	return true, removeQuarantined(env, quarantine, identity)
}

func isDirWithIdentity(info lease.FileInfo, identity lease.FileIdentity) bool {
	observed, ok := info.Identity()
	return ok && info.IsDir() && !info.IsSymlink() && observed == identity
}

// restoreForeign renames a directory that turned out not to be the recorded
// one back to where it was, and refuses.
func restoreForeign(env Env, quarantine, target string, cause error) error {
	refusal := newError(ErrChanged, target,
		"the directory at this path is not the recorded one (renamed away, replaced, or inode reused); nothing removed", cause)
	if err := env.FS.RenameNoReplace(quarantine, target); err != nil {
		refusal.Msg += "; it is kept at " + quarantine
		refusal.Err = errors.Join(cause, err)
		return refusal
	}
	return errors.Join(refusal, statefile.SyncDir(env.FS, fspath.Dir(target)))
}

func completeQuarantine(env Env, quarantine string, identity lease.FileIdentity) (bool, error) {
	info, err := env.FS.Lstat(quarantine)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !isDirWithIdentity(info, identity) {
		return false, newError(ErrChanged, quarantine, "the removal quarantine holds a foreign entry; nothing removed", nil)
	}
	return true, removeQuarantined(env, quarantine, identity)
}

// removeQuarantined removes a verified quarantined tree through directory
// handles only: the root is opened O_DIRECTORY|O_NOFOLLOW and its fstat must
// still be the recorded identity; each entry is fstatat-ed without following;
// a subdirectory is opened with OpenAt(O_DIRECTORY|O_NOFOLLOW) and its fstat
// must be the inode fstatat saw, then emptied the same way and removed with
// RemoveAt(name, true); everything else is RemoveAt(name, false). A path
// swapped for a symlink or another directory at any point is therefore never
// followed: the walk stops with ErrChanged, or at worst unlinks the swapped
// name itself. Bounded by treeEntriesMax entries and treeDepthMax levels.
func removeQuarantined(env Env, root string, identity lease.FileIdentity) error {
	handle, err := env.FS.OpenFile(root, statefile.O_RDONLY|statefile.O_DIRECTORY|statefile.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	opened, err := handle.Stat()
	if err == nil && !isDirWithIdentity(opened, identity) {
		err = newError(ErrChanged, root, "the removal quarantine changed after it was verified; nothing more removed", nil)
	}
	if err == nil {
		budget := treeEntriesMax
		err = removeContents(handle, root, 0, &budget)
	}
	closeErr := handle.Close()
	if err != nil {
		return err
	}
	if closeErr != nil {
		return closeErr
	}
	parent, err := env.FS.OpenFile(fspath.Dir(root), statefile.O_RDONLY|statefile.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	err = parent.RemoveAt(path.Base(root), true)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err == nil {
		err = parent.Sync()
	}
	return errors.Join(err, parent.Close())
}

// removeContents empties the open directory dir (named name, for errors),
// depth levels below the root, spending budget entries.
func removeContents(dir lease.File, root string, depth int, budget *int) error {
	entries, err := dir.ReadDir()
	if err != nil {
		return err
	}
	*budget -= len(entries)
	if *budget < 0 {
		return newError(ErrBound, root, "directory tree exceeds "+strconv.Itoa(treeEntriesMax)+" entries; removal stopped", nil)
	}
	for _, entry := range entries {
		info, err := dir.StatAt(entry.Name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !info.IsDir() {
			if err := dir.RemoveAt(entry.Name, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if depth+1 > treeDepthMax {
			return newError(ErrBound, root, "directory tree exceeds "+strconv.Itoa(treeDepthMax)+" levels; removal stopped", nil)
		}
		if err := removeSubdirectory(dir, entry.Name, info, root, depth+1, budget); err != nil {
			return err
		}
	}
	return nil
}

// removeSubdirectory opens the subdirectory name of dir, checks that it is
// the inode StatAt saw (seen), empties it and removes it.
func removeSubdirectory(dir lease.File, name string, seen lease.FileInfo, root string, depth int, budget *int) error {
	child, err := dir.OpenAt(name, statefile.O_RDONLY|statefile.O_DIRECTORY|statefile.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return newError(ErrChanged, fspath.Join(dir.Name(), name),
			"a directory of the tree was swapped during its removal; removal stopped", err)
	}
	opened, err := child.Stat()
	if err == nil && !sameInode(opened, seen) {
		err = newError(ErrChanged, child.Name(), "a directory of the tree was swapped during its removal; removal stopped", nil)
	}
	if err == nil {
		err = removeContents(child, root, depth, budget)
	}
	if closeErr := child.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	if err := dir.RemoveAt(name, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return newError(ErrChanged, fspath.Join(dir.Name(), name),
			"a directory of the tree was swapped during its removal; removal stopped", err)
	}
	return nil
}
