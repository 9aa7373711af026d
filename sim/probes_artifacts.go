package sim

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
)

// visualizeTimeout bounds the verbose porcupine check behind an HTML
// visualization.
const visualizeTimeout = 20 * time.Second

// EngineHistory returns the porcupine operations of an engine's workload
// history ("lease", "admission" or "dirlease") and the model that checks
// them.
func EngineHistory(engine string, history []Operation) ([]porcupine.Operation, porcupine.Model, error) {
	switch engine {
	case "lease":
		return LeaseOperations(history), models.LeaseModel(), nil
	case "admission":
		return AdmissionOperations(history), models.AdmissionModel(), nil
	case "dirlease":
		return DirleaseOperations(history), models.DirLeaseModel(), nil
	}
	return nil, porcupine.Model{}, fmt.Errorf("sim: no history model for engine %q", engine)
}

// VisualizeHistory writes porcupine's HTML visualization of an engine's
// history (CheckOperationsVerbose, then porcupine.Visualize). A check that
// times out still yields the partial visualization porcupine has.
func VisualizeHistory(engine string, history []Operation, w io.Writer) error {
	ops, model, err := EngineHistory(engine, history)
	if err != nil {
		return err
	}
	_, info := porcupine.CheckOperationsVerbose(model, ops, visualizeTimeout)
	if err := porcupine.Visualize(model, info, w); err != nil {
		return fmt.Errorf("sim: %s visualization: %w", engine, err)
	}
	return nil
}

// WriteFailureArtifacts writes, into dir, the artifacts of a failing run
// beside its trace: <engine>-<seed>.html (porcupine's visualization of the
// history) and <engine>-<seed>.txt (the result summary, and the model's
// plain-text story of the longest partial linearization when the history is
// not linearizable). It returns the HTML path.
func WriteFailureArtifacts(dir, engine string, r Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%d", engine, r.Seed))
	var page bytes.Buffer
	if err := VisualizeHistory(engine, r.History, &page); err != nil {
		return "", err
	}
	if err := os.WriteFile(base+".html", page.Bytes(), 0o644); err != nil {
		return "", err
	}
	text := r.Summary()
	if ops, model, err := EngineHistory(engine, r.History); err == nil {
		if result, info := porcupine.CheckOperationsVerbose(model, ops, visualizeTimeout); result == porcupine.Illegal {
			text += "\n" + models.ExplainIllegal(model, ops, info)
		} else if result == porcupine.Unknown {
			text += "\nporcupine: timed out, verdict unknown\n"
		}
	}
	if err := os.WriteFile(base+".txt", []byte(text), 0o644); err != nil {
		return "", err
	}
	return base + ".html", nil
}
