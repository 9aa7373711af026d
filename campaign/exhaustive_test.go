package campaign

import (
	"context"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

// TestExploreEnumeratesEachListOnce checks the enumeration on the
// self-test engine: with two choices, every execution's list is distinct,
// has at most two choices, and replays to itself (no value past its
// position's alternatives); breadth first, choice counts never decrease; a
// run budget cuts the exploration short as incomplete.
func TestExploreEnumeratesEachListOnce(t *testing.T) {
	spec := mustEngine(t, "selftest").ExploreScenario()
	seen := map[string]bool{}
	choicesLast := 0
	options := ExploreOptions{Catalog: testCatalog, Spec: spec, ChoicesMax: 2, DecisionsMax: 8, OnExecution: func(list []uint32, _ Finding) {
		key := sim.FormatDecisions(list)
		require.False(t, seen[key], "list %s enumerated twice", key)
		seen[key] = true
		require.LessOrEqual(t, Choices(list), 2)
		require.GreaterOrEqual(t, Choices(list), choicesLast, "breadth first")
		choicesLast = Choices(list)
		replay := spec.clone()
		replay.Decisions = list
		result, _, _, err := testCatalog.Execute(replay, nil, false)
		require.NoError(t, err)
		require.Equal(t, list, trimZeros(result.Decisions[:min(len(result.Decisions), len(list))]), "list replays to itself")
	}}
	result, err := Explore(context.Background(), options)
	require.NoError(t, err)
	require.True(t, result.Complete)
	require.Equal(t, 2, result.ChoicesReached)
	require.Len(t, seen, result.Executions)
	options.RunsMax, options.OnExecution = 5, nil
	cut, err := Explore(context.Background(), options)
	require.NoError(t, err)
	require.False(t, cut.Complete)
	require.LessOrEqual(t, cut.Executions+cut.Probes, 5)
}
