package osenv

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
)

// TestBootClockIsTheHostsBootClock: the reading agrees with the kernel's
// uptime (/proc/uptime counts CLOCK_BOOTTIME), so every process of the
// boot reads the same clock, not one that starts with the process.
func TestBootClockIsTheHostsBootClock(t *testing.T) {
	raw, err := os.ReadFile("/proc/uptime")
	require.NoError(t, err)
	seconds, err := strconv.ParseFloat(strings.Fields(string(raw))[0], 64)
	require.NoError(t, err)
	uptime := time.Duration(seconds * float64(time.Second))
	require.InDelta(t, uptime.Seconds(), NewBootClock().SinceBoot().Seconds(), 1.0)
}
