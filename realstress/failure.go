package realstress

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/leasekit/leasekit/models"
)

// failureContextOps is how many operations of the longest partial
// linearization the failure dump shows.
const failureContextOps = 25

// writeFailure writes a text dump of the longest partial linearization and
// of the earliest operations that could not follow it (docs/REALSTRESS.md,
// the stress run's "Report").
func writeFailure(path string, info porcupine.LinearizationInfo, model porcupine.Model) error {
	var text strings.Builder
	partitions := info.PartialLinearizationsOperations()
	for p, partials := range partitions {
		if len(partials) == 0 {
			continue
		}
		longest := partials[0]
		for _, partial := range partials {
			if len(partial) > len(longest) {
				longest = partial
			}
		}
		fmt.Fprintf(&text, "partition %d: longest partial linearization has %d operations; its last ones:\n", p, len(longest))
		start := max(0, len(longest)-failureContextOps)
		for _, op := range longest[start:] {
			fmt.Fprintf(&text, "  %s\n", models.OperationText(model, op))
		}
	}
	return os.WriteFile(path, []byte(text.String()), 0o600)
}

// describeHistory renders the operations overlapping stamps [from, to], by
// call stamp: used to find the operation that could not follow the longest
// partial linearization.
func describeHistory(ops []porcupine.Operation, from, to int64) string {
	sorted := append([]porcupine.Operation(nil), ops...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Call < sorted[b].Call })
	var text strings.Builder
	model := models.LeaseModel()
	for _, op := range sorted {
		if op.Return >= from && op.Call <= to {
			fmt.Fprintf(&text, "  %s\n", models.OperationText(model, op))
		}
	}
	return text.String()
}

// ReadHistory merges the logs and deaths a lease or admission stress run
// left in dir into its history, as the run's own check does: to re-check a
// kept work directory.
func ReadHistory(dir string) (History, error) {
	deaths, err := ReadDeaths(filepath.Join(dir, "deaths.jsonl"))
	if err != nil {
		return History{}, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, "logs", "lane-*.jsonl"))
	if err != nil {
		return History{}, err
	}
	lanes := map[int][]Record{}
	for _, path := range paths {
		var lane int
		if _, err := fmt.Sscanf(filepath.Base(path), "lane-%d.jsonl", &lane); err != nil {
			return History{}, err
		}
		if lanes[lane], err = ReadLog(path); err != nil {
			return History{}, err
		}
	}
	return BuildHistory(lanes, deaths)
}
