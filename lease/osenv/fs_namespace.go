package osenv

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
)

// namespaceDepthMax bounds ResolveNamespace's walk up to an existing
// ancestor: PATH_MAX (4096) holds at most 2048 components.
const namespaceDepthMax = 2048

// ResolveNamespace returns the namespace directory a lease engine should be
// given for path: absolute and clean, with every symlink among its
// ancestors resolved, and its last component kept as named.
//
// The engines never follow a symlink at an entry of their own: the
// namespace itself, and everything inside it, must be real directories and
// files (a symlink there is refused as an unsafe namespace). They also fsync
// the namespace's parent, opening it without following a symlink. An
// ancestor the user named is another matter: /var/lock is a symlink to
// /run/lock on Debian, and `/var/lock/job.lease` must work. Resolving the
// ancestors here (the deepest existing one through filepath.EvalSymlinks;
// missing ones are created later by the engine, below it) gives the engine
// the same directory under a path without symlinks.
//
// ".." is resolved lexically (filepath.Clean) before anything else, as
// filepath.Abs does. A dangling symlink among the ancestors is an error.
func ResolveNamespace(path string) (string, error) {
	absolute, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	absolute = filepath.Clean(absolute)
	parent, base := filepath.Dir(absolute), filepath.Base(absolute)
	if parent == absolute {
		return absolute, nil // the root itself
	}
	existing, missing, err := deepestExisting(parent)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Errorf("resolving the ancestors of namespace %s: %w", absolute, err)
	}
	parts := append([]string{resolved}, missing...)
	return filepath.Join(append(parts, base)...), nil
}

// deepestExisting returns the deepest ancestor-or-self of dir that exists
// (Lstat), and the missing components below it, outermost first. ENOTDIR
// (a file among the ancestors) counts as missing: the walk goes on up to
// that file, and the caller's engine refuses it as a non-directory.
func deepestExisting(dir string) (string, []string, error) {
	var missing []string
	for range namespaceDepthMax {
		_, err := FS{}.Lstat(dir)
		if err == nil {
			return dir, missing, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", nil, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil, err // even the root is missing
		}
		missing = append([]string{filepath.Base(dir)}, missing...)
		dir = parent
	}
	return "", nil, fmt.Errorf("%s: more than %d missing components", dir, namespaceDepthMax)
}
