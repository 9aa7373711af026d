package campaign

import (
	"context"
	"time"
)

// huntGuided is Hunt for Search "guided": one worker, candidates until the
// first failure, SeedsMax candidates per engine, or the Duration. Seeds
// and Runs count candidates (every engine's), the detecting run's input
// travels in Input (a seed file's text: its seed alone does not rerun it).
func huntGuided(ctx context.Context, o HuntOptions, campaign Options, started time.Time) (HuntResult, error) {
	var hunt HuntResult
	var found *outcome
	guidedLoop(ctx, &campaign, o.Corpus, o.SeedsMax, func(out outcome) bool {
		hunt.Runs++
		if out.rec.finding.OK() {
			return true
		}
		if out.rec.finding.CheckTimedOut() {
			hunt.CheckTimeouts++
			return true
		}
		found = &out
		return false
	})
	hunt.Seeds = hunt.Runs
	hunt.Seconds = time.Since(started).Seconds()
	if found == nil {
		return hunt, nil
	}
	spec, finding := found.rec.spec, found.rec.finding
	hunt.Found, hunt.Engine, hunt.Seed, hunt.Steps, hunt.Knobs = true, spec.Engine, spec.Seed, found.rec.result.Steps, spec.knobLines()
	hunt.Outcome, hunt.Class, hunt.Message = finding.Outcome.String(), finding.Class, finding.Message
	hunt.Input = string(SeedFile{Spec: spec, Expect: finding}.Format())
	return hunt, shrinkHunt(campaign.Catalog, &hunt, spec, finding, o.Shrink)
}

// RerunHunt reruns a hunt's detecting run on this build: its Input when it
// has one (a guided hunt), else its seed with o's knobs (Rerun).
func RerunHunt(o Options, hunt HuntResult) (Finding, error) {
	if hunt.Input == "" {
		return Rerun(o, hunt.Engine, hunt.Seed)
	}
	file, err := ParseSeedFile([]byte(hunt.Input))
	if err != nil {
		return Finding{}, err
	}
	_, finding, _, err := o.Catalog.Execute(file.Spec, nil, false)
	return finding, err
}
