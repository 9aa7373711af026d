package campaign

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

func swarm(t *testing.T) FaultSetting {
	setting, err := ParseFaultSetting("swarm")
	require.NoError(t, err)
	return setting
}

func runCampaign(t *testing.T, o Options) *Report {
	t.Helper()
	report, err := Run(context.Background(), o)
	require.NoError(t, err)
	return report
}

// comparable strips what legitimately differs between equal campaigns.
func comparable(r *Report) *Report {
	c := *r
	c.ElapsedSeconds = 0
	c.Shards = nil
	c.Merged = 0
	return &c
}

func TestCampaignIsAFunctionOfItsOptionsNotOfWorkers(t *testing.T) {
	o := Options{Catalog: testCatalog, Engines: []string{"toylock", "toylock-buggy"}, Seeds: 120, BaseSeed: 7, Faults: swarm(t), Workers: 1}
	one := runCampaign(t, o)
	o.Workers = 4
	four := runCampaign(t, o)
	require.Equal(t, comparable(one), comparable(four))
	require.Equal(t, 240, one.Runs)
	require.Greater(t, one.Outcomes["violation"], 0, "the planted bug is found")
	require.Equal(t, 120, one.PerEngine["toylock-buggy"]["ok"]+one.PerEngine["toylock-buggy"]["violation"]+
		one.PerEngine["toylock-buggy"]["liveness"])
	require.Equal(t, ExitViolation, one.ExitCode())
}

func TestShardsAreDisjointAndMergeToTheWholeCampaign(t *testing.T) {
	o := Options{Catalog: testCatalog, Engines: []string{"toylock-buggy"}, Seeds: 90, BaseSeed: 1, Faults: swarm(t), Workers: 2}
	whole := runCampaign(t, o)
	var parts []*Report
	seen := map[int]bool{}
	for shard := range 3 {
		o.Shard, o.Shards = shard, 3
		part := runCampaign(t, o)
		require.Equal(t, 30, part.Runs)
		// Round-trip through JSON, as CI jobs do.
		var buffer bytes.Buffer
		require.NoError(t, part.WriteJSON(&buffer))
		decoded, err := ReadReport(&buffer)
		require.NoError(t, err)
		for _, f := range decoded.Failures {
			require.False(t, seen[f.Index], "index %d in two shards", f.Index)
			require.Equal(t, shard, f.Index%3)
			seen[f.Index] = true
		}
		parts = append(parts, decoded)
	}
	merged, err := Merge(parts)
	require.NoError(t, err)
	require.Equal(t, []string{"0/3", "1/3", "2/3"}, merged.Shards)
	require.Equal(t, comparable(whole), comparable(merged))

	_, err = Merge([]*Report{parts[0], parts[0]})
	require.ErrorContains(t, err, "appears twice")
	other := *parts[1]
	other.BaseSeed = 99
	_, err = Merge([]*Report{parts[0], &other})
	require.ErrorContains(t, err, "another campaign")
}

func TestDurationBoundsAnUnboundedCampaign(t *testing.T) {
	started := time.Now()
	report := runCampaign(t, Options{Catalog: testCatalog, Engines: []string{"toylock"}, Duration: 300 * time.Millisecond, Workers: 2})
	require.Less(t, time.Since(started), 5*time.Second)
	require.Greater(t, report.Runs, 0)
}

func TestDeterminismSampleRunsTwice(t *testing.T) {
	report := runCampaign(t, Options{Catalog: testCatalog, Engines: []string{"toylock"}, Seeds: 20, Faults: swarm(t), DeterminismSample: 5, Workers: 2})
	require.Equal(t, 4, report.DeterminismChecked)
	require.Zero(t, report.Outcomes["nondeterminism"])
}

func TestLeakedStateIsReportedAsNondeterminism(t *testing.T) {
	report := runCampaign(t, Options{Catalog: testCatalog, Engines: []string{"toylock-leaky"}, Seeds: 4, DeterminismSample: 2, Workers: 1})
	require.Equal(t, 2, report.DeterminismChecked)
	require.Equal(t, 2, report.Outcomes["nondeterminism"])
	require.Equal(t, ExitNondeterminism, report.ExitCode())
	require.Contains(t, report.Failures[0].Message, "diverge at step")
}

func TestExitCodePrecedence(t *testing.T) {
	cases := []struct {
		outcomes map[string]int
		want     int
	}{
		{map[string]int{"ok": 3}, ExitOK},
		{map[string]int{"ok": 3, "liveness": 1}, ExitLiveness},
		{map[string]int{"liveness": 1, "violation": 1}, ExitViolation},
		{map[string]int{"liveness": 1, "violation": 1, "nondeterminism": 1}, ExitNondeterminism},
	}
	for _, c := range cases {
		require.Equal(t, c.want, (&Report{Outcomes: c.outcomes}).ExitCode(), "%v", c.outcomes)
	}
	require.Len(t, map[int]bool{ExitOK: true, ExitViolation: true, ExitUsage: true, ExitLiveness: true, ExitNondeterminism: true}, 5)
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"unknown engine", Options{Catalog: testCatalog, Engines: []string{"nope"}, Seeds: 1}, `unknown engine "nope"; known: `},
		{"no budget", Options{Catalog: testCatalog, Engines: []string{"toylock"}}, "--seeds N or --duration"},
		{"bad shard", Options{Catalog: testCatalog, Engines: []string{"toylock"}, Seeds: 1, Shard: 3, Shards: 3}, "--shard 3/3"},
		{"bad scheduler", Options{Catalog: testCatalog, Engines: []string{"toylock"}, Seeds: 1, Scheduler: "fifo"}, `unknown scheduler "fifo"`},
		{"bad knob", Options{Catalog: testCatalog, Engines: []string{"toylock"}, Seeds: 1, Params: Params{"processes": 99}}, "out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(context.Background(), c.o)
			var usage *UsageError
			require.ErrorAs(t, err, &usage)
			require.Contains(t, err.Error(), c.want)
		})
	}
	names, err := testCatalog.ResolveEngines("all,toylock")
	require.NoError(t, err)
	require.Equal(t, []string{"toylock"}, names, "all is the visible engines: the self-test toys are hidden")
}

func TestParseFaultSetting(t *testing.T) {
	setting, err := ParseFaultSetting("swarm,crash=0,powerloss=0.01")
	require.NoError(t, err)
	require.True(t, setting.Swarm)
	require.Equal(t, map[string]float64{"crash": 0, "powerloss": 0.01}, setting.Overrides)
	for _, bad := range []string{"crash", "crash=2", "meteor=0.1", "swarm,crash=x"} {
		_, err := ParseFaultSetting(bad)
		require.Error(t, err, bad)
	}
	o := Options{Catalog: testCatalog, Faults: setting}
	spec, err := o.SpecFor("toylock", 3)
	require.NoError(t, err)
	require.Zero(t, spec.Faults.Get("crash"))
	require.Equal(t, 0.01, spec.Faults.Get("powerloss"))
}

func TestClass(t *testing.T) {
	cases := map[string]string{
		"step 12: invariant mutual-exclusion: 2 holders inside at once: [a b]": "invariant mutual-exclusion",
		"process client-3 panicked at step 9: boom: x\nstack":                  "panic: boom",
		"the harness panicked at step 7: sim: bad hook: x\nstack":              "harness panic: sim",
		"step budget 100 exhausted with 2 processes alive":                     "step budget exhausted",
		"step 4: liveness wedge: no acquire in 10 steps":                       "liveness wedge",
		"": "",
	}
	for message, want := range cases {
		require.Equal(t, want, Class(message), message)
	}
}

func TestSeedFileRoundTripsAndRejectsCorruption(t *testing.T) {
	var plan sim.FaultPlan
	plan.Set(sim.FaultCrash, 0.01)
	file := SeedFile{
		Spec: Spec{Engine: "toylock", Seed: 42, Scheduler: sim.SchedulerPCT, PCTDepth: 3, PCTSteps: 2000,
			StepsMax: 500, Faults: plan, Params: Params{"processes": 2}, Decisions: []uint32{0, 0, 3, 1, 1, 1}},
		Expect: Finding{Outcome: sim.OutcomeViolation, Class: "invariant mutual-exclusion"},
		Provenance: &Provenance{Commit: "1890a1a", Go: "go1.26.0", Workload: 3, Steps: 40, Hash: 0x3e3caca7ab9c838c,
			Probes: []string{"crash", "lease-acquired"}},
		Pinned:  true,
		Summary: []string{"outcome=violation", "replay: go run ./cmd/leasesim replay x.seed"},
	}
	data := file.Format()
	require.True(t, strings.HasPrefix(string(data), SeedVersion+"\n"))
	require.Contains(t, string(data), "decisions=0*2,3,1*3\n")
	parsed, err := ParseSeedFile(data)
	require.NoError(t, err)
	require.Equal(t, file, parsed)
	require.Equal(t, file.Name(), parsed.Name())

	for name, bad := range map[string]string{
		"version":   strings.Replace(string(data), "v2", "v9", 1),
		"no hash":   strings.Replace(string(data), "hash=3e3caca7ab9c838c\n", "", 1),
		"v1 commit": strings.Replace(string(data), SeedVersion, SeedVersion1, 1),
		"unknown":   string(data) + "colour=blue\n",
		"repeated":  string(data) + "seed=1\n",
		"missing":   strings.Replace(string(data), "engine=toylock\n", "", 1),
		"decisions": strings.Replace(string(data), "0*2,3", "0*x", 1),
		"empty":     "",
	} {
		_, err := ParseSeedFile([]byte(bad))
		require.Error(t, err, name)
	}

	dir := t.TempDir()
	path, err := WriteSeedFile(dir, file)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "toylock", file.Name()), path)
	read, err := ReadSeedFile(path)
	require.NoError(t, err)
	require.Equal(t, file, read)
	entries, err := os.ReadDir(filepath.Join(dir, "toylock"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}

// MissingProbes names the declared probes that never fired, in declaration
// order; a probe that fired once is not missing.
func TestMissingProbesKeepsDeclarationOrder(t *testing.T) {
	e := &Engine{Name: "e", Probes: []string{"zeta", "alpha", "mid"}}
	require.Equal(t, []string{"zeta", "mid"}, e.MissingProbes(map[string]int{"alpha": 1, "mid": 0, "other": 5}))
	require.Empty(t, e.MissingProbes(map[string]int{"zeta": 1, "alpha": 2, "mid": 3}))
}
