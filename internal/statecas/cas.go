package statecas

import (
	"errors"
	"io/fs"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// CreateIfAbsent publishes data as target if no entry of that name exists,
// under target's mutation claim. It reports false, without writing, when the
// name exists. A crash leaves target absent or complete, never torn.
func CreateIfAbsent(env Env, target string, data []byte) (created bool, err error) {
	err = withClaim(env, target, func(claimID string, verify func() error) error {
		if _, statErr := env.FS.Lstat(target); !errors.Is(statErr, fs.ErrNotExist) {
			return statErr // nil: present, not created
		}
		if err := verify(); err != nil {
			return err
		}
		publishErr := statefile.CreateOnly(env.FS, env.IDs, target, dataTempTagPrefix+claimID, data)
		if errors.Is(publishErr, fs.ErrExist) {
			return nil
		}
		created = publishErr == nil
		return publishErr
	})
	return created, err
}

// WriteIfUnchanged replaces target with data only if target's current bytes
// hash to expectedSHA (statefile.SHA256Hex). It reports false, without
// writing, when target is absent or holds other bytes.
func WriteIfUnchanged(env Env, target string, data []byte, expectedSHA string) (written bool, err error) {
	err = withClaim(env, target, func(claimID string, verify func() error) error {
		judged, unchanged, err := holds(env, target, expectedSHA)
		if err != nil || !unchanged {
			return err
		}
		dir := fspath.Dir(target)
		temp, err := statefile.WriteTemp(env.FS, env.IDs, dir, dataTempTagPrefix+claimID, data)
		if err != nil {
			return err
		}
		// The name check comes last, after the claim check: the rename
		// replaces whatever the name holds, so it must still be the inode
		// whose bytes were compared.
		same, err := verifyThenNameHolds(env, verify, target, judged)
		if err != nil || !same {
			return errors.Join(err, removeIfPresent(env, temp))
		}
		if err := env.FS.Rename(temp, target); err != nil {
			return errors.Join(err, removeIfPresent(env, temp))
		}
		written = true
		return statefile.SyncDir(env.FS, dir)
	})
	return written, err
}

// RemoveIfUnchanged unlinks target only if its current bytes hash to
// expectedSHA, and makes the unlink durable. It reports false, without
// removing, when target is absent or holds other bytes.
func RemoveIfUnchanged(env Env, target string, expectedSHA string) (removed bool, err error) {
	return RemoveIfUnchangedAfter(env, target, expectedSHA, nil)
}

// RemoveIfUnchangedAfter is RemoveIfUnchanged that first runs act (when not
// nil) under the same mutation claim: it takes target's claim, compares
// target's bytes with expectedSHA, runs act, and only then unlinks target
// and releases the claim. act therefore runs while target provably still
// holds the judged bytes, and no WriteIfUnchanged, RemoveIfUnchanged or
// CreateIfAbsent of target (an owner's update or release, another
// recoverer) can interleave with it. When target is absent or holds other
// bytes, act does not run and removed is false. When act fails, target is
// kept and act's error is returned. A crash inside act leaves the claim
// orphaned; it is recovered once this process is provably dead.
func RemoveIfUnchangedAfter(env Env, target, expectedSHA string, act func() error) (removed bool, err error) {
	err = withClaim(env, target, func(claimID string, claimHeld func() error) error {
		// verify is the check right before the unlink; act runs inside it,
		// after the compare, between two checks that the claim is held.
		verify := claimHeld
		if act != nil {
			verify = func() error {
				if err := claimHeld(); err != nil {
					return err
				}
				if err := act(); err != nil {
					return err
				}
				return claimHeld()
			}
		}
		judged, unchanged, err := holds(env, target, expectedSHA)
		if err != nil || !unchanged {
			return err
		}
		if err := verify(); err != nil {
			return err
		}
		if removed, err = removeJudged(env, target, judged, claimID); err != nil || !removed {
			return err
		}
		return statefile.SyncDir(env.FS, fspath.Dir(target))
	})
	return removed, err
}

// MoveIfUnchanged renames target to destination (rename-no-replace: an
// existing destination is never replaced) only if target's current bytes
// hash to expectedSHA, under target's mutation claim, and makes the move
// durable in both directories. It reports false, moving nothing, when
// target is absent or holds other bytes. It is the operator's quarantine:
// the evidence is moved, never deleted, and only the bytes that were judged.
func MoveIfUnchanged(env Env, target, expectedSHA, destination string) (moved bool, err error) {
	checkTargetPath(destination)
	err = withClaim(env, target, func(_ string, verify func() error) error {
		judged, unchanged, err := holds(env, target, expectedSHA)
		if err != nil || !unchanged {
			return err
		}
		if same, err := verifyThenNameHolds(env, verify, target, judged); err != nil || !same {
			return err
		}
		if err := moveNoReplace(env, target, destination); err != nil {
			return err
		}
		if moved, err = movedHolds(env, destination, target, judged); err != nil || !moved {
			return err
		}
		return errors.Join(statefile.SyncDir(env.FS, fspath.Dir(destination)), statefile.SyncDir(env.FS, fspath.Dir(target)))
	})
	return moved, err
}

// moveNoReplace renames source to destination unless destination exists,
// with link+unlink where the kernel lacks rename-no-replace (a crash in
// between leaves both names, never neither).
func moveNoReplace(env Env, source, destination string) error {
	err := env.FS.RenameNoReplace(source, destination)
	if !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	if err := env.FS.Link(source, destination); err != nil {
		return err
	}
	return env.FS.Remove(source)
}

// holds reports whether target exists and its bytes hash to expectedSHA,
// and returns judged, the full identity (device, inode, birth time) of the
// handle those bytes were read through. A compare is only as good as the
// proof that the name still leads to that inode when the commit acts on
// it: see nameHolds.
func holds(env Env, target, expectedSHA string) (judged lease.FileInfo, unchanged bool, err error) {
	content, judged, err := readWithIdentity(env, target, FileBytesMax)
	if errors.Is(err, fs.ErrNotExist) {
		return lease.FileInfo{}, false, nil
	}
	if err != nil {
		return lease.FileInfo{}, false, classifyReadError(target, err)
	}
	return judged, statefile.HasSHA256Hex(content, expectedSHA), nil
}

// readWithIdentity is statefile.ReadOwnedFile that also returns the opened
// handle's fstat: Lstat decides (a regular file of env.UID within
// maxBytes), the file is opened without following a symlink, and the
// handle must be the inode Lstat saw, by full identity.
func readWithIdentity(env Env, target string, maxBytes int64) ([]byte, lease.FileInfo, error) {
	before, err := env.FS.Lstat(target)
	if err != nil {
		return nil, lease.FileInfo{}, err
	}
	if err := ownedRegular(before, target, maxBytes, env.UID); err != nil {
		return nil, lease.FileInfo{}, err
	}
	file, err := env.FS.OpenFile(target, statefile.O_RDONLY|statefile.O_NOFOLLOW, 0)
	if err != nil {
		return nil, lease.FileInfo{}, err
	}
	defer file.Close()
	opened, err := file.Stat()
	if err != nil {
		return nil, lease.FileInfo{}, err
	}
	if !sameInode(opened, before) {
		return nil, lease.FileInfo{}, &statefile.ChangedError{Path: target}
	}
	if err := ownedRegular(opened, target, maxBytes, env.UID); err != nil {
		return nil, lease.FileInfo{}, err
	}
	content, err := statefile.ReadOpened(file, target, maxBytes, opened.Size)
	return content, opened, err
}

func ownedRegular(info lease.FileInfo, name string, maxBytes int64, uid uint32) error {
	switch {
	case !info.IsRegular():
		return &statefile.NotRegularError{Path: name, Mode: info.Mode}
	case info.Size > maxBytes:
		return &statefile.TooLargeError{Path: name, Size: info.Size, MaxBytes: maxBytes}
	case info.UID != uid:
		return &statefile.ForeignOwnerError{Path: name, UID: info.UID, Want: uid}
	}
	return nil
}

// nameHolds reports, right before a commit acts on target by name,
// whether the name still leads to judged, the inode whose bytes the
// compare read. A handle keeps its inode when its name is unlinked,
// renamed over or moved away and back; comparing the handle with the Lstat
// taken before the open proves nothing about the name now (random seed
// 9181627: a controller whose claim was moved aside and restored compared
// through such a handle and unlinked another controller's record; both
// were admitted). false means the name leads elsewhere or nowhere: as for
// a compare that fails, nothing is changed.
func nameHolds(env Env, target string, judged lease.FileInfo) (bool, error) {
	now, err := env.FS.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return sameInode(now, judged), nil
}

// verifyThenNameHolds is the last check before a commit: the claim is still
// this call's (verify), then the name still leads to judged.
func verifyThenNameHolds(env Env, verify func() error, target string, judged lease.FileInfo) (bool, error) {
	if err := verify(); err != nil {
		return false, err
	}
	return nameHolds(env, target, judged)
}

// removeJudged unlinks target only if it is judged. The name is first
// renamed to a name of this call's claim (rename is atomic: whatever the
// name holds at that instant is what is checked), the entry moved is
// compared by full identity, and only then is it unlinked; anything else
// is renamed back and removed is false. A crash between the move and the
// unlink leaves the judged bytes under a data temp name of the claim,
// which the orphan recovery of that claim removes.
func removeJudged(env Env, target string, judged lease.FileInfo, claimID string) (removed bool, err error) {
	if same, err := nameHolds(env, target, judged); err != nil || !same {
		return false, err
	}
	aside := fspath.Join(fspath.Dir(target), statefile.TempPrefix+dataTempTagPrefix+claimID+"-removing")
	if err := env.FS.RenameNoReplace(target, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if same, err := movedHolds(env, aside, target, judged); err != nil || !same {
		return false, err
	}
	return true, env.FS.Remove(aside)
}

// movedHolds reports whether the entry a commit just renamed from target to
// moved is judged; if not, it renames it back (same false; with the error
// when the Lstat failed), and when the
// name was taken meanwhile it keeps the entry at moved and refuses with
// ErrChanged, saying where.
func movedHolds(env Env, moved, target string, judged lease.FileInfo) (same bool, err error) {
	info, err := env.FS.Lstat(moved)
	if err == nil && sameInode(info, judged) {
		return true, nil
	}
	// A failed Lstat proves nothing either way: the entry is put back and
	// the error returned (not a false "changed").
	if restoreErr := env.FS.RenameNoReplace(moved, target); restoreErr != nil {
		return false, newError(ErrChanged, target,
			"the file changed after it was compared and was moved by mistake; it is kept at "+moved, errors.Join(err, restoreErr))
	}
	return false, errors.Join(err, statefile.SyncDir(env.FS, fspath.Dir(target)))
}

// ReadIfPresent reads target, at most maxBytes, never following a symlink.
// present is false when target does not exist. A target of another uid than
// env.UID is ErrUnsafe.
func ReadIfPresent(env Env, target string, maxBytes int64) (content []byte, present bool, err error) {
	return readIfPresent(env, target, maxBytes, nil)
}

// ReadBuffer is one buffer that a caller reading files in turn, and
// keeping none of their contents past the next read, reads them all into
// (a Create's look through every other claim): one allocation, not one per
// file. The zero value is an empty buffer.
type ReadBuffer struct{ buf []byte }

// ReadIfPresent is ReadIfPresent into the buffer: content is valid until
// the buffer's next read.
func (b *ReadBuffer) ReadIfPresent(env Env, target string, maxBytes int64) (content []byte, present bool, err error) {
	content, present, err = readIfPresent(env, target, maxBytes, b.buf)
	if cap(content) > cap(b.buf) {
		b.buf = content // a larger file than any before: keep its array
	}
	return content, present, err
}

// readIfPresent is ReadIfPresent reading into buf as
// statefile.ReadOpenedInto does.
func readIfPresent(env Env, target string, maxBytes int64, buf []byte) (content []byte, present bool, err error) {
	content, err = statefile.ReadOwnedFileInto(env.FS, target, maxBytes, env.UID, buf)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, classifyReadError(target, err)
	}
	return content, true, nil
}
