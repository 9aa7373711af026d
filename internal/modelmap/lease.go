// Package modelmap maps the engines' results to the models' outputs: the
// one translation from what package lease, admission or dirlease returned to
// the value a porcupine model (package models) checks. The simulator's
// workloads (workload/...) and the real-OS stress (realstress) both record
// histories through it, so the two cannot disagree on what a result means.
//
// It imports the engines and models only: no simulator (sim, simfs,
// simproc, campaign), so the shipped binaries that link realstress do not
// link the harness.
package modelmap

import (
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
)

// LeaseRefusal maps an engine refusal to the model's. ok is false for a
// reason the model has no counterpart for (unsafe-namespace); the reason is then models.RefusalNone, which
// every model step rejects, so recording it anyway is a violation, never a
// silent pass.
func LeaseRefusal(reason lease.RefusalReason) (models.RefusalReason, bool) {
	switch reason {
	case lease.RefusalRemoteOwner:
		return models.RefusalRemoteOwner, true
	case lease.RefusalUnverifiableOwner:
		return models.RefusalUnverifiableOwner, true
	case lease.RefusalCorruptOwner:
		return models.RefusalCorruptOwner, true
	case lease.RefusalLifecycleBusy:
		return models.RefusalLifecycleBusy, true
	case lease.RefusalLifecycleUnverifiable:
		return models.RefusalLifecycleUnverifiable, true
	case lease.RefusalCorruptEpoch:
		return models.RefusalCorruptEpoch, true
	}
	return models.RefusalNone, false
}

// LeaseAcquire maps an Acquire result (returned without error) to the
// model's output; ok is false when a refusal's reason has no model
// counterpart (see LeaseRefusal). Reclaimed lists every generation the call
// quarantined, whatever its kind: it is evidence, which the model does not
// check.
func LeaseAcquire(result lease.AcquireResult) (models.LeaseAcquireResult, bool) {
	output := models.LeaseAcquireResult{}
	for _, reclaim := range result.Reclaimed {
		output.Reclaimed = append(output.Reclaimed, reclaim.Owner.Generation)
	}
	switch result.Kind {
	case lease.Acquired:
		output.Kind, output.Generation, output.Epoch = models.LeaseAcquired, result.Owner.Generation, int64(result.Owner.Epoch)
	case lease.Held:
		output.Kind, output.Generation, output.Epoch = models.LeaseHeld, result.Owner.Generation, int64(result.Owner.Epoch)
		output.Session = result.Owner.SessionID
	case lease.Refused:
		reason, ok := LeaseRefusal(result.Refusal.Reason)
		output.Kind, output.Reason = models.LeaseAcquireRefused, reason
		return output, ok
	default:
		panic(fmt.Sprintf("modelmap: acquire kind %v", result.Kind))
	}
	return output, true
}

// LeaseRelease maps a Release result to the model's output; ok is false as
// for LeaseAcquire.
func LeaseRelease(result lease.ReleaseResult) (models.LeaseReleaseResult, bool) {
	switch result.Kind {
	case lease.Released:
		return models.LeaseReleaseResult{Kind: models.LeaseReleased}, true
	case lease.NotOwner:
		output := models.LeaseReleaseResult{Kind: models.LeaseNotOwner}
		if result.Owner != nil {
			output.OwnerGeneration, output.OwnerSession = result.Owner.Generation, result.Owner.SessionID
		}
		return output, true
	case lease.ReleaseRefused:
		reason, ok := LeaseRefusal(result.Refusal.Reason)
		return models.LeaseReleaseResult{Kind: models.LeaseReleaseRefused, Reason: reason}, ok
	}
	panic(fmt.Sprintf("modelmap: release kind %v", result.Kind))
}

// LeaseInspect maps an Inspect projection to the model's output.
func LeaseInspect(projection lease.Projection) models.LeaseInspectResult {
	switch projection.Kind {
	case lease.Empty:
		return models.LeaseInspectResult{Kind: models.LeaseEmpty}
	case lease.Corrupt:
		return models.LeaseInspectResult{Kind: models.LeaseCorrupt}
	case lease.Owned:
		return models.LeaseInspectResult{Kind: models.LeaseOwned, Generation: projection.Owner.Generation,
			Session: projection.Owner.SessionID, Epoch: int64(projection.Owner.Epoch)}
	}
	panic(fmt.Sprintf("modelmap: projection kind %v", projection.Kind))
}

// LeaseFence classifies a WithCurrentLease call. entered says its fn ran:
// the fence held then, whatever fn or the guard's release returned after.
// known is false for any other error (an I/O error: unknown outcome).
func LeaseFence(entered bool, err error) (models.LeaseFenceResult, bool) {
	var fence *lease.FenceError
	var busy *lease.BusyError
	var unverifiable *lease.UnverifiableError
	switch {
	case entered:
		return models.LeaseFenceResult{Kind: models.FenceOK}, true
	case errors.As(err, &fence):
		return models.LeaseFenceResult{Kind: models.FenceFenced}, true
	case errors.As(err, &busy):
		return models.LeaseFenceResult{Kind: models.FenceBusy}, true
	case errors.As(err, &unverifiable):
		return models.LeaseFenceResult{Kind: models.FenceUnverifiable}, true
	}
	return models.LeaseFenceResult{}, false
}
