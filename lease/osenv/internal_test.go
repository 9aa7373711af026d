package osenv

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/lease"
)

func TestRetryEINTR(t *testing.T) {
	cases := []struct {
		name      string
		failures  int // EINTRs before the final result
		final     error
		wantCalls int
		want      error
	}{
		{"success", 0, nil, 1, nil},
		{"other errno is not retried", 0, syscall.EIO, 1, syscall.EIO},
		{"interrupted then success", 3, nil, 4, nil},
		{"interrupted then failure", 2, syscall.ENOENT, 3, syscall.ENOENT},
		{"interrupted forever gives up", eintrRetriesMax * 2, nil, eintrRetriesMax, syscall.EINTR},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := retryEINTR(func() error {
				calls++
				if calls <= tc.failures {
					return syscall.EINTR
				}
				return tc.final
			})
			require.Equal(t, tc.want, err)
			require.Equal(t, tc.wantCalls, calls)
		})
	}
}

func TestErrnoOfPanicsOnNonErrno(t *testing.T) {
	require.Equal(t, syscall.ENOENT, errnoOf(fmt.Errorf("wrapped: %w", syscall.ENOENT)))
	require.Panics(t, func() { errnoOf(fmt.Errorf("not an errno")) })
}

func TestOpenFlags(t *testing.T) {
	cases := []struct {
		flag lease.OpenFlag
		want int
	}{
		{lease.O_RDONLY, unix.O_RDONLY | unix.O_NONBLOCK},
		{lease.O_WRONLY, unix.O_WRONLY},
		{lease.O_RDWR, unix.O_RDWR},
		{lease.O_WRONLY | lease.O_RDWR, unix.O_RDWR},
		{lease.O_WRONLY | lease.O_CREATE | lease.O_EXCL, unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL},
		{lease.O_RDWR | lease.O_TRUNC | lease.O_APPEND, unix.O_RDWR | unix.O_TRUNC | unix.O_APPEND},
		{lease.O_RDONLY | lease.O_NOFOLLOW | lease.O_DIRECTORY, unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW | unix.O_DIRECTORY},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want|unix.O_CLOEXEC, openFlags(tc.flag), "flag %b", tc.flag)
	}
}

func TestFileModeRoundTrip(t *testing.T) {
	cases := []uint32{
		unix.S_IFREG | 0o644,
		unix.S_IFDIR | 0o700 | unix.S_ISVTX,
		unix.S_IFREG | 0o755 | unix.S_ISUID | unix.S_ISGID,
		unix.S_IFLNK | 0o777,
	}
	for _, mode := range cases {
		require.Equal(t, mode&^unix.S_IFMT, syscallMode(fileMode(mode)), "mode %o", mode)
	}
}

// TestUnsupportedInspectorFailsClosed covers darwin's inspector on every
// platform: no current identity, and every PID unknown (never absent, which
// would let ClassifyRecord call a live owner stale).
func TestUnsupportedInspectorFailsClosed(t *testing.T) {
	inspector := unsupportedInspector{reason: errInspectionUnsupportedDarwin}
	_, err := inspector.Current()
	require.EqualError(t, err, "leasekit: process identity inspection is unsupported on darwin (fails closed)")
	for _, pid := range []int{1, 12345} {
		got := inspector.Inspect(pid)
		require.Equal(t, lease.InspectUnknown, got.Kind)
		require.Equal(t, errInspectionUnsupportedDarwin.Error(), got.Diagnostic)
	}
	record := lease.ProcessIdentity{PID: 12345, StartTime: "1", Hostname: "h", PIDNamespace: "1"}
	verdict := lease.ClassifyRecord(record, record, inspector)
	require.Equal(t, lease.OwnerUnknown, verdict.Kind)
}
