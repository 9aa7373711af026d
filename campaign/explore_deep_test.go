package campaign

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// deepToySpec is the buggy toy lock (an empty lock file is broken, which
// races with an owner between its create and its write) with three
// processes of two attempts and crash points.
func deepToySpec(t *testing.T, engine string) Spec {
	spec := mustEngine(t, engine).ExploreScenario()
	spec.Params = Params{"processes": 3, "attempts": 2}
	return spec
}

// deepClasses explores and returns the result and the failure kinds found.
func deepClasses(t *testing.T, o DeepOptions) (DeepResult, []string) {
	t.Helper()
	kinds := map[string]bool{}
	o.OnExecution = func(_ []uint32, f Finding) {
		if !f.OK() {
			kinds[f.String()] = true
		}
	}
	result, err := ExploreDeep(context.Background(), o)
	require.NoError(t, err)
	return result, slices.Sorted(maps.Keys(kinds))
}

// TestExploreDeepPruningLosesNoBug: with the cache and the sleep sets, the
// deep explorer finds every kind of failure the unpruned exploration of the
// same bounds finds, runs fewer executions, and both prunings fire; both
// explorations are complete, and the correct toy passes them.
func TestExploreDeepPruningLosesNoBug(t *testing.T) {
	base := DeepOptions{Catalog: testCatalog, Spec: deepToySpec(t, "toylock-buggy"), ChoicesMax: 2, FaultsMax: 1, DecisionsMax: 1000}
	plain, plainKinds := deepClasses(t, base)
	pruned := base
	pruned.Cache, pruned.POR = true, true
	reduced, reducedKinds := deepClasses(t, pruned)
	t.Logf("plain: %d executions, kinds %v; pruned: %d executions (halted: cache %d, por %d; por skipped %d), %d states, kinds %v",
		plain.Executions, plainKinds, reduced.Executions, reduced.HaltedCache, reduced.HaltedPOR, reduced.SkippedPOR, reduced.States, reducedKinds)
	require.True(t, plain.Complete)
	require.True(t, reduced.Complete)
	require.NotEmpty(t, plainKinds, "the planted race is within the bounds")
	require.Subset(t, reducedKinds, plainKinds, "pruning lost a kind of failure")
	require.Less(t, reduced.Executions, plain.Executions)
	require.Positive(t, reduced.HaltedCache, "the cache pruned nothing")
	require.Positive(t, reduced.HaltedPOR+reduced.SkippedPOR, "the sleep sets pruned nothing")
	require.True(t, reduced.Keyed)

	for _, cache := range []bool{false, true} {
		clean := pruned
		clean.Spec, clean.Cache = deepToySpec(t, "toylock"), cache
		result, err := ExploreDeep(context.Background(), clean)
		require.NoError(t, err)
		require.False(t, result.Found, "the correct toy fails: %v %v", result.Finding, result.Counterexample)
		require.True(t, result.Complete)
		require.Zero(t, result.Mismatches)
	}
}

// TestExploreDeepQuietCrashesLoseNoBug: not branching on a crash right
// after the same process's quiet step finds every kind of failure the
// exploration of every crash point finds, with fewer executions.
func TestExploreDeepQuietCrashesLoseNoBug(t *testing.T) {
	base := DeepOptions{Catalog: testCatalog, Spec: deepToySpec(t, "toylock-buggy"), ChoicesMax: 2, FaultsMax: 1, DecisionsMax: 1000}
	every, everyKinds := deepClasses(t, base)
	quiet := base
	quiet.QuietCrashes = true
	reduced, reducedKinds := deepClasses(t, quiet)
	t.Logf("every crash point: %d executions, kinds %v; quiet crashes skipped: %d executions (%d crash points skipped), kinds %v",
		every.Executions, everyKinds, reduced.Executions, reduced.SkippedQuiet, reducedKinds)
	require.True(t, every.Complete)
	require.True(t, reduced.Complete)
	require.Contains(t, everyKinds, "violation (invariant mutual-exclusion)")
	require.Equal(t, everyKinds, reducedKinds, "skipping quiet crashes lost or made a kind of failure")
	require.Positive(t, reduced.SkippedQuiet)
	require.Less(t, reduced.Executions, every.Executions)
}

// TestExploreDeepWrongIndependenceMissesTheBug mutation-tests the
// partial-order reduction: with a planted wrong rule (any two steps of
// different processes commute: the path check, the history and ledger
// check and the visible kinds all dropped) the sleep sets prune the
// interleaving of the planted race, and the bug is no longer found; the
// correct rule finds it under the same bounds. (The toy's steps all touch
// /locks or /locks/lock, so a subtler path-only mistake changes nothing
// here: TestIndependent pins the path rules.)
func TestExploreDeepWrongIndependenceMissesTheBug(t *testing.T) {
	o := DeepOptions{Catalog: testCatalog, Spec: deepToySpec(t, "toylock-buggy"), ChoicesMax: 2, FaultsMax: 0, DecisionsMax: 1000, POR: true}
	right, err := ExploreDeep(context.Background(), o)
	require.NoError(t, err)
	require.True(t, right.Found, "the correct rule finds the race")
	require.True(t, right.Complete)
	o.Independent = func(a, b Footprint) bool { return a.Proc != b.Proc }
	wrong, err := ExploreDeep(context.Background(), o)
	require.NoError(t, err)
	t.Logf("right rule: found at %d of %d executions (%d failing); wrong rule: %d executions, found=%v", right.FoundAt,
		right.Executions, right.Failures, wrong.Executions, wrong.Found)
	require.True(t, wrong.Complete)
	require.False(t, wrong.Found, "with every step independent the race should be pruned away")
}

// TestIndependent pins the rule's table.
func TestIndependent(t *testing.T) {
	read := func(proc int, path string) Footprint { return Footprint{Proc: proc, Kind: "stat", Path: path} }
	write := func(proc int, path string) Footprint {
		return Footprint{Proc: proc, Kind: "openfile", Path: path, Write: true}
	}
	for _, c := range []struct {
		name string
		a, b Footprint
		want bool
	}{
		{"two reads of one path", read(1, "/a/x"), read(2, "/a/x"), true},
		{"a read and a write of one path", read(1, "/a/x"), write(2, "/a/x"), false},
		{"writes of siblings", write(1, "/a/x"), write(2, "/a/y"), true},
		{"a write under a directory read", read(1, "/a"), write(2, "/a/x"), false},
		{"a write and a read of a prefix-named sibling", write(1, "/a/x"), read(2, "/a/xy"), true},
		{"one process", read(1, "/a"), read(1, "/b"), false},
		{"a visible step", Footprint{Proc: 1, Kind: "stat", Path: "/a", Visible: true}, read(2, "/b"), false},
		{"a wake and a write", Footprint{Proc: 1, Kind: "wake"}, write(2, "/a"), true},
		{"two history steps", Footprint{Proc: 1, Kind: "stat", Path: "/a", History: true}, Footprint{Proc: 2, Kind: "stat", Path: "/b", History: true}, false},
		{"a history step and a ledger step", Footprint{Proc: 1, Kind: "stat", Path: "/a", History: true}, Footprint{Proc: 2, Kind: "stat", Path: "/b", Ledger: true}, false},
		{"a history step and a quiet one", Footprint{Proc: 1, Kind: "stat", Path: "/a", History: true}, read(2, "/b"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, Independent(c.a, c.b))
			require.Equal(t, c.want, Independent(c.b, c.a), "symmetric")
		})
	}
}
