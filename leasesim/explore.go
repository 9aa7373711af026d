package leasesim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/sim"
)

// cmdExplore enumerates every execution of a small scenario (two
// processes, crash points at every step) with at most --choices-max
// deviations from the default schedule (campaign.Explore), breadth first;
// it exits 1 (or 3) with the fewest-choice counterexample when one fails.
// With --procs or --crashes it runs the deep explorer instead
// (campaign.ExploreDeep: more processes, a fault budget, a state cache and
// sleep-set POR, explore_deep.go); --mutant runs either in a build with a
// catalog mutant planted (mutants_explore.go).
func (c *Command) cmdExplore(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("explore", "explore [flags]", stderr)
	engine := set.String("engine", c.replayEngineDefault(), "engine whose scenario to explore (its campaign.Engine.Explore knobs)")
	choicesMax := set.Int("choices-max", 1, "non-zero decisions per execution (scheduling choices, crash points)")
	decisionsMax := set.Int("decisions-max", 400, "positions of the decision list at which to branch")
	valuesMax := set.Int("values-max", 4, "alternatives tried per decision (0: all)")
	runsMax := set.Int("runs-max", 0, "run budget (0: none)")
	duration := set.Duration("duration", 0, "wall-time budget (0: none)")
	powerloss := set.Bool("powerloss", false, "also branch on a power loss at every step")
	stopAtFirst := set.Bool("stop-at-first", true, "stop at the first failing execution")
	asJSON := set.Bool("json", false, "print the result as JSON")
	var deep deepFlags
	deep.register(set)
	var profile cpuProfileFlag
	profile.register(set)
	mutantName := set.String("mutant", "", "explore a build with this catalog mutant planted (mutants/NAME; go build -overlay, as `leasesim mutants`)")
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	if *mutantName != "" {
		return c.exploreMutant(*mutantName, args, stdout, stderr)
	}
	stopProfile, err := profile.start()
	if err != nil {
		return fail(stderr, err)
	}
	defer func() { _ = stopProfile() }()
	e, err := c.Catalog.Lookup(*engine)
	if err != nil {
		return fail(stderr, err)
	}
	spec, err := deep.deepSpec(e)
	if err != nil {
		return fail(stderr, err)
	}
	if *powerloss {
		spec.Faults.Set("powerloss", 0.01)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if deep.selected() {
		if !flagGiven(set, "decisions-max") {
			*decisionsMax = deepDecisionsMax
		}
		result, err := c.runDeep(ctx, &deep, spec, campaign.ExploreOptions{ChoicesMax: *choicesMax, DecisionsMax: *decisionsMax,
			RunsMax: *runsMax, Duration: *duration, StopAtFirst: *stopAtFirst}, *asJSON, stdout, stderr)
		if err != nil {
			return fail(stderr, err)
		}
		return exploreExit(result.Found, result.Finding)
	}
	result, err := campaign.Explore(ctx, campaign.ExploreOptions{Catalog: c.Catalog, Spec: spec, ChoicesMax: *choicesMax,
		DecisionsMax: *decisionsMax, ValuesMax: *valuesMax, RunsMax: *runsMax, Duration: *duration, StopAtFirst: *stopAtFirst})
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		if err := encoder.Encode(result); err != nil {
			return fail(stderr, err)
		}
	} else {
		writeExplore(stdout, *engine, result)
	}
	return exploreExit(result.Found, result.Finding)
}

// exploreExit is explore's exit code: 1 for a violation, 3 for liveness.
func exploreExit(found bool, finding campaign.Finding) int {
	switch {
	case !found:
		return campaign.ExitOK
	case finding.Outcome == sim.OutcomeLiveness:
		return campaign.ExitLiveness
	}
	return campaign.ExitViolation
}

func writeExplore(w io.Writer, engine string, r campaign.ExploreResult) {
	fmt.Fprintf(w, "leasesim explore %s: %d executions (+%d exhausted-value probes) in %s, complete=%v\n", engine,
		r.Executions, r.Probes, (time.Duration(r.Seconds*1e3) * time.Millisecond).String(), r.Complete)
	fmt.Fprintf(w, "  distinct step hashes %d, distinct final states %d, longest run %d steps / %d decisions, choices explored <= %d\n",
		r.States, r.FinalStates, r.StepsMax, r.DecisionsLongest, r.ChoicesReached)
	if r.Found {
		fmt.Fprintf(w, "  FOUND at execution %d: %v\n  counterexample decisions=%s (%d choices)\n", r.FoundAt, r.Finding,
			sim.FormatDecisions(r.Counterexample), campaign.Choices(r.Counterexample))
	}
}
