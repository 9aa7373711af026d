package leasesim

import (
	"encoding/json"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/internal/require"
)

// TestExploreDeepPruningKeepsAMutant: on a real engine with a planted bug
// (statefile-excl-final-name: a crash between its create and its write
// leaves an empty final file), the deep explorer of two lease processes
// with one crash (two, not three, to keep the package's tests within go
// test's default timeout on a loaded machine) finds the bug with the state cache and the sleep sets as
// it does without them, every failure kind the unpruned exploration finds
// is found, the cache prunes, and the real engine passes the same pruned
// exploration; not branching on quiet crashes as well (--quiet-crashes)
// finds the same kind of failure first, in fewer executions.
func TestExploreDeepPruningKeepsAMutant(t *testing.T) {
	longtest.Require(t, "builds a mutant leasesim and explores two lease processes three times")
	args := []string{"explore", "--json", "--engine", "lease", "--procs", "2", "--crashes", "1", "--choices-max", "1",
		"--decisions-max", "100000", "--stop-at-first=false", "--progress", "0"}
	code, stdout, stderr := leasesim(append(args, "--quiet-crashes=false")...)
	require.Equal(t, campaign.ExitOK, code, "the real engine passes: %s%s", stdout, stderr)
	var clean campaign.DeepResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &clean))
	require.True(t, clean.Complete)
	require.Positive(t, clean.HaltedCache)

	binary := mutantBuild(t, "statefile-excl-final-name", t.TempDir())
	var results [3]campaign.DeepResult
	for i, pruning := range [][2]string{{"false", "false"}, {"true", "false"}, {"true", "true"}} {
		code, output := runBinary(t, binary, append(args, "--cache="+pruning[0], "--por="+pruning[0], "--quiet-crashes="+pruning[1])...)
		require.NotEqual(t, campaign.ExitOK, code, output)
		require.NoError(t, json.Unmarshal([]byte(output), &results[i]), output)
		require.True(t, results[i].Found, output)
		require.True(t, results[i].Complete, output)
	}
	plain, pruned, quiet := results[0], results[1], results[2]
	t.Logf("pruned, quiet crashes skipped: %d executions, %d failing, first at %d (%v), %d crash points skipped",
		quiet.Executions, quiet.Failures, quiet.FoundAt, quiet.Finding, quiet.SkippedQuiet)
	require.True(t, plain.Finding.Same(quiet.Finding), "skipping quiet crashes finds the same kind of failure first")
	require.Positive(t, quiet.SkippedQuiet)
	require.Less(t, quiet.Executions, pruned.Executions)
	t.Logf("plain: %d executions (%d steps), %d failing, first at %d (%v); pruned: %d executions (%d steps), %d failing, first at %d (%v), halted by the cache %d, by POR %d",
		plain.Executions, plain.Steps, plain.Failures, plain.FoundAt, plain.Finding, pruned.Executions, pruned.Steps, pruned.Failures,
		pruned.FoundAt, pruned.Finding, pruned.HaltedCache, pruned.HaltedPOR)
	require.Less(t, pruned.Steps, plain.Steps, "halted runs save steps")
	require.True(t, plain.Finding.Same(pruned.Finding), "the same kind of failure first")
	require.Positive(t, pruned.HaltedCache)
	require.LessOrEqual(t, pruned.Executions, plain.Executions)
	require.Equal(t, plain.Counterexample, pruned.Counterexample, "depth first, the first failure is the same list")
}

// TestExploreDeepFlags: --procs and --crashes select the deep explorer (its
// JSON is a DeepResult, complete, keyed for the self-test engine); a bad
// --schedule and an engine without a process knob are usage errors; the
// text report names the bound's end and the pruning.
func TestExploreDeepFlags(t *testing.T) {
	code, stdout, stderr := leasesim("explore", "--json", "--engine", "selftest", "--procs", "3", "--crashes", "1", "--progress", "0")
	require.Equal(t, campaign.ExitOK, code, stderr)
	var result campaign.DeepResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &result))
	require.True(t, result.Complete)
	require.True(t, result.Keyed)
	require.Equal(t, 1, result.ChoicesReached)
	require.Equal(t, 1, result.FaultsReached)

	code, stdout, _ = leasesim("explore", "--engine", "selftest", "--crashes", "0", "--choices-max", "2", "--progress", "0")
	require.Equal(t, campaign.ExitOK, code)
	require.Contains(t, stdout, "complete (every execution within the bounds run or pruned)")
	require.Contains(t, stdout, "pruned by the cache")
	code, _, stderr = leasesim("explore", "--engine", "selftest", "--crashes", "0", "--schedule", "sideways")
	require.Equal(t, campaign.ExitUsage, code, stderr)
	code, _, stderr = leasesim("explore", "--engine", "dirlease", "--procs", "3")
	require.Equal(t, campaign.ExitUsage, code, stderr)
	require.Equal(t, []string{"--engine", "lease", "-x=1"}, withoutFlag([]string{"--mutant", "m", "--engine", "lease", "--mutant=n", "-x=1"}, "mutant"))
}
