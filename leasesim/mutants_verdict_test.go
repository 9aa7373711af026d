package leasesim

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
)

// TestMutantIsFoundOnlyByEveryEngineItLists: the summary of `leasesim
// mutants` counts a mutant found only when each of its engines' hunts
// found it (by campaign or by go test), names the engines of one some
// engine missed, and fails the command then.
func TestMutantIsFoundOnlyByEveryEngineItLists(t *testing.T) {
	engines := []string{"admission", "dirlease"}
	row := func(engine, foundBy string) MutantRow {
		return MutantRow{Name: "m", Engines: engines, Engine: engine, FoundBy: foundBy,
			Hunt: campaign.HuntResult{Found: foundBy == foundByCampaign, Seeds: 1, Seconds: 0.5}}
	}
	for _, c := range []struct {
		name   string
		rows   []MutantRow
		code   int
		stdout string
	}{
		{"every engine", []MutantRow{row("admission", foundByCampaign), row("dirlease", foundByCampaign)}, campaign.ExitOK,
			"1 mutants hunted (2 hunts, one per engine of each), 1 found by every engine they list (1 by campaign, 0 only by go test)"},
		{"one engine by go test", []MutantRow{row("admission", foundByGoTest), row("dirlease", foundByCampaign)}, campaign.ExitOK,
			"1 found by every engine they list (0 by campaign, 1 only by go test)"},
		{"one engine missed", []MutantRow{row("admission", ""), row("dirlease", foundByCampaign)}, campaign.ExitViolation,
			"0 found by every engine they list (0 by campaign, 0 only by go test); seconds to detection: median 0.50, worst 0.50 (one core)\nnot found by every engine: m: found by dirlease only, missed by admission"},
		{"not built", []MutantRow{{Name: "m", Engines: engines, Error: "stale"}}, campaign.ExitViolation,
			"not found by every engine: m: missed by admission,dirlease"},
		{"equivalent", []MutantRow{{Name: "m", Engines: engines, Equivalent: "why"}}, campaign.ExitOK,
			"1 equivalent mutants listed, not hunted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			require.Equal(t, c.code, printMutants(c.rows, false, &stdout, &stderr), stderr.String())
			require.Contains(t, stdout.String(), c.stdout)
			require.Equal(t, len(c.rows), strings.Count(stdout.String(), "| `m`"), "one table line per engine hunted")
		})
	}
}
