// Package leasework is the lease engine's simulator workload: processes on
// several hosts run package lease (acquire, inspect, release, fenced work)
// under the simulator's faults, with the hostile hooks, the ground truth
// checked after every step, the liveness phase and the history recording
// that models.LeaseModel checks (workload.go describes each). Engine is the
// engine's definition for the harness.
package leasework
