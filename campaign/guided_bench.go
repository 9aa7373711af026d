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
// coverage points that random search, guided search by the operation
// signal alone (Options.Signal "operations", the signal without the call
// trace) and guided search by the whole default signal reach in the same
// CPU time, one core each, one after the other in the same process. Each
// search's points are counted in both measures: operation points
// (OperationCoverage) and all points (DefaultCoverage).
type CoverageRow struct {
	Engine     string         `json:"engine"`
	Seconds    float64        `json:"seconds"`
	Random     SearchCoverage `json:"random"`
	GuidedOps  SearchCoverage `json:"guided_operations"`
	GuidedCall SearchCoverage `json:"guided_calls"`
}

// SearchCoverage is one search's figures in a CoverageRow.
type SearchCoverage struct {
	Runs      int     `json:"runs"`
	OpPoints  int     `json:"operation_points"`
	AllPoints int     `json:"all_points"`
	Corpus    int     `json:"corpus,omitempty"`
	CPUSecs   float64 `json:"cpu_seconds"`
}

// coverageCount counts a search's distinct points in both measures.
type coverageCount struct {
	ops, all map[uint64]struct{}
}

func newCoverageCount() coverageCount {
	return coverageCount{ops: map[uint64]struct{}{}, all: map[uint64]struct{}{}}
}

func (c coverageCount) add(out outcome) {
	for i, p := range out.points {
		if i < out.ops {
			c.ops[p.Hash] = struct{}{}
		}
		c.all[p.Hash] = struct{}{}
	}
}

// CoverageBench measures each of o.Engines for d per search (o's
// scheduler, faults and knobs; one worker). Every search runs with the
// coverage recording on (sim Config.Coverage) and scores every run the same
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
		row.Random = randomCoverage(ctx, &one, d)
		for _, signal := range []string{SignalOperations, SignalCalls} {
			guided := one
			guided.Signal = signal
			figures := guidedCoverage(ctx, &guided, d)
			if signal == SignalOperations {
				row.GuidedOps = figures
			} else {
				row.GuidedCall = figures
			}
		}
		rows = append(rows, row)
	}
	return rows, ctx.Err()
}

// guidedCoverage runs guided search for d of CPU time.
func guidedCoverage(ctx context.Context, o *Options, d time.Duration) SearchCoverage {
	count := newCoverageCount()
	started := cpuTime()
	corpus := NewCorpus()
	searches := guidedLoop(ctx, o, corpus, 0, func(out outcome) bool {
		count.add(out)
		return cpuTime()-started < d
	})
	return SearchCoverage{Runs: searches[o.Engines[0]].made, OpPoints: len(count.ops), AllPoints: len(count.all),
		Corpus: corpus.Len(), CPUSecs: (cpuTime() - started).Seconds()}
}

// randomCoverage runs seeds in index order for d of CPU time.
func randomCoverage(ctx context.Context, o *Options, d time.Duration) SearchCoverage {
	engine := o.Engines[0]
	e, err := o.Catalog.Lookup(engine)
	if err != nil {
		panic(err) // validated
	}
	coroutines := sim.NewCoroutines()
	defer coroutines.Close()
	count := newCoverageCount()
	started := cpuTime()
	runs := 0
	for ; cpuTime()-started < d && ctx.Err() == nil; runs++ {
		spec, err := o.SpecFor(engine, o.BaseSeed+uint64(runs))
		if err != nil {
			panic(err)
		}
		count.add(runCandidate(e, job{engine: engine, index: runs}, spec, coroutines))
	}
	return SearchCoverage{Runs: runs, OpPoints: len(count.ops), AllPoints: len(count.all), CPUSecs: (cpuTime() - started).Seconds()}
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

// WriteCoverageTable prints the rows as docs/BENCH.md's table: per search
// its runs and points in both measures (operation points / all points),
// and the two ratios of the bar: guided by operations over random in
// operation points (the measure without the call trace), guided by the
// default signal over random in all points (the benchmark's figure: the
// search `--search guided` runs, scored by the whole default signal), and
// the same in operation points alone (probes, operation outcomes, on-disk
// shapes: a measure the call trace does not feed).
func WriteCoverageTable(w io.Writer, rows []CoverageRow) error {
	table := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintln(table, "| engine\t| CPU s each\t| random runs\t| random points (ops / all)\t| guided-ops runs\t| guided-ops points\t| guided-calls runs\t| guided-calls points\t| ops signal: guided / random (ops points)\t| calls signal: guided / random (all points)\t| calls signal: guided / random (ops points)\t|")
	fmt.Fprintln(table, "|---\t|---:\t|---:\t|---:\t|---:\t|---:\t|---:\t|---:\t|---:\t|---:\t|---:\t|")
	for _, r := range rows {
		fmt.Fprintf(table, "| %s\t| %.0f\t| %d\t| %d / %d\t| %d\t| %d / %d\t| %d\t| %d / %d\t| %.2fx\t| %.2fx\t| %.2fx\t|\n", r.Engine, r.Seconds,
			r.Random.Runs, r.Random.OpPoints, r.Random.AllPoints, r.GuidedOps.Runs, r.GuidedOps.OpPoints, r.GuidedOps.AllPoints,
			r.GuidedCall.Runs, r.GuidedCall.OpPoints, r.GuidedCall.AllPoints,
			ratio(r.GuidedOps.OpPoints, r.Random.OpPoints), ratio(r.GuidedCall.AllPoints, r.Random.AllPoints), ratio(r.GuidedCall.OpPoints, r.Random.OpPoints))
	}
	return table.Flush()
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
