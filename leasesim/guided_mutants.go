package leasesim

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// huntMutantSearches hunts one mutant with each search of the comma list
// searches ("": the mutant's own search: line, else random). With several,
// the returned row is the first search's that found it (else the first),
// carrying every search's row in Searches for the side-by-side table.
func (c *Command) huntMutantSearches(root, pkg, name, work, faults string, flags huntFlags, named bool, searches string) MutantRow {
	if searches == "" {
		return c.huntMutant(root, pkg, name, work, faults, flags, named)
	}
	var rows []MutantRow
	for _, search := range strings.Split(searches, ",") {
		f := flags
		f.search = strings.TrimSpace(search)
		rows = append(rows, c.huntMutant(root, pkg, name, work, faults, f, named))
	}
	primary := rows[0]
	for _, row := range rows {
		if row.Hunt.Found && row.Error == "" {
			primary = row
			break
		}
	}
	if len(rows) > 1 {
		primary.Searches = rows
	}
	return primary
}

// writeSearchTable writes the side-by-side table of docs/MUTANTS.md: per
// mutant and search, found, runs to detection (a random hunt's seeds are
// its runs per engine; a guided hunt's runs are its candidates) and seconds.
func writeSearchTable(w io.Writer, rows []MutantRow) {
	searches := []string{}
	for _, s := range rows[0].Searches {
		searches = append(searches, s.Search)
	}
	table := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	header, rule := "| mutant\t| engine\t", "|---\t|---\t"
	for _, s := range searches {
		header += fmt.Sprintf("| %s: found\t| runs\t| seconds\t", s)
		rule += "|---\t|---:\t|---:\t"
	}
	fmt.Fprintln(table, header+"| shrunk choices\t|")
	fmt.Fprintln(table, rule+"|---:\t|")
	for _, row := range rows {
		line := fmt.Sprintf("| `%s`\t| %s\t", row.Name, strings.Join(row.Engines, ","))
		for _, s := range row.Searches {
			found := fmt.Sprint(s.Hunt.Found)
			if s.Error != "" {
				found = "ERROR"
			}
			line += fmt.Sprintf("| %s\t| %d\t| %.2f\t", found, s.Hunt.Runs, s.Hunt.Seconds)
		}
		shrunk := "-"
		if row.Hunt.Found && row.Hunt.ShrinkRuns > 0 {
			shrunk = fmt.Sprint(row.Hunt.ShrunkChoices)
		}
		fmt.Fprintln(table, line+"| "+shrunk+"\t|")
	}
	table.Flush()
}
