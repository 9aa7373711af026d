package leasesim

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/sim"
)

// deepFlags are `leasesim explore`'s flags of the deep explorer
// (campaign.ExploreDeep): more processes, a fault budget, the state cache
// and the partial-order reduction. Giving --crashes or --procs selects it.
type deepFlags struct {
	procs, crashes int
	cache, por     bool
	quietCrashes   bool
	schedule       string
	progress       time.Duration
}

func (f *deepFlags) register(set *flag.FlagSet) {
	set.IntVar(&f.procs, "procs", 0, "processes of the scenario (lease: procs_per_host; admission: controllers; selftest: processes); selects the deep explorer")
	set.IntVar(&f.crashes, "crashes", -1, "fault budget: crashes (and, with --powerloss, power losses) per execution; selects the deep explorer")
	set.BoolVar(&f.cache, "cache", true, "deep explorer: prune states already visited")
	set.BoolVar(&f.por, "por", true, "deep explorer: prune reorderings of independent steps (sleep sets)")
	set.BoolVar(&f.quietCrashes, "quiet-crashes", true, "deep explorer: do not branch on a crash right after the same process's quiet step (a read, a clock read: the crash one step earlier leaves the same world)")
	set.StringVar(&f.schedule, "schedule", "sticky", "deep explorer: the default schedule a choice deviates from: sticky (the running process runs on; a choice is a preemption) or first (the first runnable process at every step)")
	set.DurationVar(&f.progress, "progress", 10*time.Second, "deep explorer: progress line period on stderr (0: none)")
}

func (f *deepFlags) selected() bool { return f.procs > 0 || f.crashes >= 0 }

// deepDecisionsMax is the deep explorer's --decisions-max when none is
// given: every position (the fault budget and the choice bound are its
// bounds; the breadth-first enumeration's 400 would cut a three-process
// run at about its hundred-and-thirtieth step).
const deepDecisionsMax = 1 << 30

// flagGiven reports whether the command line set the named flag.
func flagGiven(set *flag.FlagSet, name string) bool {
	given := false
	set.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// procsParams are the knobs --procs sets, by engine, in preference order.
var procsParams = []string{"procs_per_host", "controllers", "processes"}

// deepSpec is the engine's explore scenario with --procs applied.
func (f *deepFlags) deepSpec(e *campaign.Engine) (campaign.Spec, error) {
	spec := e.ExploreScenario()
	if f.procs == 0 {
		return spec, nil
	}
	for _, name := range procsParams {
		for _, p := range e.Params {
			if p.Name == name {
				spec.Params[name] = f.procs
				return spec, nil
			}
		}
	}
	return spec, &campaign.UsageError{Message: fmt.Sprintf("engine %s has no process-count knob for --procs", e.Name)}
}

// runDeep runs the deep explorer for cmdExplore.
func (c *Command) runDeep(ctx context.Context, f *deepFlags, spec campaign.Spec, o campaign.ExploreOptions, asJSON bool,
	stdout, stderr io.Writer) (campaign.DeepResult, error) {
	deep := campaign.DeepOptions{Catalog: c.Catalog, Spec: spec, ChoicesMax: o.ChoicesMax, FaultsMax: max(f.crashes, 0),
		DecisionsMax: o.DecisionsMax, RunsMax: o.RunsMax, Duration: o.Duration, StopAtFirst: o.StopAtFirst,
		Cache: f.cache, POR: f.por, QuietCrashes: f.quietCrashes, Sticky: f.schedule == "sticky"}
	if f.schedule != "sticky" && f.schedule != "first" {
		return campaign.DeepResult{}, &campaign.UsageError{Message: fmt.Sprintf("--schedule %q: sticky or first", f.schedule)}
	}
	if f.progress > 0 {
		deep.ProgressEvery = f.progress
		deep.Progress = func(r campaign.DeepResult) { writeDeepProgress(stderr, r) }
	}
	result, err := campaign.ExploreDeep(ctx, deep)
	if err != nil {
		return result, err
	}
	if asJSON {
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		return result, encoder.Encode(result)
	}
	writeDeep(stdout, spec, deep.Sticky, result)
	return result, nil
}

func writeDeepProgress(w io.Writer, r campaign.DeepResult) {
	cache, por := r.PrunedShare()
	fmt.Fprintf(w, "leasesim explore: %.0fs %d executions (%.0f/s), %d states, %d branch points, pruned: cache %.1f%% por %.1f%%, failures %d\n",
		r.Seconds, r.Executions, float64(r.Executions)/max(r.Seconds, 1e-9), r.States, r.Branches, 100*cache, 100*por, r.Failures)
}

func writeDeep(w io.Writer, spec campaign.Spec, sticky bool, r campaign.DeepResult) {
	cache, por := r.PrunedShare()
	bound := "complete (every execution within the bounds run or pruned)"
	if !r.Complete {
		bound = "NOT complete: stopped by " + r.Stopped
	}
	fmt.Fprintf(w, "leasesim explore %s %v: %d executions, %d steps in %s; %s\n", spec.Engine, spec.Params, r.Executions, r.Steps,
		(time.Duration(r.Seconds*1e3) * time.Millisecond).String(), bound)
	fmt.Fprintf(w, "  distinct states %d (keyed=%v), longest run %d steps, choices explored <= %d, faults <= %d\n",
		r.States, r.Keyed, r.StepsMax, r.ChoicesReached, r.FaultsReached)
	fmt.Fprintf(w, "  branch points %d; pruned by the cache: %d executions halted at a visited state (%.1f%%); by POR: %d halted at an asleep step + %d asleep picks not run (%.1f%%); quiet crash points not branched at %d; mismatches %d\n",
		r.Branches, r.HaltedCache, 100*cache, r.HaltedPOR, r.SkippedPOR, 100*por, r.SkippedQuiet, r.Mismatches)
	if r.Found {
		scheduler := sim.SchedulerRandom
		if sticky {
			scheduler = sim.SchedulerSticky
		}
		fmt.Fprintf(w, "  FOUND at execution %d: %v\n  counterexample scheduler=%v decisions=%s (%d choices)\n", r.FoundAt, r.Finding,
			scheduler, sim.FormatDecisions(r.Counterexample), campaign.Choices(r.Counterexample))
	}
}
