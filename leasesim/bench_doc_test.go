package leasesim

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/doctable"
	"github.com/leasekit/leasekit/workload"
)

const benchDoc = "../docs/BENCH.md"

// markdownTable is one Markdown table of a block: its rows as maps from
// column header to cell.
func markdownTable(t *testing.T, block, firstHeader string) []map[string]string {
	t.Helper()
	var header []string
	var rows []map[string]string
	for _, line := range strings.Split(block, "\n") {
		if !strings.HasPrefix(line, "|") {
			if header != nil {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil && cells[0] == firstHeader:
			header = cells
		case header != nil && !strings.HasPrefix(cells[0], "---"):
			row := map[string]string{}
			for i, cell := range cells {
				row[header[i]] = cell
			}
			rows = append(rows, row)
		}
	}
	require.NotEmpty(t, rows, "no table headed %q", firstHeader)
	return rows
}

// linesWith returns the block's lines that start with prefix.
func linesWith(block, prefix string) []string {
	var lines []string
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, prefix) {
			lines = append(lines, line)
		}
	}
	return lines
}

// The deterministic columns of the bench block: what the same seeds and
// rounds give on any machine.
var (
	benchEngineColumns = []string{"engine", "seeds", "steps/seed", "failures", "run hash"}
	benchOpMixColumns  = []string{"filesystem", "pairs", "first acquire fsyncs (file+dir)", "acquire fsyncs (file+dir)",
		"release fsyncs (file+dir)", "FS calls per acquire / release"}
)

// TestBenchDocMatchesTheCode: docs/BENCH.md's generated block (`leasesim
// bench --markdown`) holds, in its deterministic cells, what the committed
// code gives: each engine's seeds, steps per seed, failures and run hash,
// the simfs operation mix's fsyncs and calls and what it syncs. The rates
// are the machine's and are not compared. A deliberate behaviour change
// regenerates the block with the command printed in it.
func TestBenchDocMatchesTheCode(t *testing.T) {
	data, err := os.ReadFile(benchDoc)
	require.NoError(t, err)
	block, err := doctable.Extract(string(data), BenchTable)
	require.NoError(t, err)
	committed := benchFacts(t, block)
	fresh := benchFacts(t, freshBenchBlock(t, block))
	require.Equal(t, fresh, committed, "docs/BENCH.md's bench table differs from the committed code in a deterministic cell; "+
		"regenerate it with the command in its block and --doc docs/BENCH.md")
}

// benchFacts is a block's deterministic cells, one line each.
func benchFacts(t *testing.T, block string) []string {
	var facts []string
	for _, row := range markdownTable(t, block, "engine") {
		facts = append(facts, cells(row, benchEngineColumns))
	}
	for _, row := range markdownTable(t, block, "filesystem") {
		if row["filesystem"] == "simfs" {
			facts = append(facts, cells(row, benchOpMixColumns))
		}
	}
	return append(facts, linesWith(block, "What one ")...)
}

func cells(row map[string]string, columns []string) string {
	var out []string
	for _, c := range columns {
		out = append(out, c+"="+row[c])
	}
	return strings.Join(out, " ")
}

// freshBenchBlock measures what the committed block names (its engines and
// seeds, its operation mix's rounds) on the code under test, once, and
// renders it as `leasesim bench` does.
func freshBenchBlock(t *testing.T, block string) string {
	catalog := workload.Catalog()
	report := &campaign.BenchReport{}
	for _, row := range markdownTable(t, block, "engine") {
		seeds, err := strconv.Atoi(row["seeds"])
		require.NoError(t, err)
		bench, err := catalog.BenchEngine(context.Background(), row["engine"], 1, seeds)
		require.NoError(t, err)
		report.Engines = append(report.Engines, bench)
	}
	for _, row := range markdownTable(t, block, "filesystem") {
		if row["filesystem"] != "simfs" {
			continue
		}
		rounds, err := strconv.Atoi(row["pairs"])
		require.NoError(t, err)
		mix, err := campaign.BenchOpMixSimfs(rounds)
		require.NoError(t, err)
		report.OpMix = append(report.OpMix, mix)
	}
	var out strings.Builder
	require.NoError(t, report.WriteTable(&out))
	return out.String()
}
