package lease

import (
	"context"
	"fmt"
	"time"
)

// Default backoff of AcquireWait.
const (
	DefaultWaitBackoffMin = 10 * time.Millisecond
	DefaultWaitBackoffMax = 500 * time.Millisecond
)

// WaitOptions bound AcquireWait.
type WaitOptions struct {
	// Timeout bounds the whole wait, measured on Clock.Monotonic from the
	// call's start. 0 means one attempt (flock -w 0). It is the only
	// bound besides ctx; a negative Timeout is a RequestError.
	Timeout time.Duration
	// BackoffMin is the first pause after a Held or busy attempt, doubled
	// after each further one up to BackoffMax; 0 means the defaults.
	BackoffMin, BackoffMax time.Duration
	// Waiting, when set, is called with the result of each attempt that
	// will be retried (Held, or the guard busy), right before the pause:
	// a CLI says who holds the lease, a test knows the wait has begun. It
	// runs on the caller's goroutine and must not block.
	Waiting func(result AcquireResult)
	// Retry, when set, decides which results are retried in place of the
	// default (Held, or the guard busy): leasereal's run also waits out
	// every refusal that names no human state (leasecli.Retryable). A
	// result it retries is returned, as the last one, when the wait ends.
	Retry func(result AcquireResult) bool
}

// AcquireWait calls Acquire until it returns Acquired, a refusal that
// waiting cannot resolve, or the wait ends. Held and lifecycle-busy
// results are retried after a pause (exponential, BackoffMin doubling up
// to BackoffMax, never past the Timeout), slept through Clock.Sleep, so
// the simulator's virtual clock drives it as the real one does.
//
// When Timeout passes, it returns the last result (Held, or Refused with
// RefusalLifecycleBusy) and a nil error, as Acquire would have. When ctx
// is done (cancelled, or its deadline passed) it returns the last result
// and ctx.Err(). Any other refusal (corrupt, remote, unverifiable, unsafe)
// is returned at once: it needs an operator, not patience. WaitOptions.Retry
// replaces that choice (leasereal's run also waits out every refusal that
// names no human state). Reclaims of every attempt are accumulated in the
// result's Reclaimed.
//
// Each attempt is one Acquire, which may itself wait up to the Manager's
// GuardWait for a busy lifecycle guard; so the whole call can outlast
// Timeout by at most one GuardWait.
func (m *Manager) AcquireWait(ctx context.Context, req AcquireRequest, opts WaitOptions) (AcquireResult, error) {
	return WaitFor(ctx, m.clock, opts, func(ctx context.Context) (AcquireResult, error) { return m.Acquire(ctx, req) })
}

// WaitFor is AcquireWait's loop around any acquire attempt: attempt until
// it returns Acquired, an error, or a result opts.Retry declines, or the
// wait ends; pauses on clock as AcquireWait's. A caller whose attempt does
// more than Acquire (leasecli.AcquireRun, which first judges a killed
// run's process tree) waits by the same rules.
func WaitFor(ctx context.Context, clock Clock, opts WaitOptions, attempt func(context.Context) (AcquireResult, error)) (AcquireResult, error) {
	minimum, maximum, err := opts.backoff()
	if err != nil {
		return AcquireResult{}, err
	}
	deadline := clock.Monotonic() + opts.Timeout
	// Every pause but the last lasts at least minimum (or ends the wait),
	// so this bound is never what ends a wait on a real clock; it is the
	// guard against a Clock whose Sleep does not advance Monotonic.
	attemptsMax := 2 + int(opts.Timeout/minimum)
	retry := opts.Retry
	if retry == nil {
		retry = retryable
	}
	var reclaimed []Reclaim
	pause := minimum
	for n := 1; ; n++ {
		result, err := attempt(ctx)
		reclaimed = append(reclaimed, result.Reclaimed...)
		result.Reclaimed = reclaimed
		if err != nil || result.Kind == Acquired || !retry(result) {
			return result, err
		}
		left := deadline - clock.Monotonic()
		if left <= 0 || n >= attemptsMax {
			return result, nil
		}
		if opts.Waiting != nil {
			opts.Waiting(result)
		}
		if err := clock.Sleep(ctx, min(pause, left)); err != nil {
			return result, err
		}
		if err := ctx.Err(); err != nil {
			return result, err
		}
		pause = min(2*pause, maximum)
	}
}

// retryable reports whether waiting may turn result into Acquired.
func retryable(result AcquireResult) bool {
	return result.Kind == Held || (result.Kind == Refused && result.Refusal.Reason == RefusalLifecycleBusy)
}

func (o WaitOptions) backoff() (minimum, maximum time.Duration, err error) {
	minimum, maximum = o.BackoffMin, o.BackoffMax
	if minimum == 0 {
		minimum = DefaultWaitBackoffMin
	}
	if maximum == 0 {
		maximum = max(DefaultWaitBackoffMax, minimum)
	}
	switch {
	case o.Timeout < 0:
		return 0, 0, &RequestError{fmt.Sprintf("wait timeout %v is negative", o.Timeout)}
	case minimum < 0 || maximum < minimum:
		return 0, 0, &RequestError{fmt.Sprintf("backoff %v..%v is not a range of positive durations", minimum, maximum)}
	}
	return minimum, maximum, nil
}
