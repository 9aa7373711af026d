//go:build linux

package osenv

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
	"golang.org/x/sys/unix"
)

// TestBirthTime checks that birth times are real: present, distinct for
// files created one after the other, and kept across rename.
func TestBirthTime(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	second := filepath.Join(dir, "second")
	writeFile(t, fsys, first, "1")
	// ext4 stamps inodes from the coarse clock (one jiffy, up to 10 ms), so
	// two files created within the same tick may share a birth time.
	time.Sleep(25 * time.Millisecond)
	writeFile(t, fsys, second, "2")

	firstInfo, err := fsys.Lstat(first)
	require.NoError(t, err)
	secondInfo, err := fsys.Lstat(second)
	require.NoError(t, err)
	if !firstInfo.HasBirth {
		// Only skip when the kernel itself says so, so that a bug that
		// drops birth times cannot hide behind this.
		var stx unix.Statx_t
		require.NoError(t, unix.Statx(unix.AT_FDCWD, first, 0, unix.STATX_BTIME, &stx))
		require.Zero(t, stx.Mask&unix.STATX_BTIME, "the kernel reports a birth time that Lstat dropped")
		t.Skipf("the filesystem under %s reports no birth time (statx mask %#x)", dir, stx.Mask)
	}
	require.True(t, secondInfo.HasBirth)
	require.Less(t, firstInfo.BirthNs, secondInfo.BirthNs)
	nowNs := time.Now().UnixNano()
	require.Less(t, nowNs-firstInfo.BirthNs, int64(time.Hour), "birth time is a real timestamp")

	renamed := filepath.Join(dir, "renamed")
	require.NoError(t, fsys.Rename(first, renamed))
	renamedInfo, err := fsys.Lstat(renamed)
	require.NoError(t, err)
	require.Equal(t, firstInfo.BirthNs, renamedInfo.BirthNs)
}

// TestBirthTimeAbsent uses procfs, which reports no birth time: the
// identity must then be unknown, never a zero birth.
func TestBirthTimeAbsent(t *testing.T) {
	const procFile = "/proc/self/stat"
	if _, err := os.Lstat(procFile); err != nil {
		t.Skipf("no procfs here (%v): cannot observe a filesystem without birth time", err)
	}
	info, err := NewFS().Lstat(procFile)
	require.NoError(t, err)
	require.False(t, info.HasBirth)
	require.Zero(t, info.BirthNs)
	_, ok := info.Identity()
	require.False(t, ok)
}
