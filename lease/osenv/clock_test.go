package osenv

import (
	"context"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/internal/statefile"
)

func TestClockMonotonicNeverDecreases(t *testing.T) {
	clock := NewClock()
	previous := clock.Monotonic()
	require.GreaterOrEqual(t, previous, time.Duration(0))
	for range 10000 {
		now := clock.Monotonic()
		require.GreaterOrEqual(t, now, previous)
		previous = now
	}
	time.Sleep(2 * time.Millisecond)
	require.Greater(t, clock.Monotonic(), previous, "Monotonic advances")
	require.WithinDuration(t, time.Now(), clock.Now(), time.Second)
}

func TestClockSleep(t *testing.T) {
	clock := NewClock()
	cases := []struct {
		name        string
		duration    time.Duration
		cancelAfter time.Duration // negative: never cancelled; 0: before the call
		want        error
		elapsedMin  time.Duration
		elapsedMax  time.Duration
	}{
		{"full sleep", 20 * time.Millisecond, -1, nil, 20 * time.Millisecond, 5 * time.Second},
		{"cancelled early", 30 * time.Second, 20 * time.Millisecond, context.Canceled, 20 * time.Millisecond, 5 * time.Second},
		{"already cancelled", 30 * time.Second, 0, context.Canceled, 0, time.Second},
		{"already cancelled, zero duration", 0, 0, context.Canceled, 0, time.Second},
		{"zero duration", 0, -1, nil, 0, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch {
			case tc.cancelAfter == 0:
				cancel()
			case tc.cancelAfter > 0:
				timer := time.AfterFunc(tc.cancelAfter, cancel)
				defer timer.Stop()
			}
			start := clock.Monotonic()
			err := clock.Sleep(ctx, tc.duration)
			elapsed := clock.Monotonic() - start
			require.ErrorIs(t, err, tc.want)
			if tc.want == nil {
				require.NoError(t, err)
			}
			require.GreaterOrEqual(t, elapsed, tc.elapsedMin)
			require.Less(t, elapsed, tc.elapsedMax)
		})
	}
}

func TestClockSleepDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, NewClock().Sleep(ctx, time.Minute), context.DeadlineExceeded)
}

func TestIDSource(t *testing.T) {
	ids := NewIDSource()
	const idsCount = 1000
	seen := make(map[string]bool, idsCount)
	for range idsCount {
		id := ids.NewID()
		require.True(t, statefile.IsUUIDv4(id), "%q is not a canonical lower-case version-4 UUID", id)
		require.False(t, seen[id], "duplicate %s", id)
		seen[id] = true
	}
}
