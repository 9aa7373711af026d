package campaign

import (
	"context"
	"testing"

	"github.com/leasekit/leasekit/sim"
	"github.com/stretchr/testify/require"
)

// TestExploreCleanLeaseIsCompleteAndDeterministic enumerates every
// execution of the lease scenario with one crash point or scheduling
// choice in its first 150 decisions: the real engine passes all of them,
// and a second exploration counts exactly the same executions and states.
func TestExploreCleanLeaseIsCompleteAndDeterministic(t *testing.T) {
	options := ExploreOptions{Spec: ExploreScenario("lease"), ChoicesMax: 1, DecisionsMax: 150, ValuesMax: 4}
	first, err := Explore(context.Background(), options)
	require.NoError(t, err)
	t.Logf("%d executions, %d probes, %d final states, longest %d steps, %.1fs", first.Executions, first.Probes,
		first.FinalStates, first.StepsMax, first.Seconds)
	require.True(t, first.Complete)
	require.False(t, first.Found, "the real engine fails %v with %v", first.Finding, first.Counterexample)
	require.Greater(t, first.Executions, 100, "every position of 150 branches at least once")
	require.Equal(t, 1, first.ChoicesReached)
	second, err := Explore(context.Background(), options)
	require.NoError(t, err)
	first.Seconds, second.Seconds = 0, 0
	require.Equal(t, first, second)
}

// TestExploreEnumeratesEachListOnce checks the enumeration on the
// self-test engine: with two choices, every execution's list is distinct,
// has at most two choices, and replays to itself (no value past its
// position's alternatives); breadth first, choice counts never decrease; a
// run budget cuts the exploration short as incomplete.
func TestExploreEnumeratesEachListOnce(t *testing.T) {
	spec := ExploreScenario("selftest")
	seen := map[string]bool{}
	choicesLast := 0
	options := ExploreOptions{Spec: spec, ChoicesMax: 2, DecisionsMax: 8, OnExecution: func(list []uint32, _ Finding) {
		key := sim.FormatDecisions(list)
		require.False(t, seen[key], "list %s enumerated twice", key)
		seen[key] = true
		require.LessOrEqual(t, Choices(list), 2)
		require.GreaterOrEqual(t, Choices(list), choicesLast, "breadth first")
		choicesLast = Choices(list)
		replay := spec.clone()
		replay.Decisions = list
		result, _, _, err := Execute(replay, nil, false)
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
