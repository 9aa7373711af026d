package osenv

import "golang.org/x/sys/unix"

// utimeOmit is UTIME_OMIT: utimensat leaves that time unchanged.
const utimeOmit = unix.UTIME_OMIT
