//go:build !linux

package osenv

import "golang.org/x/sys/unix"

// bootClockID is CLOCK_MONOTONIC, which on macOS counts from boot, sleep
// included.
const bootClockID = unix.CLOCK_MONOTONIC
