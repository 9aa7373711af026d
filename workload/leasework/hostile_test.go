package leasework

import (
	"context"
	"errors"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
)

// TestHostileRefusalIsTyped: the hostile callers' oracle takes only the
// typed refusal of each class; an untyped error, or none, is a finding.
func TestHostileRefusalIsTyped(t *testing.T) {
	request, config := &lease.RequestError{Problem: "x"}, &lease.ConfigError{Problem: "x"}
	for _, tc := range []struct {
		class string
		err   error
		want  bool
	}{
		{"request", request, true},
		{"duration", request, true},
		{"request", nil, false},
		{"request", config, false},
		{"request", errors.New("lease: invalid request: x"), false},
		{"config", config, true},
		{"config", request, false},
		{"cancelled", context.Canceled, true},
		{"cancelled", doneContext(true).Err(), true},
		{"cancelled", request, false},
		{"cancelled", nil, false},
	} {
		require.Equal(t, tc.want, hostileRefusal(tc.err, tc.class), "%s %v", tc.class, tc.err)
	}
}
