package leasesim

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

// mutantsSubset is the catalog test's default: five mutants across the
// engines and the state-file helpers that the measured catalog
// (docs/MUTANTS.md) finds fastest. LEASEKIT_MUTANTS=all runs the whole
// catalog (several minutes on one core); LEASEKIT_MUTANTS=a,b runs those.
var mutantsSubset = []string{"statefile-no-file-fsync", "admission-created-ignored", "dirlease-recover-ignores-liveness",
	"lease-guard-overwrites", // its shrink keeps a cut step budget (shrinker.finalBudget)
	"lease-release-no-generation", "statecas-remove-no-compare"}

// TestMutantCatalogIsFound builds leasesim with each selected planted bug
// and requires `leasesim mutants` to find every one within its budget (60 s,
// 100,000 seeds each); a mutant whose old block no longer matches its file is
// an error, never a pass.
func TestMutantCatalogIsFound(t *testing.T) {
	longtest.Require(t, "builds a leasesim per mutant and hunts each (about a minute)")
	names := mutantsSubset
	switch selection := os.Getenv("LEASEKIT_MUTANTS"); selection {
	case "":
		t.Logf("running the %d-mutant subset %v; set LEASEKIT_MUTANTS=all for the whole catalog", len(names), names)
	case "all":
		names = nil
	default:
		names = strings.Split(selection, ",")
	}
	args := []string{"mutants", "--json", "--root", "..", "--shrink-runs", "200", "--shrink-time", "3s"}
	if names != nil {
		args = append(args, "--only", strings.Join(names, ","))
	}
	code, stdout, stderr := leasesim(args...)
	var rows []MutantRow
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows), stderr)
	hunted := map[string]bool{} // a mutant has a row per engine of its engine: line
	for _, row := range rows {
		hunted[row.Name] = true
		t.Logf("%-40s found=%v seeds=%d %.2fs %s", row.Name, row.Hunt.Found, row.Hunt.Seeds, row.Hunt.Seconds, kind(row.Hunt))
		require.Empty(t, row.Error, row.Name)
		require.True(t, row.Hunt.Found, "mutant %s not found in %d seeds", row.Name, row.Hunt.Seeds)
		require.NotEmpty(t, row.Bug, "mutant %s has no bug: line", row.Name)
	}
	if names != nil {
		require.Len(t, hunted, len(names))
		for _, name := range names {
			require.True(t, hunted[name], "mutant %s was not hunted", name)
		}
	}
	require.Equal(t, campaign.ExitOK, code, stderr)
}

// TestExploreFindsShallowMutantsDeterministically: the bounded exhaustive
// mode finds the catalog's shallow bugs (one crash point, or one power
// loss, away from the default schedule) with the same counterexample on
// every run, and the real engine passes the same exploration.
func TestExploreFindsShallowMutantsDeterministically(t *testing.T) {
	longtest.Require(t, "builds three mutant leasesims and explores each twice (about 40 s)")
	for _, c := range []struct {
		name, engine string
		powerloss    bool
	}{
		{"statefile-excl-final-name", "lease", false},
		{"statefile-no-file-fsync", "lease", true},
		{"dirlease-recover-ignores-liveness", "dirlease", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"explore", "--json", "--engine", c.engine, "--choices-max", "1", "--decisions-max", "400"}
			if c.powerloss {
				args = append(args, "--powerloss")
			}
			code, stdout, stderr := leasesim(args...)
			require.Equal(t, campaign.ExitOK, code, "the real engine passes the exploration: %s%s", stdout, stderr)
			binary := mutantBuild(t, c.name, t.TempDir())
			var results [2]campaign.ExploreResult
			for i := range results {
				code, output := runBinary(t, binary, args...)
				require.NotEqual(t, campaign.ExitOK, code, output)
				require.NoError(t, json.Unmarshal([]byte(output), &results[i]), output)
				require.True(t, results[i].Found, output)
				require.Equal(t, 1, campaign.Choices(results[i].Counterexample), output)
				require.False(t, results[i].Complete, "stopped at the first failure")
			}
			t.Logf("%s: found at execution %d: %v, counterexample decisions=%s", c.name, results[0].FoundAt, results[0].Finding,
				sim.FormatDecisions(results[0].Counterexample))
			require.Equal(t, results[0].Counterexample, results[1].Counterexample, "the same counterexample every run")
			require.Equal(t, results[0].FoundAt, results[1].FoundAt)
			require.Equal(t, results[0].Finding, results[1].Finding)
		})
	}
}
