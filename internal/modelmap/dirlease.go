package modelmap

import (
	"errors"

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
	switch {
	case err == nil:
		return models.CASOK, true
	case errors.Is(err, dirlease.ErrChanged):
		return models.CASChanged, true
	case errors.Is(err, dirlease.ErrInvalidTransition):
		return models.CASInvalid, true
	}
	return 0, false
}
