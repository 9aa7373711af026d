package modelmap

import (
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/models"
)

// DirPhase maps a raw working directory's phase to the model's; a bundle
// stage has no phase (0).
func DirPhase(phase dirlease.Phase) models.DirPhase {
	switch phase {
	case dirlease.PhasePreparing:
		return models.DirPreparing
	case dirlease.PhaseLaunching:
		return models.DirLaunching
	case dirlease.PhaseRunning:
		return models.DirRunning
	case dirlease.PhaseSettled:
		return models.DirSettled
	}
	return 0
}

// DirCAS maps a dirlease update's or release's error to the model's
// outcome; known is false for an unknown outcome.
func DirCAS(err error) (models.CASKind, bool) {
	return casOutcome(err, dirlease.ErrChanged, dirlease.ErrInvalidTransition)
}
