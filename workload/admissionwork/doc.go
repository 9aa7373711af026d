// Package admissionwork is the admission engine's simulator workload:
// controllers run package admission's single slot and helper lifecycle
// under the simulator's faults, with the hostile hooks, the ground truth,
// the liveness phase and the history recording that models.AdmissionModel
// checks (workload.go describes each). Engine is the engine's definition
// for the harness.
package admissionwork
