package osenv

import (
	"time"

	"golang.org/x/sys/unix"
)

// BootClock is the host's boot clock (dirlease.BootClock, statecas.BootClock):
// the same in every process of one boot and never stepped (bootClockID: on
// Linux CLOCK_BOOTTIME, which counts suspend; on macOS CLOCK_MONOTONIC,
// which counts from boot, sleep included). dirlease measures a launching
// lease's window on it, because another process judges the window and wall
// time may step.
type BootClock struct{}

// NewBootClock returns the host's boot clock.
func NewBootClock() BootClock { return BootClock{} }

// SinceBoot reads the boot clock. It cannot fail on a supported kernel: an
// error is a broken host invariant, so it panics.
func (BootClock) SinceBoot() time.Duration {
	var now unix.Timespec
	if err := unix.ClockGettime(bootClockID, &now); err != nil {
		panic("osenv: the boot clock is unreadable: " + err.Error())
	}
	return time.Duration(now.Nano())
}
