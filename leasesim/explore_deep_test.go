package leasesim

import (
	"encoding/json"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/stretchr/testify/require"
)

// TestExploreDeepPruningKeepsAMutant: on a real engine with a planted bug
// (statefile-excl-final-name: a crash between its create and its write
// leaves an empty final file), the deep explorer of three lease processes
// with one crash finds the bug with the state cache and the sleep sets as
// it does without them, every failure kind the unpruned exploration finds
// is found, the cache prunes, and the real engine passes the same pruned
// exploration.
func TestExploreDeepPruningKeepsAMutant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a mutant leasesim and explores three lease processes three times; skipped with -short")
	}
	args := []string{"explore", "--json", "--engine", "lease", "--procs", "3", "--crashes", "1", "--choices-max", "1",
		"--decisions-max", "100000", "--stop-at-first=false", "--progress", "0"}
	code, stdout, stderr := leasesim(args...)
	require.Equal(t, campaign.ExitOK, code, "the real engine passes: %s%s", stdout, stderr)
	var clean campaign.DeepResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &clean))
	require.True(t, clean.Complete)
	require.Positive(t, clean.HaltedCache)

	binary := mutantBuild(t, "statefile-excl-final-name", t.TempDir())
	var results [2]campaign.DeepResult
	for i, pruning := range []string{"false", "true"} {
		code, output := runBinary(t, binary, append(args, "--cache="+pruning, "--por="+pruning)...)
		require.NotEqual(t, campaign.ExitOK, code, output)
		require.NoError(t, json.Unmarshal([]byte(output), &results[i]), output)
		require.True(t, results[i].Found, output)
		require.True(t, results[i].Complete, output)
	}
	plain, pruned := results[0], results[1]
	t.Logf("plain: %d executions (%d steps), %d failing, first at %d (%v); pruned: %d executions (%d steps), %d failing, first at %d (%v), halted by the cache %d, by POR %d",
		plain.Executions, plain.Steps, plain.Failures, plain.FoundAt, plain.Finding, pruned.Executions, pruned.Steps, pruned.Failures,
		pruned.FoundAt, pruned.Finding, pruned.HaltedCache, pruned.HaltedPOR)
	require.Less(t, pruned.Steps, plain.Steps, "halted runs save steps")
	require.True(t, plain.Finding.Same(pruned.Finding), "the same kind of failure first")
	require.Positive(t, pruned.HaltedCache)
	require.LessOrEqual(t, pruned.Executions, plain.Executions)
	require.Equal(t, plain.Counterexample, pruned.Counterexample, "depth first, the first failure is the same list")
}
