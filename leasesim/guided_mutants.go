package leasesim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// huntMutantSearches hunts one mutant with each search of the comma list
// searches ("": the mutant's own search: line, else random), one row per
// engine (huntMutant). With several searches, an engine's row is the first
// search's that found it (else the first), carrying every search's row of
// that engine in Searches for the side-by-side table.
func (c *Command) huntMutantSearches(root, pkg, name, work, faults string, flags huntFlags, named bool, searches string) []MutantRow {
	if searches == "" {
		return c.huntMutant(root, pkg, name, work, faults, flags, named)
	}
	var bySearch [][]MutantRow
	for _, search := range strings.Split(searches, ",") {
		f := flags
		f.search = strings.TrimSpace(search)
		bySearch = append(bySearch, c.huntMutant(root, pkg, name, work, faults, f, named))
	}
	rows := bySearch[0]
	for i := range rows {
		rows[i] = primarySearch(bySearch, i)
	}
	return rows
}

// primarySearch is engine row i of the first search that found the mutant
// (else of the first search), with every search's row i in Searches.
func primarySearch(bySearch [][]MutantRow, i int) MutantRow {
	var rows []MutantRow
	for _, searchRows := range bySearch {
		if i < len(searchRows) { // a build that failed once gives one row
			rows = append(rows, searchRows[i])
		}
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
// mutant, engine and search, found, runs to detection (a random hunt's seeds are
// its runs per engine; a guided hunt's runs are its candidates; an explore
// hunt's are its executions, and when it found nothing it says whether its
// bounds were exhausted or its time ran out) and seconds; then a summary
// line per search.
func writeSearchTable(w io.Writer, rows []MutantRow) {
	searches := []string{}
	for _, s := range rows[0].Searches {
		searches = append(searches, s.Search)
	}
	table := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	header, rule := "| mutant\t| engine\t", "|---\t|---\t"
	for _, s := range searches {
		header += fmt.Sprintf("| %s: found\t| %s\t| seconds\t", s, searchRunsName(s))
		rule += "|---\t|---:\t|---:\t"
	}
	fmt.Fprintln(table, header+"| shrunk choices\t|")
	fmt.Fprintln(table, rule+"|---:\t|")
	for _, row := range rows {
		line := fmt.Sprintf("| `%s`\t| %s\t", row.Name, rowEngine(row))
		for _, s := range row.Searches {
			line += fmt.Sprintf("| %s\t| %d\t| %.2f\t", searchFound(s), s.Hunt.Runs, s.Hunt.Seconds)
		}
		shrunk := "-"
		if row.Hunt.Found && row.Hunt.ShrinkRuns > 0 {
			shrunk = fmt.Sprint(row.Hunt.ShrunkChoices)
		}
		fmt.Fprintln(table, line+"| "+shrunk+"\t|")
	}
	table.Flush()
	fmt.Fprintln(w)
	for i, s := range searches {
		fmt.Fprintln(w, searchSummary(s, rows, i))
	}
}

// searchRunsName is the runs column's name of a search.
func searchRunsName(search string) string {
	if search == "explore" {
		return "executions"
	}
	return "runs"
}

// searchFound is a search's found cell: true, false (with an explore
// hunt's reason), equivalent or ERROR.
func searchFound(row MutantRow) string {
	switch {
	case row.Error != "":
		return "ERROR"
	case row.Equivalent != "" && row.Hunt.Runs == 0:
		return "equivalent"
	case !row.Hunt.Found && row.Hunt.Stopped != "":
		return "false (" + row.Hunt.Stopped + ")"
	}
	return fmt.Sprint(row.Hunt.Found)
}

// searchSummary is the line of search (column i): found of hunted (a hunt
// per mutant and engine), and the median and worst runs to detection over
// the hunts that found their mutant.
func searchSummary(search string, rows []MutantRow, i int) string {
	hunted, found, errors := 0, 0, 0
	var runs []int
	for _, row := range rows {
		if i >= len(row.Searches) || (row.Equivalent != "" && row.Searches[i].Hunt.Runs == 0) {
			continue
		}
		s := row.Searches[i]
		hunted++
		switch {
		case s.Error != "":
			errors++
		case s.Hunt.Found:
			found++
			runs = append(runs, s.Hunt.Runs)
		}
	}
	line := fmt.Sprintf("%s: %d of %d found", search, found, hunted)
	if errors > 0 {
		line += fmt.Sprintf(" (%d errors)", errors)
	}
	if len(runs) > 0 {
		slices.Sort(runs)
		line += fmt.Sprintf("; %s to detection: median %d, worst %d", searchRunsName(search), runs[len(runs)/2], runs[len(runs)-1])
	}
	return line
}
