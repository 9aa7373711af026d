//go:build linux

package osenv

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/lease"
)

// withoutNoReplace makes renameat2 behave as on a filesystem that lacks
// RENAME_NOREPLACE (FUSE): EINVAL for the flag, before any lookup. Plain
// rename(2) (FS.Rename) still reaches the kernel.
func withoutNoReplace(t *testing.T) {
	t.Helper()
	real := renameat2
	renameat2 = func(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
		if flags&unix.RENAME_NOREPLACE != 0 {
			return unix.EINVAL
		}
		return real(olddirfd, oldpath, newdirfd, newpath, flags)
	}
	t.Cleanup(func() { renameat2 = real })
}

// TestRenameNoReplaceEINVALIsUnsupported: a filesystem answering EINVAL for
// RENAME_NOREPLACE reports errors.ErrUnsupported, which the engines' fallbacks
// understand, as an *os.LinkError; nothing is renamed.
func TestRenameNoReplaceEINVALIsUnsupported(t *testing.T) {
	withoutNoReplace(t)
	fsys := NewFS()
	dir := t.TempDir()
	source, target := filepath.Join(dir, "source"), filepath.Join(dir, "target")
	writeFile(t, fsys, source, "x")
	err := fsys.RenameNoReplace(source, target)
	requireLinkError(t, err, "renamenoreplace", source, target, syscall.EOPNOTSUPP)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.Equal(t, "x", readFile(t, fsys, source), "nothing moved")
}

// TestRenameNoReplaceIntoItselfStaysEINVAL: moving a directory into its own
// subtree is EINVAL too, and must stay an error (a fallback would only fail
// later, or worse); with the real call and with the flag-less filesystem.
func TestRenameNoReplaceIntoItselfStaysEINVAL(t *testing.T) {
	dir := t.TempDir()
	parent := filepath.Join(dir, "parent")
	require.NoError(t, NewFS().Mkdir(parent, 0o700))
	require.NoError(t, NewFS().Mkdir(filepath.Join(parent, "child"), 0o700))
	require.NoError(t, NewFS().Symlink(filepath.Join(parent, "child"), filepath.Join(dir, "link")))
	cases := map[string]string{
		"directly below":    filepath.Join(parent, "moved"),
		"deeper":            filepath.Join(parent, "child", "moved"),
		"through a symlink": filepath.Join(dir, "link", "moved"),
	}
	for _, fake := range []bool{false, true} {
		if fake {
			withoutNoReplace(t)
		}
		for name, target := range cases {
			err := NewFS().RenameNoReplace(parent, target)
			require.ErrorIs(t, err, syscall.EINVAL, "%s (fake %v): %v", name, fake, err)
			require.NotErrorIs(t, err, errors.ErrUnsupported, name)
		}
	}
	require.True(t, renameIntoItself(parent, filepath.Join(parent, "x")))
	require.False(t, renameIntoItself(parent, filepath.Join(dir, "sibling")))
	require.False(t, renameIntoItself(filepath.Join(dir, "link"), filepath.Join(parent, "x")), "a symlink is not a directory")
}

// TestLeaseOverFilesystemWithoutNoReplace: the whole lease lifecycle works on
// a filesystem without RENAME_NOREPLACE, through the engines' fallbacks
// (issue 19, item 3: every call used to fail).
func TestLeaseOverFilesystemWithoutNoReplace(t *testing.T) {
	withoutNoReplace(t)
	manager, err := lease.NewManager(lease.Config{Namespace: filepath.Join(t.TempDir(), "ns"), RootID: "root",
		FS: NewFS(), Clock: NewClock(), Inspector: NewInspector(), IDs: NewIDSource()})
	require.NoError(t, err)
	ctx := context.Background()
	request := lease.AcquireRequest{SessionID: "s", SessionFile: "/nonexistent/session"}
	for round := 1; round <= 2; round++ {
		acquired, err := manager.Acquire(ctx, request)
		require.NoError(t, err)
		require.Equal(t, lease.Acquired, acquired.Kind, "round %d: %+v", round, acquired.Refusal)
		require.Equal(t, uint64(round), acquired.Owner.Epoch)
		released, err := manager.Release(ctx, acquired.Owner.Generation)
		require.NoError(t, err)
		require.Equal(t, lease.Released, released.Kind)
	}
}
