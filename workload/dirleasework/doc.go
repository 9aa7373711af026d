// Package dirleasework is the dirlease engine's simulator workload:
// creators and recoverers run package dirlease's directory leases and
// recovery under the simulator's faults, with the hostile directory swaps,
// the ground truth, the liveness phase and the history recording that
// models.DirLeaseModel checks (workload.go describes each). Engine is the
// engine's definition for the harness.
package dirleasework
