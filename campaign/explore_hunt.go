package campaign

import (
	"context"
	"fmt"
	"time"
)

// An explore hunt judges a planted bug with the deep explorer (ExploreDeep)
// instead of seeds: a plan of explorations (typically each engine's
// scenario at choice bound 1, then 2: iterative deepening), run in order,
// each stopping at its first failure, within the hunt's duration and with
// SeedsMax as the budget of executions. Its Runs are executions; its
// detection is the counterexample's execution spec (ExecutionSpec), stored
// in Input so that RerunHunt, replay and shrinking run it as they run a
// guided hunt's.

// HuntExplore runs the plan's explorations in order until one fails, then
// checks that the counterexample replays to the same failure and shrinks
// it. The plan's StopAtFirst and RunsMax are set here.
func HuntExplore(ctx context.Context, o HuntOptions, plan []DeepOptions) (HuntResult, error) {
	if len(plan) == 0 {
		return HuntResult{}, &UsageError{Message: "explore hunt: no exploration planned"}
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	started := time.Now()
	hunt := HuntResult{Search: "explore", Stopped: "bound exhausted"}
	for _, deep := range plan {
		deep.StopAtFirst, deep.RunsMax = true, 0
		if o.SeedsMax > 0 {
			deep.RunsMax = o.SeedsMax - hunt.Runs
			if deep.RunsMax <= 0 {
				hunt.Stopped = "run budget"
				break
			}
		}
		result, err := ExploreDeep(ctx, deep)
		if err != nil {
			return HuntResult{}, err
		}
		hunt.Runs += result.Executions
		if result.Found {
			hunt.Seeds, hunt.Seconds, hunt.Stopped = hunt.Runs, time.Since(started).Seconds(), ""
			return hunt, exploreDetection(&hunt, deep, result, o.Shrink)
		}
		if !result.Complete {
			hunt.Stopped = exploreStopped(result.Stopped)
			break
		}
	}
	hunt.Seeds, hunt.Seconds = hunt.Runs, time.Since(started).Seconds()
	return hunt, nil
}

// exploreDetection fills the hunt's detection from an exploration's
// counterexample, after replaying it: the explorer judged exactly this
// spec's run, so a replay that differs is a bug of the harness.
func exploreDetection(hunt *HuntResult, deep DeepOptions, result DeepResult, shrink ShrinkOptions) error {
	spec := deep.ExecutionSpec(result.Counterexample)
	replayed, finding, _, err := deep.Catalog.Execute(spec, nil, false)
	if err != nil {
		return err
	}
	if !finding.Same(result.Finding) {
		return fmt.Errorf("campaign: explore hunt: counterexample %v replays to %v, not %v", result.Counterexample, finding, result.Finding)
	}
	hunt.Found, hunt.Engine, hunt.Seed, hunt.Steps, hunt.Knobs = true, spec.Engine, spec.Seed, replayed.Steps, spec.knobLines()
	hunt.Outcome, hunt.Class, hunt.Message = finding.Outcome.String(), finding.Class, finding.Message
	hunt.Input = string(SeedFile{Spec: spec, Expect: finding}.Format())
	return shrinkHunt(deep.Catalog, hunt, spec, finding, shrink)
}

// exploreStopped names why an incomplete exploration stopped.
func exploreStopped(stopped string) string {
	switch stopped {
	case "duration":
		return "time out"
	case "runs":
		return "run budget"
	}
	return stopped
}
