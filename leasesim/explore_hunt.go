package leasesim

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/leasekit/leasekit/campaign"
)

// exploreHuntDefaults are the explore flags of an explore hunt of an engine
// when neither the hunt (--explore) nor the mutant (explore:) gives any:
// three processes where the engine has a process knob (lease
// procs_per_host, admission controllers), one crash, choice bound 2
// (explored as 1, then 2), the sticky schedule. Other engines with an
// explore scenario (dirlease: a creator and a recoverer) get
// exploreHuntDefault.
var exploreHuntDefaults = map[string]string{
	"lease":     "--procs 3 --crashes 1 --choices-max 2",
	"admission": "--procs 3 --crashes 1 --choices-max 2",
}

const exploreHuntDefault = "--crashes 1 --choices-max 2"

// HuntExplore is the explore search of a hunt (ExploreHunt): every engine
// of the hunt explored with the flags (or its defaults), choice bound 1
// first, then each bound up to --choices-max (iterative deepening: the
// cheap bound of every engine before the dear one of any), each stopping
// at the first failure (campaign.HuntExplore).
func HuntExplore(ctx context.Context, o campaign.HuntOptions, exploreFlags string) (campaign.HuntResult, error) {
	plan, err := explorePlan(o.Campaign.Catalog, o.Campaign.Engines, exploreFlags)
	if err != nil {
		return campaign.HuntResult{}, err
	}
	return campaign.HuntExplore(ctx, o, plan)
}

// explorePlan is the explorations of an explore hunt, bound by bound.
func explorePlan(catalog *campaign.Catalog, engines []string, exploreFlags string) ([]campaign.DeepOptions, error) {
	var levels [][]campaign.DeepOptions
	for _, name := range engines {
		e, err := catalog.Lookup(name)
		if err != nil {
			return nil, err
		}
		if len(e.Explore) == 0 {
			return nil, &campaign.UsageError{Message: fmt.Sprintf(
				"--search explore: engine %s has no explore scenario (its campaign.Engine.Explore knobs are empty), so the explore search cannot hunt it; use random or guided", name)}
		}
		flags := cmp.Or(exploreFlags, exploreHuntDefaults[name], exploreHuntDefault)
		deep, choicesMax, err := parseExploreHuntFlags(catalog, e, flags)
		if err != nil {
			return nil, err
		}
		for k := 1; k <= choicesMax; k++ {
			if len(levels) < k {
				levels = append(levels, nil)
			}
			level := deep
			level.ChoicesMax = k
			levels[k-1] = append(levels[k-1], level)
		}
	}
	var plan []campaign.DeepOptions
	for _, level := range levels {
		plan = append(plan, level...)
	}
	return plan, nil
}

// parseExploreHuntFlags reads explore flags (those of `leasesim explore`'s
// deep explorer) into one exploration of e's scenario and its choice bound.
func parseExploreHuntFlags(catalog *campaign.Catalog, e *campaign.Engine, args string) (campaign.DeepOptions, int, error) {
	set := newFlagSet("hunt --explore", "hunt --explore FLAGS", io.Discard)
	choicesMax := set.Int("choices-max", 2, "choice bound, explored from 1 up")
	decisionsMax := set.Int("decisions-max", deepDecisionsMax, "positions of the decision list at which to branch")
	powerloss := set.Bool("powerloss", false, "also branch on a power loss at every step")
	var deep deepFlags
	deep.register(set)
	if err := set.Parse(strings.Fields(args)); err != nil || set.NArg() > 0 {
		return campaign.DeepOptions{}, 0, &campaign.UsageError{Message: fmt.Sprintf("explore flags %q: %v (want explore's deep flags: --procs, --crashes, --choices-max, --decisions-max, --powerloss, --schedule, --cache, --por)",
			args, cmp.Or(err, fmt.Errorf("stray argument %q", set.Arg(0))))}
	}
	if *choicesMax < 1 {
		return campaign.DeepOptions{}, 0, &campaign.UsageError{Message: fmt.Sprintf("explore flags %q: --choices-max must be at least 1", args)}
	}
	if deep.schedule != "sticky" && deep.schedule != "first" {
		return campaign.DeepOptions{}, 0, &campaign.UsageError{Message: fmt.Sprintf("explore flags %q: --schedule %q: sticky or first", args, deep.schedule)}
	}
	spec, err := deep.deepSpec(e)
	if err != nil {
		return campaign.DeepOptions{}, 0, err
	}
	if *powerloss {
		spec.Faults.Set("powerloss", 0.01)
	}
	return campaign.DeepOptions{Catalog: catalog, Spec: spec, FaultsMax: max(deep.crashes, 0), DecisionsMax: *decisionsMax,
		Cache: deep.cache, POR: deep.por, Sticky: deep.schedule == "sticky"}, *choicesMax, nil
}
