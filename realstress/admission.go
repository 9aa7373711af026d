package realstress

import (
	"context"
	"fmt"
	"os"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/internal/modelmap"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/models"
)

// Admission operation names in the logs.
const (
	OpAdmissionAcquire = "admission-acquire"
	OpAdmissionRelease = "admission-release"
)

// The admission campaign: workers Acquire the single admission slot and
// Release it (a compare-and-swap on the slot's bytes), and are SIGKILLed at
// random; an acquire over a killed holder's parent-owned claim must
// recover it. The helper lifecycle (BeginHelperLaunch, BindHelper, ...) is
// left out: an owner killed in a helper phase without a recorded live
// helper wedges the slot as indeterminate by the original implementation's rules (correctly,
// but it would end the campaign's coverage), and a helper is a second
// process whose death the parent would have to stamp too.

// admissionWorker runs one incarnation's admission operations.
type admissionWorker struct {
	opLog
	engine admission.Config
	host   string
	held   *admission.Admission
}

// newAdmissionConfig is the admission engine on the real OS with the death
// gate, over state home dir.
func newAdmissionConfig(config WorkerConfig) admission.Config {
	var inspector lease.Inspector = deathGate{inner: osenv.NewInspector(), spawnsPath: config.SpawnsPath,
		deathsPath: config.DeathsPath}
	if config.PlantBlindInspector {
		inspector = blindInspector{Inspector: osenv.NewInspector()}
	}
	return admission.Config{StateHome: config.Namespace, FS: osenv.NewFS(), Clock: osenv.NewClock(),
		Inspector: inspector, IDs: osenv.NewIDSource()}
}

// RunAdmissionWorker performs config.Ops admission operations.
func RunAdmissionWorker(config WorkerConfig) error {
	host, log, err := startWorker(config)
	if err != nil {
		return err
	}
	defer log.Close()
	w := &admissionWorker{opLog: opLog{config: config, log: log}, engine: newAdmissionConfig(config), host: host}
	for range config.Ops {
		if err := w.step(); err != nil {
			return err
		}
	}
	return nil
}

func (w *admissionWorker) step() error {
	if w.held == nil {
		return w.acquire()
	}
	return w.release()
}

func (w *admissionWorker) acquire() error {
	call, err := w.call(OpAdmissionAcquire, models.AdmissionAcquire{Proc: w.config.Lane, Host: w.host})
	if err != nil {
		return err
	}
	held, opErr := admission.Acquire(context.Background(), w.engine)
	output, known := modelmap.AdmissionAcquire(held, opErr)
	if !known {
		return w.finish(call, nil, opErr)
	}
	w.held = held
	return w.finish(call, output, nil)
}

func (w *admissionWorker) release() error {
	claim := w.held.Claim()
	input := models.AdmissionRelease{Proc: w.config.Lane, ClaimID: claim.ID, Revision: claim.Revision,
		Phase: models.PhaseParentOwned, HasHelper: claim.HelperOwner != nil}
	if claim.Phase != admission.PhaseParentOwned {
		panic(fmt.Sprintf("realstress: admission worker holds phase %s", claim.Phase))
	}
	call, err := w.call(OpAdmissionRelease, input)
	if err != nil {
		return err
	}
	opErr := w.held.Release(context.Background())
	output, known := modelmap.AdmissionCAS(opErr)
	w.held = nil // released, changed or unknown: never present it again
	if !known {
		return w.finish(call, nil, opErr)
	}
	return w.finish(call, models.AdmissionReleaseResult{Kind: output}, nil)
}

// livenessAdmission is the final admission acquire after every worker
// died: every claim left is parent-owned by a dead owner, so it must be
// recovered.
func (r *runner) livenessAdmission(w *opLog) (string, bool, error) {
	aw := &admissionWorker{opLog: *w, engine: newAdmissionConfig(w.config)}
	host, err := os.Hostname()
	if err != nil {
		return "", false, err
	}
	aw.host = host
	if err := aw.acquire(); err != nil {
		return "", false, err
	}
	if aw.held == nil {
		return "not acquired", false, nil
	}
	return "acquired claim " + aw.held.Claim().ID, true, nil
}
