package leasesim

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/doctable"
)

// BenchTable is the name of docs/BENCH.md's generated block, the one
// `leasesim bench --markdown` prints.
const BenchTable = "bench"

// benchMarkdown renders the report as docs/BENCH.md's generated block: the
// command that regenerates it, then the report's tables. Its deterministic
// cells (engines, seeds, steps per seed, failures, run hashes, the simfs
// operation mix's fsyncs and calls) are what TestBenchDocMatchesTheCode
// compares with the committed code.
func benchMarkdown(report *campaign.BenchReport, args []string) (string, error) {
	var table strings.Builder
	if err := report.WriteTable(&table); err != nil {
		return "", err
	}
	return fmt.Sprintf("Regenerate: `go run ./cmd/leasesim bench %s`\n\n%s", strings.Join(benchCommandArgs(args), " "),
		table.String()), nil
}

// benchCommandArgs is the command line of a markdown bench as a reader
// reruns it: --markdown kept, --doc FILE (where it was written) dropped.
func benchCommandArgs(args []string) []string {
	var kept []string
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--doc" || arg == "-doc":
			i++
		case strings.HasPrefix(arg, "--doc=") || strings.HasPrefix(arg, "-doc="):
		default:
			kept = append(kept, arg)
		}
	}
	return kept
}

// writeBenchMarkdown prints the block between its markers, or with doc
// set, replaces the block of that file.
func writeBenchMarkdown(stdout io.Writer, report *campaign.BenchReport, args []string, doc string) error {
	block, err := benchMarkdown(report, args)
	if err != nil {
		return err
	}
	if doc == "" {
		_, err = io.WriteString(stdout, doctable.Wrap(BenchTable, block))
		return err
	}
	data, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	updated, err := doctable.Replace(string(data), BenchTable, block)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	if err := os.WriteFile(doc, []byte(updated), 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote the %q table of %s\n", BenchTable, doc)
	return err
}
