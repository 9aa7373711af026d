package campaign

import (
	"context"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// deepHuntPlan is iterative deepening over the toy's three-process scenario
// with one crash: choice bound 1, then 2.
func deepHuntPlan(t *testing.T, engine string) []DeepOptions {
	var plan []DeepOptions
	for k := 1; k <= 2; k++ {
		plan = append(plan, DeepOptions{Catalog: testCatalog, Spec: deepToySpec(t, engine), ChoicesMax: k, FaultsMax: 1,
			DecisionsMax: 1000, Cache: true, POR: true, Sticky: true})
	}
	return plan
}

// TestHuntExploreFindsTheToyBugAndItReplays: an explore hunt of the
// planted-bug toy lock finds the race, counts the executions of every
// exploration it ran, stores the counterexample as an input that reruns
// (RerunHunt, as `leasesim mutants` reruns a detection on the real build)
// and replays from its seed file to the same failure, and shrinks it; on
// the correct toy it exhausts the bounds and says so.
func TestHuntExploreFindsTheToyBugAndItReplays(t *testing.T) {
	options := HuntOptions{Campaign: Options{Catalog: testCatalog, Engines: []string{"toylock-buggy"}}, SeedsMax: 100_000,
		Shrink: ShrinkOptions{RunsMax: 300}}
	hunt, err := HuntExplore(context.Background(), options, deepHuntPlan(t, "toylock-buggy"))
	require.NoError(t, err)
	require.True(t, hunt.Found, "%+v", hunt)
	require.Equal(t, "explore", hunt.Search)
	require.Empty(t, hunt.Stopped)
	require.Positive(t, hunt.Runs)
	require.Equal(t, hunt.Runs, hunt.Seeds)
	require.Equal(t, "toylock-buggy", hunt.Engine)
	require.Positive(t, hunt.ShrinkRuns)
	rerun, err := RerunHunt(options.Campaign, hunt)
	require.NoError(t, err)
	require.Equal(t, hunt.Class, rerun.Class, "the detection reruns from its input")
	file, err := ParseSeedFile([]byte(hunt.Input))
	require.NoError(t, err)
	result, finding, _, err := testCatalog.Execute(file.Spec, nil, false)
	require.NoError(t, err)
	require.True(t, finding.Same(file.Expect), "the seed file replays to its expected failure: %v, want %v", finding, file.Expect)
	require.Equal(t, hunt.Steps, result.Steps)

	first, err := ExploreDeep(context.Background(), deepHuntPlan(t, "toylock-buggy")[0])
	require.NoError(t, err)
	require.True(t, first.Found, "the race is within one choice")
	require.Equal(t, first.FoundAt, hunt.Runs, "the hunt stops at the first level's detection")

	clean, err := HuntExplore(context.Background(), options, deepHuntPlan(t, "toylock"))
	require.NoError(t, err)
	require.False(t, clean.Found)
	require.Equal(t, "bound exhausted", clean.Stopped)
	levels := 0
	for _, deep := range deepHuntPlan(t, "toylock") {
		r, err := ExploreDeep(context.Background(), deep)
		require.NoError(t, err)
		levels += r.Executions
	}
	require.Equal(t, levels, clean.Runs, "runs count the executions of every level")

	options.SeedsMax = 3
	cut, err := HuntExplore(context.Background(), options, deepHuntPlan(t, "toylock"))
	require.NoError(t, err)
	require.False(t, cut.Found)
	require.Equal(t, "run budget", cut.Stopped)
	require.LessOrEqual(t, cut.Runs, 3)
}

// TestHuntExploreRefusesACounterexampleThatDoesNotReplay mutation-tests the
// replay check: a detection replayed under another schedule than the one
// explored (a planted mismatch of ExecutionSpec) is an error, not a
// credited detection.
func TestHuntExploreRefusesACounterexampleThatDoesNotReplay(t *testing.T) {
	deep := deepHuntPlan(t, "toylock-buggy")[0]
	deep.StopAtFirst = true
	result, err := ExploreDeep(context.Background(), deep)
	require.NoError(t, err)
	require.True(t, result.Found)
	var hunt HuntResult
	require.NoError(t, exploreDetection(&hunt, deep, result, ShrinkOptions{RunsMax: -1}))
	require.True(t, hunt.Found)
	wrong := deep
	wrong.Sticky = false
	err = exploreDetection(&HuntResult{}, wrong, result, ShrinkOptions{RunsMax: -1})
	require.ErrorContains(t, err, "replays to")
}
