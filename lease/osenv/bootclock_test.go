package osenv

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestBootClockIsTheHostsBootClock: two readings bracket the kernel's own,
// so the clock is the host's (shared by every process of the boot), not a
// per-process monotonic clock that starts at zero.
func TestBootClockIsTheHostsBootClock(t *testing.T) {
	before := NewBootClock().SinceBoot()
	var kernel unix.Timespec
	require.NoError(t, unix.ClockGettime(bootClockID, &kernel))
	after := NewBootClock().SinceBoot()
	require.LessOrEqual(t, before, time.Duration(kernel.Nano()))
	require.LessOrEqual(t, time.Duration(kernel.Nano()), after)
	require.Greater(t, before, time.Duration(0))
}
