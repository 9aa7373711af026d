package leasesim

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/mutant"
)

// MutantsTable is the name of docs/MUTANTS.md's generated block.
const MutantsTable = "mutants"

// mutantSeedsDir is where the catalog's stored seeds live, relative to the
// module root (`leasesim mutants --save-seeds` writes them).
const mutantSeedsDir = "campaign/testdata/mutant-seeds"

// mutantsMarkdown renders the catalog of the module at root as the table
// docs/MUTANTS.md carries: every column comes from the mutants' files and
// their stored seeds, nothing from a hunt, so the same code always renders
// the same table (TestMutantsDocMatchesTheCatalog).
func mutantsMarkdown(root string) (string, error) {
	names, err := mutant.Names(root)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	out.WriteString("| mutant | engines | file | search | stored seed: engine, finding | choices / steps | the bug |\n|---|---|---|---|---|---:|---|\n")
	stored, equivalent, testOnly := 0, 0, 0
	for _, name := range names {
		m, err := mutant.Load(root, name)
		if err != nil {
			return "", err
		}
		seed, cell, err := storedSeedCells(root, name)
		if err != nil {
			return "", err
		}
		_, unseeded, err := storedSeedsPerEngine(root, m)
		if err != nil {
			return "", err
		}
		switch {
		case m.Equivalent != "":
			equivalent++
			seed, cell = "equivalent: not hunted", "-"
		case len(unseeded) > 0 && m.Test == "":
			return "", fmt.Errorf("mutant %s has no stored seed of engine %s under %s (run leasesim mutants --only %s --engine %s --save-seeds %s) and no test: line",
				name, strings.Join(unseeded, ","), mutantSeedsDir, name, strings.Join(unseeded, ","), mutantSeedsDir)
		case seed == "":
			testOnly++
			seed, cell = "no campaign finds it; go test does: `"+m.Test+"`", "-"
		case len(unseeded) > 0:
			stored++
			seed += "; " + strings.Join(unseeded, ", ") + ": no campaign finds it; go test does: `" + m.Test + "`"
		default:
			stored++
		}
		fmt.Fprintf(&out, "| `%s` | %s | `%s` | %s | %s | %s | %s |\n", name, strings.Join(m.Engines, ", "), m.File,
			cmp.Or(m.Search, "random"), seed, cell, strings.ReplaceAll(m.Bug, "|", "/"))
	}
	fmt.Fprintf(&out, "\n%d mutants: %d with a stored seed (found by a campaign: one seed per engine that found it), %d found only by the go test their test: line names, %d equivalent.\n",
		len(names), stored, testOnly, equivalent)
	return out.String(), nil
}

// storedSeedCells describes a mutant's stored seed: its engine and finding,
// and its shrunk choices and steps ("" when it has none).
func storedSeedCells(root, name string) (string, string, error) {
	paths, err := filepath.Glob(filepath.Join(root, mutantSeedsDir, name, "*", "*.seed"))
	if err != nil || len(paths) == 0 {
		return "", "", err
	}
	var seeds, sizes []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", "", err
		}
		file, err := campaign.ParseSeedFile(data)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", path, err)
		}
		steps := "-"
		if file.Provenance != nil {
			steps = fmt.Sprint(file.Provenance.Steps)
		}
		seeds = append(seeds, fmt.Sprintf("%s, %s: %s", file.Spec.Engine, file.Expect.Outcome, strings.ReplaceAll(file.Expect.Class, "|", "/")))
		sizes = append(sizes, fmt.Sprintf("%d / %s", campaign.Choices(file.Spec.Decisions), steps))
	}
	return strings.Join(seeds, "; "), strings.Join(sizes, "; "), nil
}
