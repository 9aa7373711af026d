//go:build !linux

package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// childExited cannot be told without reaping here: a child whose identity
// cannot be captured is treated as not exited (runBound kills it and
// fails), as before.
func childExited(int) (bool, error) { return false, nil }

// hostBootClock is CLOCK_MONOTONIC, which on macOS counts from boot,
// sleep included, and is the same in every process of one boot.
type hostBootClock struct{}

func (hostBootClock) SinceBoot() time.Duration {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		panic("leasereal: CLOCK_MONOTONIC is unreadable: " + err.Error())
	}
	return time.Duration(now.Nano())
}
