package leasecli_test

import (
	"testing"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
)

// A waiting run retries a held lease and every refusal that names no human
// state (lease.HumanState: waiting may resolve it), and stops on the rest.
func TestRetryable(t *testing.T) {
	refused := func(reason lease.RefusalReason, human lease.HumanState) lease.AcquireResult {
		return lease.AcquireResult{Kind: lease.Refused, Refusal: lease.Refusal{Reason: reason, Human: human}}
	}
	tests := []struct {
		name   string
		result lease.AcquireResult
		want   bool
	}{
		{"held", lease.AcquireResult{Kind: lease.Held}, true},
		{"acquired", lease.AcquireResult{Kind: lease.Acquired}, false},
		{"guard busy", refused(lease.RefusalLifecycleBusy, lease.HumanNone), true},
		{"owner inspection failed", refused(lease.RefusalUnverifiableOwner, lease.HumanNone), true},
		{"guard holder's inspection failed", refused(lease.RefusalLifecycleUnverifiable, lease.HumanNone), true},
		{"owner in another PID namespace", refused(lease.RefusalUnverifiableOwner, lease.HumanForeignNamespace), false},
		{"remote owner", refused(lease.RefusalRemoteOwner, lease.HumanRemoteRecord), false},
		{"corrupt owner", refused(lease.RefusalCorruptOwner, lease.HumanCorruptOwner), false},
	}
	for _, tt := range tests {
		if got := leasecli.Retryable(tt.result); got != tt.want {
			t.Errorf("%s: Retryable = %v, want %v", tt.name, got, tt.want)
		}
	}
}
