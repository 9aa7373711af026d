package admissionwork

import (
	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// AdmissionOperations converts an admission workload history.
func AdmissionOperations(history []sim.Operation) []porcupine.Operation {
	return workkit.Operations(history, nil)
}

// CheckAdmissionHistory checks an admission workload history against
// models.AdmissionModel: nil means linearizable; a timeout wraps
// ErrCheckTimeout.
func CheckAdmissionHistory(history []sim.Operation) error {
	return workkit.CheckHistory("admission", AdmissionOperations(history), models.ValidateAdmissionHistory, models.CheckAdmission,
		models.AdmissionModel())
}
