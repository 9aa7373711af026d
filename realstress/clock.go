package realstress

import (
	"golang.org/x/sys/unix"
)

// MonotonicNs reads CLOCK_MONOTONIC in nanoseconds. Unlike Go's monotonic
// time, which counts from an unspecified per-process origin, this clock is
// shared by every process on the host, so stamps from the parent and from
// every worker are comparable.
func MonotonicNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("realstress: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}
