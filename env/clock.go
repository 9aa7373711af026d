package env

import (
	"context"
	"time"
)

// Clock is the only source of time.
type Clock interface {
	// Now is the wall clock. It may step backwards or forwards (NTP, an
	// operator); use it only for timestamps written into records, never
	// to decide that a holder is gone (the simulator's clockstep fault
	// steps it).
	Now() time.Time
	// Monotonic is the time since an arbitrary origin. It never decreases
	// while the host is up and restarts at reboot. Deadlines use it.
	Monotonic() time.Duration
	// Sleep waits for d or until ctx is done, whichever is first, and
	// returns ctx.Err() in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}
