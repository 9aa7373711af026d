package leasesim

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/internal/mutant"
	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/workload"
)

// command is cmd/leasesim's: leasekit's catalog.
var command = &Command{Catalog: workload.Catalog()}

func leasesim(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := command.Run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestUsageErrorsExitTwo(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "usage: leasesim"},
		{[]string{"fly"}, `unknown command "fly"`},
		{[]string{"run", "--engine", "nope", "--seeds", "1"}, `unknown engine "nope"; known: `},
		{[]string{"run", "--shard", "2/2", "--engine", "selftest"}, `--shard "2/2"`},
		{[]string{"run", "--bogus"}, "flag provided but not defined"},
		{[]string{"run", "--engine", "selftest", "--faults", "meteor=1"}, "--faults"},
		{[]string{"replay", "no/such/file.seed"}, "no such file"},
		{[]string{"replay", "--engine", "selftest", "notaseed"}, "neither a seed file nor a seed number"},
		{[]string{"merge"}, "usage: leasesim merge"},
	}
	for _, c := range cases {
		code, _, stderr := leasesim(c.args...)
		require.Equal(t, campaign.ExitUsage, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want, "%v", c.args)
	}
}

func TestRunJSONShardsMergeAndSummary(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, shard := range []string{"0/2", "1/2"} {
		code, stdout, stderr := leasesim("run", "--engine", "selftest", "--seeds", "40", "--shard", shard, "--json", "--workers", "2")
		require.Equal(t, campaign.ExitOK, code, stderr)
		var report campaign.Report
		require.NoError(t, json.Unmarshal([]byte(stdout), &report))
		require.Equal(t, 20, report.Runs)
		path := filepath.Join(dir, strings.ReplaceAll(shard, "/", "-")+".json")
		require.NoError(t, os.WriteFile(path, []byte(stdout), 0o644))
		paths = append(paths, path)
	}
	code, stdout, stderr := leasesim(append([]string{"merge"}, paths...)...)
	require.Equal(t, campaign.ExitOK, code, stderr)
	require.Contains(t, stdout, "leasesim: 40 runs (ok 40)")
	require.Contains(t, stdout, "shards 0/2,1/2")
	require.Regexp(t, `probes: \d+ of \d+ declared fired`, stdout)
	require.NotContains(t, stdout, "\r", "no progress line off a terminal")
}

func TestReplaySeedNumberIsBitExact(t *testing.T) {
	code, first, stderr := leasesim("replay", "--engine", "selftest", "12")
	require.Equal(t, campaign.ExitOK, code, stderr)
	_, second, _ := leasesim("replay", "--engine", "selftest", "12")
	require.Equal(t, first, second)
	require.Contains(t, first, "proc=client-0 op=openfile")
	require.Contains(t, first, "replayed twice, traced and untraced: the same run")
}

// mutantOverlay writes the mutated copy of mutants/<name>'s file into dir
// (internal/mutant: the old block must occur exactly once, so a mutant never
// silently tests stale code) and returns the go build -overlay JSON's path.
func mutantOverlay(t *testing.T, root, name, dir string) string {
	t.Helper()
	m, err := mutant.Load(root, name)
	require.NoError(t, err)
	path, err := m.WriteOverlay(root, dir)
	require.NoError(t, err)
	return path
}

// mutantBuild builds leasesim with a mutant into dir and returns the binary.
func mutantBuild(t *testing.T, name, dir string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	overlay := mutantOverlay(t, root, name, dir)
	return buildWithOverlay(t, root, overlay, filepath.Join(dir, "leasesim-"+name))
}

func runBinary(t *testing.T, binary string, args ...string) (int, string) {
	t.Helper()
	command := exec.Command(binary, args...)
	output, err := command.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), string(output)
	}
	require.NoError(t, err)
	return 0, string(output)
}

// TestPlantedBugIsFoundShrunkAndReplayed is the must-show: leasesim built
// with the mutant selftest-breakempty finds the race, shrinks it to a seed
// file of at most 15 choices, and the file replays identically twice and
// reproduces through `leasesim replay`; the unmutated build passes it.
func TestPlantedBugIsFoundShrunkAndReplayed(t *testing.T) {
	longtest.Require(t, "builds a mutant leasesim (about 10 s on an empty build cache)")
	dir := t.TempDir()
	binary := mutantBuild(t, "selftest-breakempty", dir)
	seeds := filepath.Join(dir, "seeds")
	code, output := runBinary(t, binary, "run", "--engine", "selftest", "--seeds", "300", "--out", seeds)
	require.Equal(t, campaign.ExitViolation, code, output)
	require.Contains(t, output, "invariant mutual-exclusion")
	replayLine := regexp.MustCompile(`(?m)^  go run ./cmd/leasesim replay (\S+)$`).FindStringSubmatch(output)
	require.NotNil(t, replayLine, "the output ends with a paste-ready replay command:\n%s", output)
	path := replayLine[1]
	require.True(t, strings.HasPrefix(path, seeds+"/selftest/violation-"), path)
	t.Logf("campaign output:\n%s", output)

	file, err := campaign.ReadSeedFile(path)
	require.NoError(t, err)
	require.Equal(t, "invariant mutual-exclusion", file.Expect.Class)
	require.LessOrEqual(t, campaign.Choices(file.Spec.Decisions), 15, "shrunk choices")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	t.Logf("seed file:\n%s", data)

	code1, replay1 := runBinary(t, binary, "replay", path)
	code2, replay2 := runBinary(t, binary, "replay", path)
	require.Equal(t, campaign.ExitViolation, code1, replay1)
	require.Equal(t, code1, code2)
	require.Equal(t, replay1, replay2, "two replays print the same trace")
	require.Contains(t, replay1, "reproduces the recorded finding: violation (invariant mutual-exclusion)")

	// Without the mutant the same file passes: the bug is not in the real build.
	code, stdout, stderr := leasesim("replay", "--quiet", path)
	require.Equal(t, campaign.ExitOK, code, stdout+stderr)
	require.Contains(t, stdout, "DIFFERS from the recorded finding")

	// The checked-in mutant seed still reproduces under the mutant.
	checked, err := filepath.Glob("../campaign/testdata/mutant-seeds/selftest-breakempty/*/*.seed")
	require.NoError(t, err)
	require.NotEmpty(t, checked)
	for _, seed := range checked {
		code, output := runBinary(t, binary, "replay", "--quiet", seed)
		require.Equal(t, campaign.ExitViolation, code, output)
		require.Contains(t, output, "\nno drift: ", "%s drifted under its mutant: go run -overlay OVERLAY.json ./cmd/leasesim reseed %s", seed, seed)
	}
}

// TestLeaseMutantThroughLeasesim runs the lease engine's exe-path mutant
// (see mutants/README.md) through leasesim end to end: found, shrunk, written,
// replayed identically, reproduced. Opt-in (about a minute on 2 cores): the
// workload's TestEngineMutants already proves the campaign finds it.
func TestLeaseMutantThroughLeasesim(t *testing.T) {
	if os.Getenv("LEASEKIT_LEASE_MUTANT") == "" {
		t.Skip("set LEASEKIT_LEASE_MUTANT=1 to run the lease exe-path mutant through leasesim (about a minute)")
	}
	dir := t.TempDir()
	binary := mutantBuild(t, "exe-path", dir)
	seeds := filepath.Join(dir, "seeds")
	code, output := runBinary(t, binary, "run", "--engine", "lease", "--seeds", "400", "--shrink-max", "1",
		"--shrink-time", "0", "--out", seeds)
	require.Equal(t, campaign.ExitViolation, code, output)
	replayLine := regexp.MustCompile(`(?m)^  go run ./cmd/leasesim replay (\S+)$`).FindStringSubmatch(output)
	require.NotNil(t, replayLine, output)
	t.Logf("campaign output:\n%s", output)
	file, err := campaign.ReadSeedFile(replayLine[1])
	require.NoError(t, err)
	t.Logf("shrunk: %d decisions, %d choices; %v", len(file.Spec.Decisions), campaign.Choices(file.Spec.Decisions), file.Summary)
	require.LessOrEqual(t, campaign.Choices(file.Spec.Decisions), 15, "shrunk choices")
	code1, replay1 := runBinary(t, binary, "replay", replayLine[1])
	code2, replay2 := runBinary(t, binary, "replay", replayLine[1])
	require.Equal(t, campaign.ExitViolation, code1, replay1)
	require.Equal(t, code1, code2)
	require.Equal(t, replay1, replay2)
	require.Contains(t, replay1, "reproduces the recorded finding")
}

// TestRunResumesFromAMergedReport: a nightly run continues where the last
// merged report stopped, and refuses one of another campaign.
func TestRunResumesFromAMergedReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	var shards []string
	for _, shard := range []string{"0/2", "1/2"} {
		code, stdout, stderr := leasesim("run", "--engine", "selftest", "--seeds", "30", "--shard", shard, "--json", "--workers", "1")
		require.Equal(t, campaign.ExitOK, code, stderr)
		shards = append(shards, write("night1-"+strings.ReplaceAll(shard, "/", "-")+".json", stdout))
	}
	code, stdout, stderr := leasesim(append([]string{"merge", "--json"}, shards...)...)
	require.Equal(t, campaign.ExitOK, code, stderr)
	night1 := write("night1.json", stdout)

	code, stdout, stderr = leasesim("run", "--engine", "selftest", "--seeds", "20", "--json", "--workers", "1", "--resume", night1)
	require.Equal(t, campaign.ExitOK, code, stderr)
	var night2 campaign.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &night2))
	require.Equal(t, 30, night2.FirstIndex)
	require.Equal(t, 50, night2.NextIndex)
	require.Equal(t, 20, night2.Runs)

	// The same 20 indices as the tail of one 50-index campaign.
	code, stdout, stderr = leasesim("run", "--engine", "selftest", "--seeds", "50", "--json", "--workers", "1")
	require.Equal(t, campaign.ExitOK, code, stderr)
	var whole campaign.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &whole))
	var first campaign.Report
	data, err := os.ReadFile(night1)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &first))
	require.Equal(t, whole.Steps, first.Steps+night2.Steps)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--faults", "none"}, "another campaign"},
		{[]string{"--param", "processes=2"}, "another campaign"},
		{[]string{"--base-seed", "2"}, "another campaign"},
		{[]string{"--resume", shards[0]}, "merge every shard's report first"},
		{[]string{"--resume", filepath.Join(dir, "missing.json")}, "no such file"},
	} {
		args := append([]string{"run", "--engine", "selftest", "--seeds", "5", "--resume", night1}, c.args...)
		code, _, stderr := leasesim(args...)
		require.Equal(t, campaign.ExitUsage, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want, "%v", c.args)
	}
}
