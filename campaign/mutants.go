package campaign

import (
	"context"
	"fmt"
	"time"
)

// A hunt is the campaign that judges a planted bug (mutants/, see
// docs/MUTANTS.md): seeds run one at a time, in index order, on one core,
// until the first failure (or the budget); that failure is shrunk, and the
// hunt reports how many seeds and wall seconds the detection took. The
// mutated engine is compiled into the binary that hunts (go build
// -overlay), so Hunt itself knows nothing of mutants.

// HuntOptions bounds a hunt.
type HuntOptions struct {
	// Campaign gives the engines, base seed, scheduler, faults and knobs;
	// its Seeds, Duration, Workers and sharding are ignored.
	Campaign Options
	// SeedsMax bounds the seed indices tried (each runs every engine).
	SeedsMax int
	// Duration bounds the search's wall time (not the shrink's); zero is none.
	Duration time.Duration
	// Shrink bounds the shrink of the first failure; RunsMax < 0 skips it.
	Shrink ShrinkOptions
	// Corpus, for a guided hunt (Campaign.Search "guided"), is the corpus
	// it starts from (nil: none).
	Corpus *Corpus
}

// HuntResult is what a hunt found. Its JSON form is what `leasesim hunt
// --json` prints for `leasesim mutants`.
type HuntResult struct {
	Found bool `json:"found"`
	// Seeds is the number of seed indices run up to and including the
	// detecting one (all of them when nothing was found); Runs counts runs.
	Seeds int `json:"seeds"`
	Runs  int `json:"runs"`
	// Seconds is the wall time to the detection (or of the whole search).
	Seconds float64 `json:"seconds"`
	Engine  string  `json:"engine,omitempty"`
	Seed    uint64  `json:"seed,omitempty"`
	Outcome string  `json:"outcome,omitempty"`
	Class   string  `json:"class,omitempty"`
	Message string  `json:"message,omitempty"`
	// Steps is the detecting run's step count; the Shrunk* fields describe
	// the shrunk run (choices: non-zero decisions; steps: trace length).
	Steps           int     `json:"steps,omitempty"`
	ShrunkDecisions int     `json:"shrunk_decisions,omitempty"`
	ShrunkChoices   int     `json:"shrunk_choices,omitempty"`
	ShrunkSteps     int     `json:"shrunk_steps,omitempty"`
	ShrinkRuns      int     `json:"shrink_runs,omitempty"`
	ShrinkSeconds   float64 `json:"shrink_seconds,omitempty"`
	// Knobs are the detecting spec's key=value lines (replay it with
	// `leasesim replay --engine E SEED` and these knobs).
	Knobs []string `json:"knobs,omitempty"`
	// Search is the hunt's search ("random" or "guided"); Input is a
	// guided detection's run input, as a seed file's text.
	Search string `json:"search,omitempty"`
	Input  string `json:"input,omitempty"`
	// ShrunkSeed is the shrunk failure as a seed file's text (with its
	// provenance, so a later replay reports drift): `leasesim mutants
	// --save-seeds` writes it as the mutant's checked-in seed, which is how
	// a mutant seed that drifted under a code change is re-derived.
	ShrunkSeed string `json:"shrunk_seed,omitempty"`
	// CheckTimeouts counts the runs whose history check ran out of time:
	// not credited as a detection (Finding.CheckTimedOut).
	CheckTimeouts int `json:"check_timeouts,omitempty"`
	// Stopped says why an explore hunt that found nothing ended: "bound
	// exhausted" (every execution within its bounds was run or pruned:
	// the bug is out of the scenario's reach), "time out" or "run budget".
	Stopped string `json:"stopped,omitempty"`
}

// Hunt runs seeds in order until one fails, then shrinks that failure.
func Hunt(ctx context.Context, o HuntOptions) (HuntResult, error) {
	campaign := o.Campaign
	campaign.Seeds, campaign.Workers = max(o.SeedsMax, 1), 1
	if err := campaign.validate(); err != nil {
		return HuntResult{}, err
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	started := time.Now()
	if campaign.Search == "guided" {
		hunt, err := huntGuided(ctx, o, campaign, started)
		hunt.Search = "guided"
		return hunt, err
	}
	hunt := HuntResult{Search: "random"}
	for index := 0; index < campaign.Seeds && ctx.Err() == nil; index++ {
		hunt.Seeds = index + 1
		for _, engine := range campaign.Engines {
			spec, err := campaign.SpecFor(engine, campaign.BaseSeed+uint64(index))
			if err != nil {
				return HuntResult{}, err
			}
			hunt.Runs++
			result, finding, _, err := campaign.Catalog.Execute(spec, nil, false)
			if err != nil {
				return HuntResult{}, err
			}
			if finding.OK() {
				continue
			}
			if finding.CheckTimedOut() {
				hunt.CheckTimeouts++
				continue
			}
			hunt.Found, hunt.Seconds = true, time.Since(started).Seconds()
			hunt.Engine, hunt.Seed, hunt.Steps, hunt.Knobs = engine, spec.Seed, result.Steps, spec.knobLines()
			hunt.Outcome, hunt.Class, hunt.Message = finding.Outcome.String(), finding.Class, finding.Message
			return hunt, shrinkHunt(campaign.Catalog, &hunt, spec, finding, o.Shrink)
		}
	}
	hunt.Seconds = time.Since(started).Seconds()
	return hunt, nil
}

// shrinkHunt shrinks the detecting spec and records the shrunk sizes.
func shrinkHunt(c *Catalog, hunt *HuntResult, spec Spec, finding Finding, options ShrinkOptions) error {
	if options.RunsMax < 0 {
		return nil
	}
	started := time.Now()
	shrunk, err := c.Shrink(spec, finding, options)
	if err != nil {
		return fmt.Errorf("campaign: shrinking the hunt's failure: %w", err)
	}
	hunt.ShrunkDecisions, hunt.ShrunkChoices = shrunk.DecisionsAfter, shrunk.ChoicesAfter
	hunt.ShrunkSteps, hunt.ShrinkRuns = shrunk.Result.Steps, shrunk.Runs
	hunt.ShrinkSeconds = time.Since(started).Seconds()
	file := c.withSummary(SeedFile{Spec: shrunk.Spec, Expect: shrunk.Finding}, shrunk, nil, "")
	hunt.ShrunkSeed = string(file.Format())
	return nil
}

// Rerun runs one seed of an engine with a hunt's options and returns what
// it finds: `leasesim mutants` reruns a mutant's detecting seed on the
// unmutated build, so a failure the real code shares is not credited to
// the mutant.
func Rerun(o Options, engine string, seed uint64) (Finding, error) {
	spec, err := o.SpecFor(engine, seed)
	if err != nil {
		return Finding{}, err
	}
	_, finding, _, err := o.Catalog.Execute(spec, nil, false)
	return finding, err
}

// RecordSeedFile runs spec once and returns it as a seed file that replays
// that run (its recorded decisions) with the finding it got: how `leasesim
// mutants` hands over a mutant hunt's detection that the unmutated build
// fails too, as a finding in the engine.
func (c *Catalog) RecordSeedFile(spec Spec) (SeedFile, error) {
	result, finding, _, err := c.Execute(spec, nil, false)
	if err != nil {
		return SeedFile{}, err
	}
	recorded := spec.clone()
	recorded.adopt(result)
	return SeedFile{Spec: recorded, Expect: finding}, nil
}
