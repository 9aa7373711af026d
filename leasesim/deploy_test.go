package leasesim

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/campaign"
)

// helperEnv makes the test binary act as leasesim (TestMain): the fake go
// command of the CI file tests runs it for `go run PACKAGE ARGS...`.
const helperEnv = "LEASEKIT_LEASESIM_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(command.Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// fakeGo writes a `go` that accepts only `go run PACKAGE ...`, logs the
// arguments to dir/go.log, and runs this test binary as leasesim; it returns
// the directory to put first on PATH.
func fakeGo(t *testing.T, pkg string) (bin, log string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	bin = t.TempDir()
	log = filepath.Join(bin, "go.log")
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" != run ] || [ "$2" != %q ]; then echo "fake go: want go run %s, got go $*" >&2; exit 99; fi
shift 2
echo "$*" >> %q
%s=1 exec %q "$@"
`, pkg, pkg, log, helperEnv, self)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755))
	return bin, log
}

// runScript runs a CI script (shell ends in -c) in dir with env (plus PATH
// with bin first) and returns its exit code and its output (stdout and
// stderr, as a CI log shows them).
func runScript(t *testing.T, shell []string, script, dir, bin string, env map[string]string) (int, string) {
	t.Helper()
	command := exec.Command(shell[0], append(shell[1:], script)...)
	command.Dir = dir
	command.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GOFLAGS=" + os.Getenv("GOFLAGS")}
	for k, v := range env {
		command.Env = append(command.Env, k+"="+v)
	}
	var stderr strings.Builder
	command.Stdout, command.Stderr = &stderr, &stderr
	err := command.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), stderr.String()
	}
	require.NoError(t, err, stderr.String())
	return 0, stderr.String()
}

func readYAMLFile(t *testing.T, path string) []any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	docs, err := readYAML(string(data))
	require.NoError(t, err, path)
	return docs
}

// at walks a parsed document by keys (maps) and indices (sequences).
func at(t *testing.T, node any, path ...any) any {
	t.Helper()
	for _, key := range path {
		switch k := key.(type) {
		case string:
			m, ok := node.(map[string]any)
			require.True(t, ok, "%v: not a mapping at %q", path, k)
			require.Contains(t, m, k, "%v", path)
			node = m[k]
		case int:
			s, ok := node.([]any)
			require.True(t, ok && k < len(s), "%v: no item %d", path, k)
			node = s[k]
		}
	}
	return node
}

// named returns the item of a sequence whose "name" is name.
func named(t *testing.T, items any, name string) map[string]any {
	t.Helper()
	for _, item := range items.([]any) {
		if m, ok := item.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	require.Failf(t, "no item named", "%q", name)
	return nil
}

// containerEnv returns a Kubernetes container's env as a map.
func containerEnv(t *testing.T, container map[string]any) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, item := range at(t, container, "env").([]any) {
		m := item.(map[string]any)
		env[m["name"].(string)] = m["value"].(string)
	}
	return env
}

func readReportFile(t *testing.T, path string) *campaign.Report {
	t.Helper()
	report, err := readReport(path)
	require.NoError(t, err)
	return report
}

// TestKubernetesJobIndexAndCompletionsReachShard runs the Indexed Job's
// container script once per completion index with JOB_COMPLETION_INDEX set as
// Kubernetes sets it: every pod runs `--shard i/n` with n = completions, the
// merge Job's script merges every shard, and a second run resumes from it.
func TestKubernetesJobIndexAndCompletionsReachShard(t *testing.T) {
	job := readYAMLFile(t, "../deploy/k8s/campaign-job.yaml")[0]
	require.Equal(t, "Job", at(t, job, "kind"))
	require.Equal(t, "Indexed", at(t, job, "spec", "completionMode"))
	completions, err := strconv.Atoi(at(t, job, "spec", "completions").(string))
	require.NoError(t, err)
	require.Greater(t, completions, 1)
	require.Equal(t, at(t, job, "spec", "completions"), at(t, job, "spec", "parallelism"), "every shard at once")
	container := named(t, at(t, job, "spec", "template", "spec", "containers"), "leasesim")
	require.Equal(t, "leasesim", at(t, job, "spec", "podFailurePolicy", "rules", 0, "onExitCodes", "containerName"))
	env := containerEnv(t, container)
	require.Equal(t, strconv.Itoa(completions), env["SHARDS"], "SHARDS must equal spec.completions")
	require.Equal(t, []any{"/bin/sh", "-c"}, at(t, container, "command"))
	script := at(t, container, "args", 0).(string)
	mount := named(t, at(t, container, "volumeMounts"), "results")
	require.Equal(t, env["RESULTS"], mount["mountPath"], "the results volume is where the script writes")

	merge := readYAMLFile(t, "../deploy/k8s/campaign-merge-job.yaml")[0]
	mergeContainer := named(t, at(t, merge, "spec", "template", "spec", "containers"), "merge")
	mergeEnv := containerEnv(t, mergeContainer)
	require.Equal(t, env["SHARDS"], mergeEnv["SHARDS"])
	require.Equal(t, env["RESULTS"], mergeEnv["RESULTS"])
	pvc := readYAMLFile(t, "../deploy/k8s/results-pvc.yaml")[0]
	claim := at(t, named(t, at(t, job, "spec", "template", "spec", "volumes"), "results"), "persistentVolumeClaim", "claimName")
	require.Equal(t, at(t, pvc, "metadata", "name"), claim)

	bin, log := fakeGo(t, env["LEASESIM"])
	results := t.TempDir()
	env["RESULTS"], env["SEEDS"], env["DURATION"] = results, "12", "5m"
	mergeEnv["RESULTS"] = results
	for night := range 2 {
		require.NoError(t, os.WriteFile(log, nil, 0o644))
		for index := range completions {
			env["JOB_COMPLETION_INDEX"] = strconv.Itoa(index)
			code, stderr := runScript(t, []string{"/bin/sh", "-c"}, script, t.TempDir(), bin, env)
			require.Equal(t, campaign.ExitOK, code, stderr)
		}
		data, err := os.ReadFile(log)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.Len(t, lines, completions, "one leasesim run per pod")
		for index, line := range lines {
			require.Contains(t, line, fmt.Sprintf("--shard %d/%d ", index, completions))
			require.Equal(t, night > 0, strings.Contains(line, "--resume "+results+"/merged.json"), line)
		}
		code, stderr := runScript(t, []string{"/bin/sh", "-c"}, at(t, mergeContainer, "args", 0).(string), t.TempDir(), bin, mergeEnv)
		require.Equal(t, campaign.ExitOK, code, stderr)
		merged := readReportFile(t, filepath.Join(results, "merged.json"))
		require.Len(t, merged.Shards, completions)
		require.Equal(t, 12*night, merged.FirstIndex, "night %d", night)
		require.Equal(t, 12*(night+1), merged.NextIndex)
	}
	kept, err := filepath.Glob(filepath.Join(results, "merged.*.json"))
	require.NoError(t, err)
	require.Len(t, kept, 1, "the first night's merged report is kept")
}

// TestCampaignWorkflowShardsMergesAndResumes runs the workflow's shard and
// merge scripts as GitHub Actions would (bash -eo pipefail, one checkout per
// job, artifacts copied between them): three nights, the second resuming
// from the first's merged report, the third starting over because the kept
// report is of another campaign.
func TestCampaignWorkflowShardsMergesAndResumes(t *testing.T) {
	workflow := readYAMLFile(t, "../.github/workflows/campaign.yml")[0]
	env := map[string]string{}
	for k, v := range at(t, workflow, "env").(map[string]any) {
		env[k] = v.(string)
	}
	shards, err := strconv.Atoi(env["SHARDS"])
	require.NoError(t, err)
	matrix := at(t, workflow, "jobs", "campaign", "strategy", "matrix", "shard").([]any)
	require.Len(t, matrix, shards, "SHARDS is the matrix's length")
	for i, shard := range matrix {
		require.Equal(t, strconv.Itoa(i), shard)
	}
	shardSteps := at(t, workflow, "jobs", "campaign", "steps")
	mergeSteps := at(t, workflow, "jobs", "merge", "steps")
	state := "campaign-state/merged.json"
	require.Equal(t, state, at(t, named(t, shardSteps, "the last merged report"), "with", "path"))
	require.Equal(t, state, at(t, named(t, mergeSteps, "keep the merged report for the next run to resume"), "with", "path"))
	require.Equal(t, "shard/", at(t, named(t, shardSteps, "upload the report and seed files"), "with", "path"))
	shardScript := named(t, shardSteps, "run shard ${{ matrix.shard }}")["run"].(string)
	mergeScript := named(t, mergeSteps, "merge the shards")["run"].(string)

	bin, log := fakeGo(t, env["LEASESIM"])
	env["SEEDS"], env["DURATION"] = "10", "5m"
	bash := []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"}
	night := func(kept *campaign.Report) (*campaign.Report, string) {
		t.Helper()
		require.NoError(t, os.WriteFile(log, nil, 0o644))
		mergeDir := t.TempDir()
		var warnings strings.Builder
		for shard := range shards {
			checkout := t.TempDir()
			if kept != nil {
				require.NoError(t, os.MkdirAll(filepath.Join(checkout, "campaign-state"), 0o755))
				data, err := json.Marshal(kept)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(checkout, state), data, 0o644))
			}
			env["SHARD"] = strconv.Itoa(shard)
			code, stderr := runScript(t, bash, shardScript, checkout, bin, env)
			require.Equal(t, campaign.ExitOK, code, stderr)
			warnings.WriteString(stderr)
			require.NoError(t, os.MkdirAll(filepath.Join(mergeDir, "shards"), 0o755))
			require.NoError(t, os.Rename(filepath.Join(checkout, "shard"), filepath.Join(mergeDir, "shards", fmt.Sprintf("shard-%d", shard))))
		}
		output, summary := filepath.Join(mergeDir, "output"), filepath.Join(mergeDir, "summary")
		mergeEnv := map[string]string{"LEASESIM": env["LEASESIM"], "GITHUB_OUTPUT": output, "GITHUB_STEP_SUMMARY": summary}
		code, stderr := runScript(t, bash, mergeScript, mergeDir, bin, mergeEnv)
		require.Equal(t, campaign.ExitOK, code, stderr)
		data, err := os.ReadFile(output)
		require.NoError(t, err)
		require.Equal(t, "code=0\n", string(data), "the step's output is the campaign's exit code")
		data, err = os.ReadFile(summary)
		require.NoError(t, err)
		require.Contains(t, string(data), fmt.Sprintf("shards 0/%d,", shards))
		return readReportFile(t, filepath.Join(mergeDir, state)), warnings.String()
	}

	first, _ := night(nil)
	require.Equal(t, 0, first.FirstIndex)
	require.Equal(t, 10, first.NextIndex)
	second, _ := night(first)
	require.Equal(t, 10, second.FirstIndex, "the second night resumes")
	require.Equal(t, 20, second.NextIndex)
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Contains(t, string(data), "--shard 3/4 --json --out shard/seeds --resume campaign-state/merged.json")

	other := *second
	other.Campaign = "scheduler=random"
	third, warnings := night(&other)
	require.Equal(t, 0, third.FirstIndex, "a report of another campaign starts over")
	require.Contains(t, warnings, "::warning::the last merged report does not resume this campaign")
	require.Contains(t, warnings, "another campaign")
}

// normalizeTemplate blanks what a user's copy changes: the main package
// (LEASESIM) and the repository to clone (REPO).
func normalizeTemplate(node any) any {
	switch n := node.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, v := range n {
			out[k] = normalizeTemplate(v)
		}
		if name, ok := out["name"].(string); ok && (name == "LEASESIM" || name == "REPO") {
			out["value"] = "<yours>"
		}
		if _, ok := out["LEASESIM"]; ok {
			out["LEASESIM"] = "<yours>"
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			out[i] = normalizeTemplate(v)
		}
		return out
	}
	return node
}

// TestTemplatesAreTheRepositoryFilesForAnotherModule: the copyable templates
// are this repository's workflow and manifests with only the main package
// and the repository changed, so they cannot drift from the tested files.
func TestTemplatesAreTheRepositoryFilesForAnotherModule(t *testing.T) {
	for ours, template := range map[string]string{
		"../.github/workflows/campaign.yml":     "../docs/templates/campaign.yml",
		"../deploy/k8s/campaign-job.yaml":       "../docs/templates/k8s/campaign-job.yaml",
		"../deploy/k8s/campaign-merge-job.yaml": "../docs/templates/k8s/campaign-merge-job.yaml",
		"../deploy/k8s/results-pvc.yaml":        "../docs/templates/k8s/results-pvc.yaml",
	} {
		mine, theirs := readYAMLFile(t, ours), readYAMLFile(t, template)
		require.Equal(t, normalizeTemplate(mine), normalizeTemplate(theirs), "%s and %s", ours, template)
		data, err := os.ReadFile(template)
		require.NoError(t, err)
		require.NotContains(t, string(data), "./cmd/leasesim", "%s names the user's own main package", template)
		require.NotContains(t, string(data), "github.com/leasekit/leasekit.git", template)
	}
}
