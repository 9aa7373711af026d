package campaign

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// The budget is CPU time, not wall time: the machine may be shared.

// CoverageRow is one engine's line of the coverage benchmark: the distinct
// coverage points (the engine's signal, DefaultCoverage by default) that
// random and guided search reach in the same CPU time, one core each, one
// after the other in the same process.
type CoverageRow struct {
	Engine        string  `json:"engine"`
	Seconds       float64 `json:"seconds"`
	RandomRuns    int     `json:"random_runs"`
	RandomPoints  int     `json:"random_points"`
	GuidedRuns    int     `json:"guided_runs"`
	GuidedPoints  int     `json:"guided_points"`
	GuidedCorpus  int     `json:"guided_corpus"`
	Ratio         float64 `json:"ratio"`
	RandomCPUSecs float64 `json:"random_cpu_seconds"`
	GuidedCPUSecs float64 `json:"guided_cpu_seconds"`
}

// CoverageBench measures each of o.Engines for d per search (o's
// scheduler, faults and knobs; one worker). Both searches run with the
// coverage recording on (sim Config.Coverage) and score every run the same
// way, so only the choice of runs differs.
func CoverageBench(ctx context.Context, o Options, d time.Duration) ([]CoverageRow, error) {
	o.Workers, o.Seeds = 1, 0
	o.Duration = d
	if err := o.validate(); err != nil {
		return nil, err
	}
	var rows []CoverageRow
	for _, engine := range o.Engines {
		one := o
		one.Engines = []string{engine}
		row := CoverageRow{Engine: engine, Seconds: d.Seconds()}
		started := cpuTime()
		row.RandomRuns, row.RandomPoints = randomCoverage(ctx, &one, d)
		row.RandomCPUSecs = (cpuTime() - started).Seconds()
		started = cpuTime()
		corpus := NewCorpus()
		searches := guidedLoop(ctx, &one, corpus, 0, func(outcome) bool { return cpuTime()-started < d })
		row.GuidedCPUSecs = (cpuTime() - started).Seconds()
		row.GuidedRuns, row.GuidedPoints, row.GuidedCorpus = searches[engine].made, searches[engine].points(), corpus.Len()
		if row.RandomPoints > 0 {
			row.Ratio = float64(row.GuidedPoints) / float64(row.RandomPoints)
		}
		rows = append(rows, row)
	}
	return rows, ctx.Err()
}

// randomCoverage runs seeds in index order for d and counts the distinct
// points.
func randomCoverage(ctx context.Context, o *Options, d time.Duration) (int, int) {
	engine := o.Engines[0]
	e, err := o.Catalog.Lookup(engine)
	if err != nil {
		panic(err) // validated
	}
	coroutines := sim.NewCoroutines()
	defer coroutines.Close()
	seen := map[uint64]struct{}{}
	started := cpuTime()
	runs := 0
	for ; cpuTime()-started < d && ctx.Err() == nil; runs++ {
		spec, err := o.SpecFor(engine, o.BaseSeed+uint64(runs))
		if err != nil {
			panic(err)
		}
		out := runCandidate(e, job{engine: engine, index: runs}, spec, coroutines)
		for _, p := range out.points {
			seen[p.Hash] = struct{}{}
		}
	}
	return runs, len(seen)
}

// cpuTime is the process's CPU time so far (user and system): the budget
// of each search, so a machine shared with other work measures both alike.
func cpuTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		panic(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// WriteCoverageTable prints the rows as docs/BENCH.md's table.
func WriteCoverageTable(w io.Writer, rows []CoverageRow) error {
	table := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintln(table, "| engine\t| seconds each\t| random runs\t| random points\t| guided runs\t| guided points\t| guided corpus\t| guided / random\t|")
	fmt.Fprintln(table, "|---\t|---:\t|---:\t|---:\t|---:\t|---:\t|---:\t|---:\t|")
	for _, r := range rows {
		fmt.Fprintf(table, "| %s\t| %.0f\t| %d\t| %d\t| %d\t| %d\t| %d\t| %.2fx\t|\n", r.Engine, r.Seconds, r.RandomRuns,
			r.RandomPoints, r.GuidedRuns, r.GuidedPoints, r.GuidedCorpus, r.Ratio)
	}
	return table.Flush()
}
