package flockunlink_test

import (
	"testing"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/flockunlink"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/simtest"
)

// The harness finds the flock-then-unlink lock broken: two holders on a
// split inode.
func TestFlockUnlinkIsBrokenBySplitInode(t *testing.T) {
	examplekit.RequireFinds(t, flockunlink.Engine(), simtest.Options{Seeds: 3000}, "(split inode)")
}

// leasekit's lease passes the flock lock's workload.
func TestLeasePassesFlockUnlinkWorkload(t *testing.T) {
	simtest.Run(t, lockwork.Engine(examplekit.LeaseSpec(flockunlink.Spec())), simtest.Options{Seeds: 300})
}
