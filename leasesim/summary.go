package leasesim

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/leasekit/leasekit/campaign"
)

// summaryOptions say what the run summary prints beyond the compact form.
type summaryOptions struct {
	// probes prints every probe's count (`run --probes`; --json has them).
	probes bool
	// replayArgs are the run's knob flags, for the replay command of a
	// failure that was not shrunk into a seed file.
	replayArgs []string
	// guided: a guided failure's seed alone does not rerun it.
	guided bool
}

// writeRunSummary prints the compact end-of-campaign summary: the runs and
// their outcomes, "probes: N of M declared fired" with the unfired ones
// named, and every distinct failure with its replay command (the last line
// is the first failure's).
func (c *Command) writeRunSummary(w io.Writer, r *campaign.Report, o summaryOptions) {
	rate := 0.0
	if r.ElapsedSeconds > 0 {
		rate = float64(r.Runs) / r.ElapsedSeconds
	}
	fmt.Fprintf(w, "leasesim: %d runs (%s) over %s in %.1fs (%.0f runs/s)\n", r.Runs, outcomes(r.Outcomes),
		strings.Join(r.Engines, ","), r.ElapsedSeconds, rate)
	if len(r.Shards) > 1 || (len(r.Shards) == 1 && r.Shards[0] != "0/1") {
		fmt.Fprintf(w, "  shards %s\n", strings.Join(r.Shards, ","))
	}
	for _, engine := range r.Engines {
		if counts, ok := r.PerEngine[engine]; ok && len(r.Engines) > 1 {
			fmt.Fprintf(w, "  %-10s %s\n", engine, outcomes(counts))
		}
	}
	if r.DeterminismChecked > 0 {
		fmt.Fprintf(w, "  determinism: %d runs replayed twice\n", r.DeterminismChecked)
	}
	c.writeProbeLine(w, r)
	if o.probes {
		writeProbeCounts(w, r.Probes)
	}
	c.writeFailures(w, r, o)
}

// declaredProbes is the union of the report's engines' declared probes, in
// declaration order.
func (c *Command) declaredProbes(engines []string) []string {
	var declared []string
	for _, name := range engines {
		engine, err := c.Catalog.Lookup(name)
		if err != nil {
			continue
		}
		for _, probe := range engine.Probes {
			if !slices.Contains(declared, probe) {
				declared = append(declared, probe)
			}
		}
	}
	return declared
}

// writeProbeLine prints "probes: N of M declared fired" and names the
// declared probes that did not fire (a campaign with every fault on fires
// each; a short or fault-limited one may not).
func (c *Command) writeProbeLine(w io.Writer, r *campaign.Report) {
	declared := c.declaredProbes(r.Engines)
	var unfired []string
	for _, probe := range declared {
		if r.Probes[probe] == 0 {
			unfired = append(unfired, probe)
		}
	}
	fmt.Fprintf(w, "  probes: %d of %d declared fired", len(declared)-len(unfired), len(declared))
	if len(unfired) > 0 {
		fmt.Fprintf(w, "; not fired: %s", strings.Join(unfired, ", "))
	}
	fmt.Fprintf(w, " (%d distinct hit; --probes lists their counts)\n", len(r.Probes))
}

// writeProbeCounts lists every probe hit with its count, sorted by name.
func writeProbeCounts(w io.Writer, probes map[string]int) {
	names := make([]string, 0, len(probes))
	for name := range probes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "    %-60s %d\n", name, probes[name])
	}
}

// writeFailures prints each distinct failure with its replay command.
func (c *Command) writeFailures(w io.Writer, r *campaign.Report, o summaryOptions) {
	firsts := r.FirstFailures()
	if len(firsts) == 0 {
		fmt.Fprintln(w, "  no failures")
		return
	}
	fmt.Fprintf(w, "  failures: %d runs, %d distinct:\n", len(r.Failures)+r.FailuresDropped, len(firsts))
	for _, f := range firsts {
		fmt.Fprintf(w, "  - %s %s seed=%d (index %d, %d steps): %s\n", f.Engine, f.Outcome, f.Seed, f.Index, f.Steps, oneLine(f.Message))
		if f.SeedFile != "" {
			fmt.Fprintf(w, "    shrunk to %d decisions (%d choices): %s\n", f.DecisionsShrunk, f.ChoicesShrunk, f.SeedFile)
		}
		fmt.Fprintf(w, "    replay: %s\n", c.failureReplay(f, o))
	}
}

// failureReplay is a failure's paste-ready replay command: its seed file's
// when it was shrunk, else the seed with the run's knob flags.
func (c *Command) failureReplay(f *campaign.Failure, o summaryOptions) string {
	if f.Replay != "" {
		return f.Replay
	}
	if o.guided {
		return "none: a guided failure reruns only from its seed file (raise --shrink-max to write one)"
	}
	args := append([]string{"go run", c.mainPackage(), "replay", "--engine", f.Engine}, o.replayArgs...)
	return strings.Join(append(args, fmt.Sprint(f.Seed)), " ")
}

// outcomes is "ok 198, violation 2": every outcome with runs, ok always.
func outcomes(counts map[string]int) string {
	parts := []string{fmt.Sprintf("ok %d", counts["ok"])}
	for _, name := range []string{"violation", "liveness", "nondeterminism"} {
		if n := counts[name]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	return strings.Join(parts, ", ")
}

// oneLine is a message's first line, bounded.
func oneLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	const lengthMax = 200
	if len(line) > lengthMax {
		line = line[:lengthMax] + "..."
	}
	return line
}

// knobArgs keeps the flags of args that decide a run from its seed (the
// knobs `replay SEED` takes), for a failure's replay command.
func knobArgs(args []string) []string {
	knobs := []string{"scheduler", "pct-depth", "steps-max", "faults", "param"}
	var kept []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || !slices.Contains(knobs, name) {
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		kept = append(kept, "--"+name, shellQuote(value))
	}
	return kept
}

// shellQuote quotes a flag value that a shell would split.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"$\\;&|<>*?()") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
