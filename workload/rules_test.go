package workload_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/internal/doctable"
	"github.com/leasekit/leasekit/workload"
)

const threatModelDoc = "../docs/THREAT-MODEL.md"

// catalogNames lists the planted-bug catalog: the directories of mutants/.
func catalogNames(t *testing.T) []string {
	entries, err := os.ReadDir("../mutants")
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	require.NotEmpty(t, names)
	return names
}

// TestThreatModelRuleTable: docs/THREAT-MODEL.md's rule table is what
// RuleTable renders from Rules, the engines' declared probes and the
// catalog on the committed code. LEASEKIT_DOCS_UPDATE=1 rewrites it.
func TestThreatModelRuleTable(t *testing.T) {
	table, err := workload.RuleTable(workload.Rules(), workload.Engines(), catalogNames(t))
	require.NoError(t, err)
	require.NoError(t, doctable.Sync(threatModelDoc, "rules", table, doctable.UpdateRequested()))
}

// TestRuleMutantsHaveStoredSeeds: every mutant a rule names is found by a
// campaign, so it has a stored seed (or is equivalent).
func TestRuleMutantsHaveStoredSeeds(t *testing.T) {
	for _, rule := range workload.Rules() {
		for _, name := range rule.Mutants {
			text, err := os.ReadFile(filepath.Join("../mutants", name, "mutation.txt"))
			require.NoError(t, err)
			if strings.Contains(string(text), "\nequivalent:") {
				continue
			}
			seeds, _ := filepath.Glob(filepath.Join("../campaign/testdata/mutant-seeds", name, "*", "*.seed"))
			require.NotEmpty(t, seeds, "rule %q names mutant %s, which has no stored seed", rule.Rule, name)
		}
		for _, name := range rule.MutantsByTest {
			text, err := os.ReadFile(filepath.Join("../mutants", name, "mutation.txt"))
			require.NoError(t, err)
			require.Contains(t, string(text), "\ntest: ", "rule %q names %s as caught by go test, but it has no test: line", rule.Rule, name)
			seeds, _ := filepath.Glob(filepath.Join("../campaign/testdata/mutant-seeds", name, "*", "*.seed"))
			require.Empty(t, seeds, "rule %q names %s as caught by go test only, but a campaign found it: move it to Mutants", rule.Rule, name)
		}
	}
}

// RuleTable refuses to name what no campaign checks.
func TestRuleTableRefusesUndeclaredProbesAndUnknownMutants(t *testing.T) {
	engines, catalog := workload.Engines(), catalogNames(t)
	_, err := workload.RuleTable([]workload.Rule{{Rule: "r", Probes: []string{"no-such-probe"}}}, engines, catalog)
	require.ErrorContains(t, err, `probe "no-such-probe" is declared by no engine`)
	_, err = workload.RuleTable([]workload.Rule{{Rule: "r", Mutants: []string{"no-such-mutant"}}}, engines, catalog)
	require.ErrorContains(t, err, `mutant "no-such-mutant" is not in the catalog`)
}
