package campaign

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// A BenchComparison puts two builds' bench reports side by side: rounds of
// `leasesim bench --json`, each round running the baseline build and the
// current one back to back on the same machine, so both see the same load.
// Each figure is the median over the rounds; each ratio is the median of
// the rounds' current/baseline ratios (paired by round), with their range.
// The rates are per CPU-second of one worker on one core: on a shared
// machine the wall-time rates move with the other load, the CPU ones much
// less.
type BenchComparison struct {
	Baseline, Current string
	// Rounds holds each round's two reports, baseline first.
	Rounds [][2]*BenchReport
}

// benchFigure is one per-engine figure of the comparison.
type benchFigure struct {
	name   string
	value  func(EngineBench) float64
	format func(float64) string
}

var benchFigures = []benchFigure{
	{"seeds/s/core", EngineBench.SeedsPerCPUSecond, func(f float64) string { return fmt.Sprintf("%.1f", f) }},
	{"steps/s/core", EngineBench.StepsPerCPUSecond, thousands},
	{"allocs/seed", EngineBench.AllocsPerSeed, thousands},
	{"porcupine share", EngineBench.PorcupineShare, func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }},
}

// engineOf returns the named engine's measurement of a report.
func (r *BenchReport) engineOf(name string) (EngineBench, bool) {
	for _, e := range r.Engines {
		if e.Engine == name {
			return e, true
		}
	}
	return EngineBench{}, false
}

// engineNames lists the engines both builds measured in every round.
func (c *BenchComparison) engineNames() []string {
	var names []string
	if len(c.Rounds) == 0 {
		return nil
	}
	for _, e := range c.Rounds[0][1].Engines {
		inAll := true
		for _, round := range c.Rounds {
			_, inBase := round[0].engineOf(e.Engine)
			_, inCurrent := round[1].engineOf(e.Engine)
			inAll = inAll && inBase && inCurrent
		}
		if inAll {
			names = append(names, e.Engine)
		}
	}
	return names
}

// figureOf is one figure of one engine over the rounds: the medians of
// each side and the median and range of the paired ratios. A side that
// did not measure the figure (an older build's report) reads zero, and its
// ratio is left out.
func (c *BenchComparison) figureOf(engine string, f benchFigure) (base, current float64, ratios []float64) {
	var bases, currents []float64
	for _, round := range c.Rounds {
		b, _ := round[0].engineOf(engine)
		n, _ := round[1].engineOf(engine)
		bases, currents = append(bases, f.value(b)), append(currents, f.value(n))
		if f.value(b) > 0 && f.value(n) > 0 {
			ratios = append(ratios, f.value(n)/f.value(b))
		}
	}
	slices.Sort(ratios)
	return median(bases), median(currents), ratios
}

func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// WriteMarkdown prints the comparison as one Markdown table: a row per
// engine and figure, then each side's run hashes (equal hashes: the same
// runs, so a speed change kept behaviour).
func (c *BenchComparison) WriteMarkdown(w io.Writer) error {
	var out strings.Builder
	if len(c.Rounds) == 0 {
		return fmt.Errorf("bench comparison: no rounds")
	}
	first := c.Rounds[0][1]
	fmt.Fprintf(&out, "Measured %s, %s %s/%s, %d CPUs, GOGC=%d, load average %s at the start; %d rounds, "+
		"each running `%s` then `%s`, `bench --json --workers 1 --repeat 1`, %d seeds per engine. "+
		"Figures are medians over the rounds, per CPU-second of one worker on one core; ratios are current over baseline, "+
		"the median of the rounds' ratios with their range.\n\n",
		first.Started.Format("2006-01-02 15:04 UTC"), first.GoVersion, first.OS, first.Arch, first.CPUs, first.GCPercent,
		first.LoadAverage, len(c.Rounds), c.Baseline, c.Current, engineSeeds(first))
	out.WriteString("| engine | figure | baseline | current | current / baseline (range) |\n")
	out.WriteString("|---|---|---:|---:|---:|\n")
	for _, engine := range c.engineNames() {
		for _, f := range benchFigures {
			base, current, ratios := c.figureOf(engine, f)
			ratio := "n/a"
			if len(ratios) > 0 {
				ratio = fmt.Sprintf("%.2fx (%.2f-%.2f)", median(ratios), ratios[0], ratios[len(ratios)-1])
			}
			fmt.Fprintf(&out, "| %s | %s | %s | %s | %s |\n", engine, f.name, formatOrNA(f, base), formatOrNA(f, current), ratio)
		}
		b, _ := c.Rounds[0][0].engineOf(engine)
		n, _ := c.Rounds[0][1].engineOf(engine)
		fmt.Fprintf(&out, "| %s | run hash | `%016x` | `%016x` | %s |\n", engine, b.Hash, n.Hash, sameOrMoved(b.Hash, n.Hash))
	}
	_, err := io.WriteString(w, out.String())
	return err
}

func formatOrNA(f benchFigure, value float64) string {
	if value == 0 {
		return "n/a"
	}
	return f.format(value)
}

func sameOrMoved(base, current uint64) string {
	if base == current {
		return "same runs"
	}
	return "moved"
}

func engineSeeds(r *BenchReport) int {
	if len(r.Engines) == 0 {
		return 0
	}
	return r.Engines[0].Seeds
}
