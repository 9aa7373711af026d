package campaign

import (
	"context"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// TestHuntStopsAtTheFirstFailureAndShrinksIt: on the planted-bug toy lock
// the hunt stops at the first failing seed (every earlier one passes),
// shrinks it, and the same hunt twice reports the same seed; on the
// correct toy lock it spends the whole budget and finds nothing.
func TestHuntStopsAtTheFirstFailureAndShrinksIt(t *testing.T) {
	options := HuntOptions{Campaign: Options{Catalog: testCatalog, Engines: []string{"toylock-buggy"}, BaseSeed: 1}, SeedsMax: 300,
		Shrink: ShrinkOptions{RunsMax: 300}}
	first, err := Hunt(context.Background(), options)
	require.NoError(t, err)
	require.True(t, first.Found)
	require.Equal(t, "toylock-buggy", first.Engine)
	require.Equal(t, uint64(first.Seeds), first.Seed, "index i runs seed 1+i")
	require.Equal(t, first.Seeds, first.Runs)
	require.Positive(t, first.ShrinkRuns)
	require.LessOrEqual(t, first.ShrunkSteps, first.Steps)
	for index := 0; index < first.Seeds-1; index++ {
		finding, err := Rerun(options.Campaign, "toylock-buggy", options.Campaign.BaseSeed+uint64(index))
		require.NoError(t, err)
		require.True(t, finding.OK(), "seed %d before the detection passes", index+1)
	}
	seed, err := ParseSeedFile([]byte(first.ShrunkSeed))
	require.NoError(t, err, "the hunt's shrunk seed is a seed file")
	require.NotNil(t, seed.Provenance, "with provenance, so its replay can report drift")
	require.Equal(t, first.ShrunkChoices, Choices(seed.Spec.Decisions))
	replay, err := testCatalog.ReplaySpec(seed.Spec, false)
	require.NoError(t, err)
	require.False(t, replay.Finding.OK(), "the shrunk seed replays to a failure")
	require.Equal(t, seed.Expect.Class, replay.Finding.Class)
	second, err := Hunt(context.Background(), options)
	require.NoError(t, err)
	require.Equal(t, first.Seed, second.Seed)
	require.Equal(t, first.ShrunkChoices, second.ShrunkChoices, "the shrink is reproducible (run budget)")

	options.Campaign.Engines, options.SeedsMax = []string{"toylock"}, 50
	clean, err := Hunt(context.Background(), options)
	require.NoError(t, err)
	require.False(t, clean.Found)
	require.Equal(t, 50, clean.Seeds)
}

// TestExploreFindsTheToyBugWithFewestChoices: breadth first, the
// exhaustive mode's first counterexample on the planted-bug toy lock has
// the fewest choices of any failing execution, and is the same every run.
func TestExploreFindsTheToyBugWithFewestChoices(t *testing.T) {
	spec := mustEngine(t, "toylock-buggy").ExploreScenario()
	failingChoicesMin := -1
	options := ExploreOptions{Catalog: testCatalog, Spec: spec, ChoicesMax: 2, DecisionsMax: 16, OnExecution: func(list []uint32, finding Finding) {
		if !finding.OK() && (failingChoicesMin < 0 || Choices(list) < failingChoicesMin) {
			failingChoicesMin = Choices(list)
		}
	}}
	all, err := Explore(context.Background(), options)
	require.NoError(t, err)
	require.True(t, all.Found, "%+v", all)
	t.Logf("%d executions, first failure at %d with %d choices", all.Executions, all.FoundAt, Choices(all.Counterexample))
	require.Equal(t, failingChoicesMin, Choices(all.Counterexample))
	options.StopAtFirst, options.OnExecution = true, nil
	first, err := Explore(context.Background(), options)
	require.NoError(t, err)
	require.Equal(t, all.Counterexample, first.Counterexample)
	require.Equal(t, all.FoundAt, first.FoundAt)
	require.False(t, first.Complete)
}
