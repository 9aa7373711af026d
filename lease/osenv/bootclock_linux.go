package osenv

import "golang.org/x/sys/unix"

// bootClockID counts from boot, suspend included.
const bootClockID = unix.CLOCK_BOOTTIME
