package osenv

import (
	"time"

	"golang.org/x/sys/unix"
)

// BootClock is the host's boot clock (dirlease.BootClock, statecas.BootClock):
// on Linux CLOCK_BOOTTIME, the same in every process of one boot, counting
// suspend and never stepped. dirlease measures a launching lease's window on
// it, because another process judges the window and wall time may step.
type BootClock struct{}

// NewBootClock returns the host's boot clock.
func NewBootClock() BootClock { return BootClock{} }

// SinceBoot reads CLOCK_BOOTTIME. The clock cannot fail on a supported
// kernel: an error is a broken host invariant, so it panics.
func (BootClock) SinceBoot() time.Duration {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &now); err != nil {
		panic("osenv: CLOCK_BOOTTIME is unreadable: " + err.Error())
	}
	return time.Duration(now.Nano())
}
