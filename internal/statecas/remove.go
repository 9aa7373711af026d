package statecas

import (
	"errors"
	"io/fs"
	"path"
	"strconv"

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
//  3. remove the tree, Lstat-ing every entry and never following a symlink,
//     within treeEntriesMax entries and treeDepthMax levels; fsync the
//     parent.
//
// When target is absent, RemoveTree completes an interrupted quarantine of
// the same identity if one is present. removed says whether a tree was
// removed.
func RemoveTree(env Env, target string, identity lease.FileIdentity) (removed bool, err error) {
	checkTargetPath(target)
	parent := path.Dir(target)
	quarantine := path.Join(parent, QuarantineName(identity))
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
	return true, removeQuarantined(env, quarantine)
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
	return errors.Join(refusal, statefile.SyncDir(env.FS, path.Dir(target)))
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
	return true, removeQuarantined(env, quarantine)
}

// removeQuarantined removes a verified quarantined tree: a pre-order walk
// that unlinks every non-directory (symlinks included, never followed) and
// collects directories, then removes the directories deepest first.
func removeQuarantined(env Env, root string) error {
	type frame struct {
		dir   string
		depth int
	}
	directories := []string{root}
	pending := []frame{{root, 0}}
	entriesSeen := 0
	for len(pending) > 0 {
		top := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		entries, err := env.FS.ReadDir(top.dir)
		if err != nil {
			return err
		}
		entriesSeen += len(entries)
		if entriesSeen > treeEntriesMax {
			return newError(ErrBound, root, "directory tree exceeds "+strconv.Itoa(treeEntriesMax)+" entries; removal stopped", nil)
		}
		for _, entry := range entries {
			name := path.Join(top.dir, entry.Name)
			info, err := env.FS.Lstat(name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			if info.IsDir() && !info.IsSymlink() {
				if top.depth+1 > treeDepthMax {
					return newError(ErrBound, root, "directory tree exceeds "+strconv.Itoa(treeDepthMax)+" levels; removal stopped", nil)
				}
				directories = append(directories, name)
				pending = append(pending, frame{name, top.depth + 1})
				continue
			}
			if err := removeIfPresent(env, name); err != nil {
				return err
			}
		}
	}
	for i := len(directories) - 1; i >= 0; i-- {
		if err := removeIfPresent(env, directories[i]); err != nil {
			return err
		}
	}
	return statefile.SyncDir(env.FS, path.Dir(root))
}
