package workload_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/doctable"
	"github.com/leasekit/leasekit/internal/require"
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

// TestRuleEnginesHaveMutantSeeds: a rule whose probes are declared by one
// engine each claims that engine's campaign checks it, so one of its
// mutants must have a seed that engine's campaign found, stored under
// mutant-seeds/<mutant>/<engine>/. A mutant hunted over several engines at
// once proved only the engine that found it first; this holds every
// engine to its own proof.
func TestRuleEnginesHaveMutantSeeds(t *testing.T) {
	declaredBy := probeEngines(workload.Engines())
	for _, rule := range workload.Rules() {
		if len(rule.Mutants) == 0 {
			continue
		}
		for _, engine := range ruleEngines(rule, declaredBy) {
			if !slices.ContainsFunc(rule.Mutants, func(name string) bool { return hasSeedOf(t, name, engine) }) {
				t.Errorf("rule %q has %s probes, but none of its mutants %v has a stored seed the %s campaign found (under %s/<mutant>/%s/)",
					rule.Rule, engine, rule.Mutants, engine, mutantSeeds, engine)
			}
		}
	}
}

const mutantSeeds = "../campaign/testdata/mutant-seeds"

// probeEngines maps each declared probe to the engines that declare it.
func probeEngines(engines []*campaign.Engine) map[string][]string {
	declaredBy := map[string][]string{}
	for _, e := range engines {
		for _, probe := range e.Probes {
			if !slices.Contains(declaredBy[probe], e.Name) {
				declaredBy[probe] = append(declaredBy[probe], e.Name)
			}
		}
	}
	return declaredBy
}

// ruleEngines are the engines of a rule's probes that one engine alone
// declares: a probe several engines share (a fault's) names none.
func ruleEngines(rule workload.Rule, declaredBy map[string][]string) []string {
	var engines []string
	for _, probe := range rule.Probes {
		if by := declaredBy[probe]; len(by) == 1 && !slices.Contains(engines, by[0]) {
			engines = append(engines, by[0])
		}
	}
	return engines
}

// hasSeedOf reports whether mutant name has a stored seed of engine.
func hasSeedOf(t *testing.T, name, engine string) bool {
	seeds, err := filepath.Glob(filepath.Join(mutantSeeds, name, engine, "*.seed"))
	require.NoError(t, err)
	return len(seeds) > 0
}
