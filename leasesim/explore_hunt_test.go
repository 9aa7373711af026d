package leasesim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/internal/require"
)

// TestExploreHuntFlags: `hunt --search explore` explores the engine's
// scenario with the --explore flags and, on the correct self-test lock,
// exhausts the bounds and says so; an engine without an explore scenario,
// malformed flags and a process count the engine has no knob for are usage
// errors naming the cause; the plan explores every engine's bound 1 before
// any bound 2.
func TestExploreHuntFlags(t *testing.T) {
	code, stdout, stderr := leasesim("hunt", "--json", "--search", "explore", "--engine", "selftest", "--explore", "--procs 2 --crashes 0 --choices-max 1")
	require.Equal(t, campaign.ExitViolation, code, "nothing found: %s%s", stdout, stderr)
	var hunt campaign.HuntResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &hunt), stdout)
	require.False(t, hunt.Found)
	require.Equal(t, "bound exhausted", hunt.Stopped)
	require.Equal(t, "explore", hunt.Search)
	require.Positive(t, hunt.Runs)

	bare := campaign.SelfTestEngine()
	bare.Name, bare.Explore = "bare", nil
	var out, errs bytes.Buffer
	code = (&Command{Catalog: campaign.NewCatalog(bare)}).Run([]string{"hunt", "--search", "explore", "--engine", "bare"}, &out, &errs)
	require.Equal(t, campaign.ExitUsage, code, errs.String())
	require.Contains(t, errs.String(), "engine bare has no explore scenario")

	for _, c := range []struct{ engine, flags, want string }{
		{"selftest", "--procs two", "invalid value"},
		{"selftest", "--choices-max 0", "at least 1"},
		{"selftest", "--crashes 1 stray", "stray argument"},
		{"selftest", "--schedule sideways", "sticky or first"},
		{"dirlease", "--procs 3", "no process-count knob"},
	} {
		code, _, stderr := leasesim("hunt", "--search", "explore", "--engine", c.engine, "--explore", c.flags)
		require.Equal(t, campaign.ExitUsage, code, c.flags)
		require.Contains(t, stderr, c.want, c.flags)
	}

	plan, err := explorePlan(command.Catalog, []string{"dirlease", "lease"}, "")
	require.NoError(t, err)
	var order []string
	for _, deep := range plan {
		order = append(order, deep.Spec.Engine+":"+string(rune('0'+deep.ChoicesMax)))
	}
	require.Equal(t, []string{"dirlease:1", "lease:1", "dirlease:2", "lease:2"}, order)
	require.Equal(t, 3, plan[1].Spec.Params["procs_per_host"], "lease's default: three processes")
	require.Equal(t, 1, plan[1].FaultsMax)
	require.True(t, plan[1].Sticky && plan[1].Cache && plan[1].POR)
}

// TestExploreHuntThroughAMutantBuild: leasesim built with
// selftest-breakempty finds the race with the explore search, shrinks it,
// and the detection's input, as a seed file, replays to the same failure
// under the mutant and passes on the real build.
func TestExploreHuntThroughAMutantBuild(t *testing.T) {
	longtest.Require(t, "builds a mutant leasesim and hunts through it (about 10 s)")
	dir := t.TempDir()
	binary := mutantBuild(t, "selftest-breakempty", dir)
	code, output := runBinary(t, binary, "hunt", "--json", "--search", "explore", "--engine", "selftest", "--shrink-time", "5s")
	require.Equal(t, campaign.ExitOK, code, output)
	var hunt campaign.HuntResult
	require.NoError(t, json.Unmarshal([]byte(output), &hunt), output)
	require.True(t, hunt.Found)
	require.Equal(t, "invariant mutual-exclusion", hunt.Class)
	require.Positive(t, hunt.ShrinkRuns)
	t.Logf("found at execution %d in %.2fs; shrunk to %d choices", hunt.Runs, hunt.Seconds, hunt.ShrunkChoices)
	path := filepath.Join(dir, "explore.seed")
	require.NoError(t, os.WriteFile(path, []byte(hunt.Input), 0o644))
	code, output = runBinary(t, binary, "replay", "--quiet", path)
	require.Equal(t, campaign.ExitViolation, code, output)
	require.Contains(t, output, "reproduces the recorded finding: violation (invariant mutual-exclusion)")
	code, stdout, stderr := leasesim("replay", "--quiet", path)
	require.Equal(t, campaign.ExitOK, code, stdout+stderr)
	require.Contains(t, stdout, "DIFFERS from the recorded finding")
}
