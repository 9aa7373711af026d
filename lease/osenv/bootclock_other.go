//go:build !linux

package osenv

import (
	"time"

	"golang.org/x/sys/unix"
)

// BootClock is the host's boot clock (dirlease.BootClock, statecas.BootClock):
// CLOCK_MONOTONIC, which on macOS counts from boot, sleep included, and is
// the same in every process of one boot.
type BootClock struct{}

// NewBootClock returns the host's boot clock.
func NewBootClock() BootClock { return BootClock{} }

// SinceBoot reads CLOCK_MONOTONIC; an error is a broken host invariant.
func (BootClock) SinceBoot() time.Duration {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		panic("osenv: CLOCK_MONOTONIC is unreadable: " + err.Error())
	}
	return time.Duration(now.Nano())
}
