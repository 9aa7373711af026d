package workload

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/leasekit/leasekit/campaign"
)

// Rule is one rule docs/THREAT-MODEL.md states, with what makes the
// harness's campaigns check it: the fault or workload that builds the
// situation in which the rule matters, the declared probes (an engine's
// campaign.Engine.Probes, which a campaign with every fault on must fire)
// that say a campaign reached it, and the catalog mutants (mutants/<name>)
// that break it and that a campaign finds. NoProbe and NoMutant say why
// one is missing, where one is.
type Rule struct {
	Rule, Exercise string
	Probes         []string
	// Mutants are the catalog mutants a campaign finds (each has a stored
	// seed); MutantsByTest are those no campaign finds in its budget, which
	// only their mutation.txt test: line catches: the table marks them, as
	// the rule is then held by a unit test, not yet by a campaign.
	Mutants, MutantsByTest []string
	NoProbe, NoMutant      string
}

// Rules returns the rules of docs/THREAT-MODEL.md's rule table, in its
// order. TestThreatModelRuleTable holds the table to RuleTable's rendering
// of them, every probe to an engine's declaration and every mutant to the
// catalog.
func Rules() []Rule { return slices.Clone(rules) }

// RuleTable renders rules as the Markdown table docs/THREAT-MODEL.md
// carries: each probe with the engines that declare it, each mutant as it
// is named in the catalog. It fails on a probe no engine declares and on
// a mutant catalog does not hold, so the table can only name what
// campaigns check; its last lines name the catalog mutants no rule names.
func RuleTable(rules []Rule, engines []*campaign.Engine, catalog []string) (string, error) {
	declaredBy := map[string][]string{}
	for _, e := range engines {
		for _, probe := range e.Probes {
			if !slices.Contains(declaredBy[probe], e.Name) {
				declaredBy[probe] = append(declaredBy[probe], e.Name)
			}
		}
	}
	var out strings.Builder
	out.WriteString("| rule | exercised by | declared probes (declaring engines) | catalog mutants |\n|---|---|---|---|\n")
	named := map[string]bool{}
	probesNamed := map[string]bool{}
	for _, r := range rules {
		probes, err := probeCell(r, declaredBy, probesNamed)
		if err != nil {
			return "", err
		}
		mutants, err := mutantCell(r, catalog, named)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %s |\n", r.Rule, r.Exercise, probes, mutants)
	}
	var unnamed []string
	for _, m := range catalog {
		if !named[m] {
			unnamed = append(unnamed, "`"+m+"`")
		}
	}
	fmt.Fprintf(&out, "\n%d rules; %d of the %d declared probes and %d of the %d catalog mutants named.\n",
		len(rules), len(probesNamed), len(declaredBy), len(named), len(catalog))
	if len(unnamed) > 0 {
		fmt.Fprintf(&out, "Catalog mutants no rule names: %s.\n", strings.Join(unnamed, ", "))
	}
	return out.String(), nil
}

// probeCell lists a rule's probes with their declaring engines.
func probeCell(r Rule, declaredBy map[string][]string, seen map[string]bool) (string, error) {
	var cells []string
	for _, probe := range r.Probes {
		engines := declaredBy[probe]
		if len(engines) == 0 {
			return "", fmt.Errorf("rule %q: probe %q is declared by no engine", r.Rule, probe)
		}
		seen[probe] = true
		sort.Strings(engines)
		cells = append(cells, fmt.Sprintf("`%s` (%s)", probe, strings.Join(engines, ", ")))
	}
	return joinCell(cells, r.NoProbe), nil
}

// mutantCell lists a rule's catalog mutants.
func mutantCell(r Rule, catalog []string, seen map[string]bool) (string, error) {
	var cells []string
	for _, m := range slices.Concat(r.Mutants, r.MutantsByTest) {
		if !slices.Contains(catalog, m) {
			return "", fmt.Errorf("rule %q: mutant %q is not in the catalog", r.Rule, m)
		}
		seen[m] = true
		cell := "`" + m + "`"
		if slices.Contains(r.MutantsByTest, m) {
			cell += " (go test only: no campaign finds it)"
		}
		cells = append(cells, cell)
	}
	return joinCell(cells, r.NoMutant), nil
}

// joinCell joins a cell's names; an empty cell says why, or is a dash.
func joinCell(cells []string, why string) string {
	switch {
	case len(cells) > 0:
		return strings.Join(cells, ", ")
	case why != "":
		return "none: " + why
	}
	return "-"
}
