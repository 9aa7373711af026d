package leasesim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/lease/osenv"
)

// cmdBench prints the bench report of docs/BENCH.md: every figure measured
// side by side in this one run.
func (c *Command) cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--coverage" || args[0] == "-coverage") {
		return c.cmdCoverageBench(args[1:], stdout, stderr)
	}
	set := newFlagSet("bench", "bench [--coverage] [flags]", stderr)
	seeds := set.Int("seeds", 300, "seeds per engine measurement and per scaling measurement")
	workers := set.String("workers", "1,2", "comma list of worker counts for the scaling measurement")
	engines := set.String("engine", "all", "engines to measure: a comma list or all")
	rounds := set.Int("rounds", 500, "acquire/release pairs of the lease operation mix")
	real := set.Bool("real", false, "also run the lease operation mix on the real OS (osenv) for a sim/real ratio")
	realDir := set.String("real-dir", os.TempDir(), "directory for --real (its filesystem decides what an fsync costs)")
	repeat := set.Int("repeat", 3, "measurements of each engine and scaling figure; the report keeps the median and the range")
	asJSON := set.Bool("json", false, "print the report as JSON")
	baseline := set.String("baseline", "", "another leasesim binary (e.g. an earlier build) to measure side by side with this one: "+
		"--compare-rounds rounds of both, one worker, printed as one Markdown table of ratios")
	compareRounds := set.Int("compare-rounds", 5, "rounds of --baseline")
	markdown := set.Bool("markdown", false, "print docs/BENCH.md's generated block: the command, then the tables, between its markers")
	doc := set.String("doc", "", "with --markdown: replace the block in this file (e.g. docs/BENCH.md) instead of printing it")
	var profile cpuProfileFlag
	profile.register(set)
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	options := campaign.BenchOptions{Catalog: c.Catalog, Seeds: *seeds, Rounds: *rounds, Repeat: *repeat}
	for _, field := range strings.Split(*workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return fail(stderr, &campaign.UsageError{Message: fmt.Sprintf("--workers: %q is not a positive number", field)})
		}
		options.Workers = append(options.Workers, n)
	}
	if *engines != "all" {
		options.Engines = strings.Split(*engines, ",")
	}
	if *real {
		dir, err := filepath.EvalSymlinks(*realDir)
		if err == nil {
			dir, err = filepath.Abs(dir)
		}
		if err != nil {
			return fail(stderr, &campaign.UsageError{Message: fmt.Sprintf("--real-dir: %v", err)})
		}
		options.RealFS, options.RealDir, options.RealNamespace = osenv.NewFS(), dir, realNamespace
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *baseline != "" {
		if *compareRounds < 1 || *seeds < 1 {
			return fail(stderr, &campaign.UsageError{Message: "bench --baseline: --compare-rounds and --seeds must be at least 1"})
		}
		if err := benchBaseline(ctx, *baseline, *compareRounds, *seeds, *engines, stdout); err != nil {
			return fail(stderr, err)
		}
		return campaign.ExitOK
	}
	stopProfile, err := profile.start()
	if err != nil {
		return fail(stderr, err)
	}
	report, err := campaign.Bench(ctx, options)
	if stopErr := stopProfile(); err == nil {
		err = stopErr
	}
	if err != nil {
		return fail(stderr, err)
	}
	switch {
	case *markdown:
		err = writeBenchMarkdown(stdout, report, args, *doc)
	case *asJSON:
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		err = encoder.Encode(report)
	default:
		err = report.WriteTable(stdout)
	}
	if err != nil {
		return fail(stderr, err)
	}
	return campaign.ExitOK
}

// realNamespace makes a fresh directory under dir for the real operation
// mix and removes it afterwards.
func realNamespace(dir string) (string, func(), error) {
	namespace, err := os.MkdirTemp(dir, "leasesim-bench-")
	if err != nil {
		return "", nil, err
	}
	return namespace, func() { _ = os.RemoveAll(namespace) }, nil
}
