package leasesim

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/workload"
)

// summaryReport is a finished two-engine report with two distinct
// failures, one shrunk into a seed file and one not.
func summaryReport(t *testing.T) *campaign.Report {
	lease, err := workload.Catalog().Lookup("lease")
	require.NoError(t, err)
	probes := map[string]int{"not-declared": 3}
	for _, p := range lease.Probes[1:] {
		probes[p] = 2
	}
	return &campaign.Report{Engines: []string{"admission", "lease"}, Runs: 10, Shards: []string{"0/1"},
		Outcomes:  map[string]int{"ok": 8, "violation": 2},
		PerEngine: map[string]map[string]int{"admission": {"ok": 5}, "lease": {"ok": 3, "violation": 2}},
		Probes:    probes,
		Failures: []campaign.Failure{
			{Engine: "lease", Index: 3, Seed: 4, Outcome: "violation", Class: "invariant lease", Message: "step 9: two owners\nmore", Steps: 10,
				SeedFile: "testdata/seeds/lease/violation-1.seed", DecisionsShrunk: 12, ChoicesShrunk: 2,
				Replay: "go run ./cmd/leasesim replay testdata/seeds/lease/violation-1.seed"},
			{Engine: "lease", Index: 7, Seed: 8, Outcome: "violation", Class: "history: not linearizable", Message: "not linearizable", Steps: 20},
		}}
}

// The compact summary: runs, per-engine outcomes, the declared probes that
// did not fire by name, each distinct failure with a replay command; every
// probe count only with --probes.
func TestRunSummaryIsCompact(t *testing.T) {
	c := &Command{Catalog: workload.Catalog(), Package: "./cmd/leasesim"}
	lease, err := c.Catalog.Lookup("lease")
	require.NoError(t, err)
	report := summaryReport(t)
	var out bytes.Buffer
	c.writeRunSummary(&out, report, summaryOptions{replayArgs: []string{"--faults", "swarm,crash=0"}})
	text := out.String()
	require.Contains(t, text, "leasesim: 10 runs (ok 8, violation 2) over admission,lease in ")
	require.Contains(t, text, "  lease      ok 3, violation 2\n")
	declared := len(c.declaredProbes(report.Engines))
	require.Contains(t, text, "  probes: "+itoa(declared-1-(declared-len(lease.Probes)))+" of "+itoa(declared)+" declared fired; not fired: ")
	require.Regexp(t, "not fired: [^(]*"+lease.Probes[0]+" \\(", text)
	require.NotRegexp(t, "not fired: [^(]*"+lease.Probes[1]+"[, ]", text)
	require.NotContains(t, text, "not-declared", "undeclared probes are counted, not listed")
	require.Contains(t, text, "    replay: go run ./cmd/leasesim replay testdata/seeds/lease/violation-1.seed\n")
	require.Contains(t, text, "    replay: go run ./cmd/leasesim replay --engine lease --faults swarm,crash=0 8\n")
	require.NotContains(t, text, "more", "a message's first line only")

	out.Reset()
	c.writeRunSummary(&out, report, summaryOptions{probes: true})
	require.Contains(t, out.String(), "not-declared")
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestKnobArgsKeepOnlyWhatDecidesARun(t *testing.T) {
	require.Equal(t, []string{"--faults", "swarm,crash=0", "--param", "roots=1", "--scheduler", "pct"},
		knobArgs([]string{"--seeds", "200", "--faults=swarm,crash=0", "--workers", "2", "--param", "roots=1", "-scheduler", "pct", "--json"}))
	require.Equal(t, []string{"--param", "'a b'"}, knobArgs([]string{"--param", "a b"}))
}

// TestRunPrintsProgressLinesToALog: with --progress and stdout not a
// terminal (a CI log), a long campaign prints plain progress lines to
// stderr; without it, nothing but the summary.
func TestRunPrintsProgressLinesToALog(t *testing.T) {
	c := &Command{Catalog: workload.Catalog(), Package: "./cmd/leasesim"}
	args := []string{"run", "--engine", "admission", "--seeds", "300", "--workers", "1", "--shrink-max", "0", "--out", t.TempDir()}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, c.Run(append(args, "--progress", "1ms"), &stdout, &stderr), stderr.String())
	require.Regexp(t, `(?m)^progress: \d+/300 seeds  \d+/s  violations 0  liveness 0  nondeterminism 0  probes hit \d+  \d+s$`, stderr.String())
	require.NotContains(t, stdout.String(), "progress:")
	stdout.Reset()
	stderr.Reset()
	require.Equal(t, 0, c.Run(args, &stdout, &stderr), stderr.String())
	require.NotContains(t, stderr.String(), "progress:")
}
