package statecas

import (
	"errors"
	"io/fs"
	"path"

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
	err = withClaim(env, target, func(_ string, verify func() error) error {
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
		return statefile.SyncDir(env.FS, path.Dir(target))
	})
	return removed, err
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
