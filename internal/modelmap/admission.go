package modelmap

import (
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/models"
)

// AdmissionPhase maps a claim's phase to the model's; a phase the model
// does not know is a broken invariant.
func AdmissionPhase(phase admission.Phase) models.AdmissionPhase {
	switch phase {
	case admission.PhaseParentOwned:
		return models.PhaseParentOwned
	case admission.PhaseHelperLaunching:
		return models.PhaseHelperLaunching
	case admission.PhaseHelperActive:
		return models.PhaseHelperActive
	case admission.PhaseCleanupUnsafe:
		return models.PhaseCleanupUnsafe
	}
	panic(fmt.Sprintf("modelmap: admission phase %q", phase))
}

// AdmissionCAS maps a compare-and-swap update's or release's error to the
// model's outcome; known is false for an error that does not prove the
// call had no effect (unknown outcome).
func AdmissionCAS(err error) (models.CASKind, bool) {
	return casOutcome(err, admission.ErrChanged, admission.ErrInvalidTransition)
}

// casOutcome maps a compare-and-swap error to the model's outcome, given
// the engine's "changed" and "invalid transition" errors.
func casOutcome(err, changed, invalid error) (models.CASKind, bool) {
	switch {
	case err == nil:
		return models.CASOK, true
	case errors.Is(err, changed):
		return models.CASChanged, true
	case errors.Is(err, invalid):
		return models.CASInvalid, true
	}
	return 0, false
}

// AdmissionAcquire maps admission.Acquire's result; known is false for an
// error that does not prove the call had no effect.
func AdmissionAcquire(held *admission.Admission, err error) (models.AdmissionAcquireResult, bool) {
	var kind models.AdmissionAcquireKind
	switch {
	case err == nil:
		kind = models.AdmissionAcquired
	case errors.Is(err, admission.ErrActive):
		kind = models.AdmissionActive
	case errors.Is(err, admission.ErrIndeterminate):
		kind = models.AdmissionIndeterminate
	case errors.Is(err, admission.ErrContention):
		kind = models.AdmissionContention
	case errors.Is(err, admission.ErrCorrupt):
		kind = models.AdmissionCorrupt
	default:
		return models.AdmissionAcquireResult{}, false
	}
	output := models.AdmissionAcquireResult{Kind: kind}
	if held != nil {
		claim := held.Claim()
		output.ClaimID, output.Revision = claim.ID, claim.Revision
	}
	return output, true
}
