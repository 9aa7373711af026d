package campaign

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// visualizeTimeout bounds the verbose porcupine check behind an HTML
// visualization.
const visualizeTimeout = 20 * time.Second

// errNoModel is the answer of an engine without a History mapping.
var errNoModel = errors.New("no porcupine model")

// HistoryVerdict is the Verdict of a porcupine check of result's history:
// message is the failed check's stable message ("" when it passed, see
// Verdict.Message), and visualize asks for the visualization of the checked
// history (Engine.Visualize).
func (e *Engine) HistoryVerdict(result sim.Result, message string, visualize bool) Verdict {
	verdict := Verdict{OK: message == "", Message: message}
	if message != "" && e.History != nil {
		history := result.History
		verdict.Explain = func() string { return e.ExplainHistory(history) }
	}
	if visualize {
		history := result.History
		verdict.Visualize = func(w io.Writer) error { return e.Visualize(history, w) }
	}
	return verdict
}

// Visualize writes porcupine's HTML visualization of a history of the
// engine (CheckOperationsVerbose, then porcupine.Visualize). A check that
// times out still yields the partial visualization porcupine has.
func (e *Engine) Visualize(history []sim.Operation, w io.Writer) error {
	if e.History == nil {
		return fmt.Errorf("%s visualization: %w", e.Name, errNoModel)
	}
	ops, model := e.History(history)
	_, info := porcupine.CheckOperationsVerbose(model, ops, visualizeTimeout)
	if err := porcupine.Visualize(model, info, w); err != nil {
		return fmt.Errorf("%s visualization: %w", e.Name, err)
	}
	return nil
}

// WriteFailureArtifacts writes, into dir, the artifacts of a failing run
// beside its trace: <engine>-<seed>.html (porcupine's visualization of the
// history) and <engine>-<seed>.txt (the result summary, and the model's
// plain-text story of the longest partial linearization when the history is
// not linearizable). It returns the HTML path.
func (e *Engine) WriteFailureArtifacts(dir string, r sim.Result) (string, error) {
	if e.History == nil {
		return "", fmt.Errorf("%s artifacts: %w", e.Name, errNoModel)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%d", e.Name, r.Seed))
	var page bytes.Buffer
	if err := e.Visualize(r.History, &page); err != nil {
		return "", err
	}
	if err := os.WriteFile(base+".html", page.Bytes(), 0o644); err != nil {
		return "", err
	}
	text := r.Summary() + "\n" + e.ExplainHistory(r.History)
	if err := os.WriteFile(base+".txt", []byte(text), 0o644); err != nil {
		return "", err
	}
	return base + ".html", nil
}

// ExplainHistory checks history and, when it is not linearizable, returns
// the model's plain-text story of the longest partial linearization: which
// operation could not be placed after which, and the model's state there.
// It returns "" for a linearizable history.
func (e *Engine) ExplainHistory(history []sim.Operation) string {
	ops, model := e.History(history)
	switch result, info := porcupine.CheckOperationsVerbose(model, ops, visualizeTimeout); result {
	case porcupine.Illegal:
		return models.ExplainIllegal(model, ops, info)
	case porcupine.Unknown:
		return "porcupine: timed out, verdict unknown\n"
	}
	return ""
}

// MissingProbes returns the engine's declared probes (Engine.Probes) that
// never fired in probes (a campaign's summed counts), in declaration order.
func (e *Engine) MissingProbes(probes map[string]int) []string {
	var missing []string
	for _, name := range e.Probes {
		if probes[name] == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}
