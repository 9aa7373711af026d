package campaign

import (
	"fmt"
	"io"
	"strings"
)

// The bench's targets, printed beside the measured figures.
const (
	benchStepsPerSecondTarget = 200_000
	benchSeedsPerSecondTarget = 500
)

// WriteTable prints the report as Markdown tables (docs/BENCH.md pastes
// them as they are).
func (r *BenchReport) WriteTable(w io.Writer) error {
	var out strings.Builder
	fmt.Fprintf(&out, "Measured %s, %s %s/%s, %d CPUs, GOGC=%d, PGO %s, load average %s at the start.\n",
		r.Started.Format("2006-01-02 15:04 UTC"), r.GoVersion, r.OS, r.Arch, r.CPUs, r.GCPercent, r.PGO, r.LoadAverage)
	fmt.Fprintf(&out, "Each engine and scaling figure is the median of %d measurements, after an untimed warm-up; "+
		"seeds/s/core gives their range. One worker runs on one core (GOMAXPROCS=1), a scaling row's workers on as many cores.\n\n", r.Repeat)
	out.WriteString("### Simulator, one worker (one core), each engine's default scenario\n\n")
	out.WriteString("| engine | seeds | steps/seed | steps/s/core (sim+check) | steps/s/core (sim only) | seeds/s/core (range) | steps per CPU-s | seeds per CPU-s | porcupine share | allocs/seed | simulated s per wall s | failures | run hash |\n")
	out.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, e := range r.Engines {
		fmt.Fprintf(&out, "| %s | %d | %.0f | %s | %s | %.1f (%.0f-%.0f) | %s | %.1f | %.1f%% | %s | %.1f | %d | %016x |\n",
			e.Engine, e.Seeds, float64(e.Steps)/float64(max(e.Seeds, 1)), thousands(e.StepsPerSecond()),
			thousands(e.StepsPerSecondSimulating()), e.SeedsPerSecond(), e.SeedsPerSecondRange[0],
			e.SeedsPerSecondRange[1], thousands(e.StepsPerCPUSecond()),
			e.SeedsPerCPUSecond(), 100*e.PorcupineShare(), thousands(e.AllocsPerSeed()), e.Compression(), e.Failures, e.Hash)
	}
	fmt.Fprintf(&out, "\nTargets: >= %s steps/s per core; >= %d lease seeds/s per core.\n",
		thousands(benchStepsPerSecondTarget), benchSeedsPerSecondTarget)
	if len(r.Scaling) > 0 {
		fmt.Fprintf(&out, "\n### Scaling with workers (%s default scenario)\n\n", r.ScalingEngine)
		out.WriteString("| workers | seeds | wall | seeds/s | speedup (wall) | CPU | seeds per CPU-s | efficiency (per CPU-s vs first) |\n")
		out.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Scaling {
			fmt.Fprintf(&out, "| %d | %d | %.2fs | %.1f | %.2fx | %.2fs | %.1f | %.2f |\n", s.Workers, s.Seeds,
				s.Wall.Seconds(), s.SeedsPerSecond(), s.Speedup, s.CPU.Seconds(), perSecond(float64(s.Seeds), s.CPU),
				s.Efficiency)
		}
	}
	if len(r.OpMix) > 0 {
		out.WriteString("\n### Lease operation mix: acquire + release by one process (package lease)\n\n")
		out.WriteString("| filesystem | pairs | pairs/s | pairs per CPU-s | first acquire fsyncs (file+dir) | acquire fsyncs (file+dir) | release fsyncs (file+dir) | FS calls per acquire / release |\n")
		out.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, m := range r.OpMix {
			fmt.Fprintf(&out, "| %s | %d | %s | %s | %s | %s | %s | %.0f / %.0f |\n", m.FS, m.Rounds,
				thousands(m.PairsPerSecond()), thousands(m.PairsPerCPUSecond()), m.FirstAcquire.format(), m.Acquire.format(), m.Release.format(),
				m.AcquireCalls, m.ReleaseCalls)
		}
		if len(r.OpMix) > 1 && r.OpMix[1].PairsPerSecond() > 0 {
			fmt.Fprintf(&out, "\nsim/real ratio (pairs/s, simfs over %s): %.1fx\n", r.OpMix[1].FS,
				r.OpMix[0].PairsPerSecond()/r.OpMix[1].PairsPerSecond())
		}
		m := r.OpMix[0]
		fmt.Fprintf(&out, "\nWhat one acquire syncs, in order: %s.\n", strings.Join(m.AcquireSyncs, ", "))
		fmt.Fprintf(&out, "What one release syncs, in order: %s.\n", strings.Join(m.ReleaseSyncs, ", "))
	}
	_, err := io.WriteString(w, out.String())
	return err
}

func (c FsyncCount) format() string {
	return fmt.Sprintf("%s (%s+%s)", trimFloat(c.Total()), trimFloat(c.File), trimFloat(c.Directory))
}

func trimFloat(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}

// thousands renders a rate with a k suffix above ten thousand.
func thousands(f float64) string {
	if f >= 10_000 {
		return fmt.Sprintf("%.1fk", f/1000)
	}
	return fmt.Sprintf("%.0f", f)
}
