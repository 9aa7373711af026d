package statecas

import (
	"errors"
	"io/fs"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
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
		unchanged, err := holds(env, target, expectedSHA)
		if err != nil || !unchanged {
			return err
		}
		if err := verify(); err != nil {
			return err
		}
		if err := statefile.ReplaceAtomic(env.FS, env.IDs, target, dataTempTagPrefix+claimID, data); err != nil {
			return err
		}
		written = true
		return nil
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
	err = withClaim(env, target, func(_ string, claimHeld func() error) error {
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
		unchanged, err := holds(env, target, expectedSHA)
		if err != nil || !unchanged {
			return err
		}
		if err := verify(); err != nil {
			return err
		}
		if err := env.FS.Remove(target); err != nil {
			return err
		}
		removed = true
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
		unchanged, err := holds(env, target, expectedSHA)
		if err != nil || !unchanged {
			return err
		}
		if err := verify(); err != nil {
			return err
		}
		if err := moveNoReplace(env, target, destination); err != nil {
			return err
		}
		moved = true
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

// holds reports whether target exists and its bytes hash to expectedSHA.
func holds(env Env, target, expectedSHA string) (bool, error) {
	content, err := statefile.ReadOwnedFile(env.FS, target, FileBytesMax, env.UID)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, classifyReadError(target, err)
	}
	return statefile.SHA256Hex(content) == expectedSHA, nil
}

// ReadIfPresent reads target, at most maxBytes, never following a symlink.
// present is false when target does not exist. A target of another uid than
// env.UID is ErrUnsafe.
func ReadIfPresent(env Env, target string, maxBytes int64) (content []byte, present bool, err error) {
	content, err = statefile.ReadOwnedFile(env.FS, target, maxBytes, env.UID)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, classifyReadError(target, err)
	}
	return content, true, nil
}
