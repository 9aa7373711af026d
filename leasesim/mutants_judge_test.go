package leasesim

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

// strictSelfTest is the self-test lock judged by a stricter history check
// (some acquire must succeed): with one client and crashes, some seeds fail
// on the real code, which is what a drifted shrink of a mutant hunt reaches.
func strictSelfTest() *campaign.Engine {
	strict := *campaign.SelfTestEngine()
	strict.Name = "selftest-strict"
	strict.Params = append([]campaign.Param(nil), strict.Params...)
	for i, p := range strict.Params {
		switch p.Name {
		case "processes":
			strict.Params[i].Default = 1
		case "attempts":
			strict.Params[i].Default = 2
		}
	}
	strict.Check = func(result sim.Result, _ bool) campaign.Verdict {
		for _, op := range result.History {
			if op.Op == "acquire" && op.Output == true {
				return campaign.Verdict{OK: true}
			}
		}
		return campaign.Verdict{Message: "no acquire succeeded"}
	}
	return &strict
}

// TestMutantHuntReplaysTheShrunkFindingOnTheUnmutatedBuild: a hunt whose
// detecting seed passes on the unmutated build but whose shrunk seed fails
// there is not credited to the mutant: the shrunk seed is reported as a
// finding in the engine and the hunt goes on past the seed; a hunt whose
// shrunk seed passes there is credited.
func TestMutantHuntReplaysTheShrunkFindingOnTheUnmutatedBuild(t *testing.T) {
	c := &Command{Catalog: campaign.NewCatalog(strictSelfTest())}
	const faults = "crash=0.1"
	setting, err := campaign.ParseFaultSetting(faults)
	require.NoError(t, err)
	options := campaign.Options{Catalog: c.Catalog, Engines: []string{"selftest-strict"}, Faults: setting}
	var passing, failing []campaign.SeedFile
	for seed := uint64(1); seed <= 40 && (len(passing) < 2 || len(failing) < 1); seed++ {
		spec, err := options.SpecFor("selftest-strict", seed)
		require.NoError(t, err)
		file, err := c.Catalog.RecordSeedFile(spec)
		require.NoError(t, err)
		if file.Expect.OK() {
			passing = append(passing, file)
		} else {
			failing = append(failing, file)
		}
	}
	require.Len(t, passing, 2, "seeds the real code passes")
	require.NotEmpty(t, failing, "a seed the real code fails")
	seedText := func(file campaign.SeedFile) string { return string(file.Format()) }

	// The fake mutant build detects the passing seeds (the mutant's own
	// failure); the first detection's shrink drifted to the failing seed.
	shrunk := []string{seedText(failing[0]), seedText(passing[1])}
	hunts := 0
	hunt := func(next huntFlags) (campaign.HuntResult, error) {
		detected := passing[min(hunts, 1)]
		result := campaign.HuntResult{Found: true, Seeds: 1, Runs: 1, Seconds: 0.1, Engine: "selftest-strict",
			Seed: detected.Spec.Seed, Outcome: "violation", Class: "planted", ShrinkRuns: 1, ShrunkSeed: shrunk[min(hunts, 1)]}
		require.Equal(t, []uint64{passing[0].Spec.Seed, passing[0].Spec.Seed + 1}[min(hunts, 1)], next.baseSeed, "the hunt goes on past the seed")
		hunts++
		return result, nil
	}
	row := MutantRow{Name: "fake", Engines: []string{"selftest-strict"}, Engine: "selftest-strict", Faults: faults}
	flags := huntFlags{seedsMax: 100, baseSeed: passing[0].Spec.Seed}
	c.huntPastEngineFindings(&row, flags, hunt)

	require.Empty(t, row.Error)
	require.Equal(t, 2, hunts)
	require.Len(t, row.EngineFindings, 1, "the drifted shrunk seed is a finding in the engine")
	f := row.EngineFindings[0]
	require.True(t, f.Shrunk)
	require.Equal(t, "history: no acquire succeeded", f.Class)
	require.Equal(t, seedText(failing[0]), f.Seed)
	require.True(t, row.Hunt.Found, "the second detection, whose shrunk seed passes on the real code, is credited")
	require.Equal(t, seedText(passing[1]), row.Hunt.ShrunkSeed)
	require.Equal(t, 2, row.Hunt.Seeds, "budgets add up over the restarts")

	// printMutants fails the command on a finding in the engine.
	var stdout, stderr strings.Builder
	require.Equal(t, campaign.ExitViolation, printMutants([]MutantRow{row}, false, &stdout, &stderr))
	require.Contains(t, stderr.String(), "FINDING IN THE ENGINE (hunting fake")
}
