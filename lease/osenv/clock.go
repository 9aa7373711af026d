package osenv

import (
	"context"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// processStart is the origin of Monotonic. time.Now carries a monotonic
// clock reading, and time.Since subtracts readings, so wall-clock steps
// never move Monotonic.
var processStart = time.Now()

// Clock is lease.Clock on the host's clocks.
type Clock struct{}

var _ lease.Clock = Clock{}

// NewClock returns the real clock.
func NewClock() lease.Clock { return Clock{} }

// Now is the wall clock.
func (Clock) Now() time.Time { return time.Now() }

// Monotonic is the time since this process started, from the monotonic
// clock. It never decreases.
func (Clock) Monotonic() time.Duration { return time.Since(processStart) }

// Sleep waits for d or until ctx is done, and then returns ctx.Err(). A
// context that is already done wins over a zero or negative d.
func (Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
