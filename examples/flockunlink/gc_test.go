package flockunlink_test

import "github.com/leasekit/leasekit/internal/simgc"

// The campaigns these tests run collect a quarter as often (internal/simgc):
// about a third less CPU for the same runs.
func init() { simgc.Tune() }
