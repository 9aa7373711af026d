package campaign_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload"
)

// The tests of the campaign machinery on leasekit's real engines: those
// import campaign (workload/...), so they are here, in package
// campaign_test, over the catalog cmd/leasesim runs.

// engines is the catalog cmd/leasesim runs.
var engines = workload.Catalog()

func swarm(t *testing.T) campaign.FaultSetting {
	setting, err := campaign.ParseFaultSetting("swarm")
	require.NoError(t, err)
	return setting
}

func mustEngine(t testing.TB, name string) *campaign.Engine {
	t.Helper()
	e, err := engines.Lookup(name)
	require.NoError(t, err)
	return e
}

func TestCatalogResolvesTheRealEngines(t *testing.T) {
	names, err := engines.ResolveEngines("all")
	require.NoError(t, err)
	require.Equal(t, []string{"admission", "dirlease", "lease"}, names, "all leaves the hidden self-test out")
	names, err = engines.ResolveEngines("dirlease,admission,selftest")
	require.NoError(t, err)
	require.Equal(t, []string{"admission", "dirlease", "selftest"}, names)
	_, err = engines.ResolveEngines("admission,toylock")
	var usage *campaign.UsageError
	require.ErrorAs(t, err, &usage)
	for _, name := range engines.Names(false) {
		e := mustEngine(t, name)
		require.NotEmpty(t, e.Probes, "%s declares no probe", name)
		require.NotNil(t, e.History, "%s has no history model", name)
		require.NotEmpty(t, e.Explore, "%s has no explore scenario", name)
	}
}

// TestWriteFailureArtifacts writes the HTML visualization and the text
// beside a trace for one run of each engine, and checks their content.
func TestWriteFailureArtifacts(t *testing.T) {
	dir := t.TempDir()
	for _, name := range engines.Names(false) {
		e := mustEngine(t, name)
		spec, err := campaign.Options{Catalog: engines, Faults: swarm(t)}.SpecFor(name, 3)
		require.NoError(t, err)
		r := sim.Run(spec.Config(e, nil))
		htmlPath, err := e.WriteFailureArtifacts(dir, r)
		require.NoError(t, err, name)
		page, err := os.ReadFile(htmlPath)
		require.NoError(t, err)
		require.Contains(t, string(page), "<html", "%s: %s is not porcupine's HTML", name, htmlPath)
		text, err := os.ReadFile(strings.TrimSuffix(htmlPath, ".html") + ".txt")
		require.NoError(t, err)
		require.Contains(t, string(text), "outcome=", "%s: the summary beside the HTML has no outcome", name)
	}
	_, err := mustEngine(t, "selftest").WriteFailureArtifacts(dir, sim.Result{})
	require.Error(t, err, "an engine without a history model wrote artifacts")
}

// A traced run never runs a step inline on a process's coroutine
// (sim/step.go); an untraced one does for most steps. Both must be the same
// run: the same decisions, per-step hashes, outcome and history, for every
// engine, under the default swarm and under heavy crash and power loss
// (where the inline steps hand faults back to the main loop most).
func TestInlineStepsDoNotChangeARun(t *testing.T) {
	heavy, err := campaign.ParseFaultSetting("swarm,crash=0.02,powerloss=0.02,clockstep=0.05,pidchurn=0.05,zombie=0.05")
	require.NoError(t, err)
	for _, name := range engines.Names(false) {
		e := mustEngine(t, name)
		for _, faults := range []campaign.FaultSetting{swarm(t), heavy} {
			options := campaign.Options{Catalog: engines, Faults: faults}
			inline := 0
			for seed := uint64(1); seed <= 25; seed++ {
				spec, err := options.SpecFor(name, seed)
				require.NoError(t, err)
				untraced := spec.Config(e, nil)
				untraced.HashStream = true
				traced := spec.Config(e, io.Discard)
				traced.HashStream = true
				plain, withTrace := sim.Run(untraced), sim.Run(traced)
				require.Zero(t, withTrace.InlineSteps, "%s seed %d: a traced run went inline", name, seed)
				inline += plain.InlineSteps
				require.Equal(t, withTrace.Decisions, plain.Decisions, "%s seed %d", name, seed)
				require.Equal(t, withTrace.HashStream, plain.HashStream, "%s seed %d", name, seed)
				require.Equal(t, withTrace.Outcome, plain.Outcome, "%s seed %d", name, seed)
				require.Equal(t, withTrace.Message, plain.Message, "%s seed %d", name, seed)
				require.Equal(t, withTrace.Steps, plain.Steps, "%s seed %d", name, seed)
				require.Equal(t, withTrace.History, plain.History, "%s seed %d", name, seed)
			}
			require.Positive(t, inline, "%s: no step ran inline", name)
		}
	}
}

// TestExploreCleanLeaseIsCompleteAndDeterministic enumerates every
// execution of the lease scenario with one crash point or scheduling
// choice in its first 150 decisions: the real engine passes all of them,
// and a second exploration counts exactly the same executions and states.
func TestExploreCleanLeaseIsCompleteAndDeterministic(t *testing.T) {
	options := campaign.ExploreOptions{Catalog: engines, Spec: mustEngine(t, "lease").ExploreScenario(), ChoicesMax: 1, DecisionsMax: 150, ValuesMax: 4}
	first, err := campaign.Explore(context.Background(), options)
	require.NoError(t, err)
	t.Logf("%d executions, %d probes, %d final states, longest %d steps, %.1fs", first.Executions, first.Probes,
		first.FinalStates, first.StepsMax, first.Seconds)
	require.True(t, first.Complete)
	require.False(t, first.Found, "the real engine fails %v with %v", first.Finding, first.Counterexample)
	require.Greater(t, first.Executions, 100, "every position of 150 branches at least once")
	require.Equal(t, 1, first.ChoicesReached)
	second, err := campaign.Explore(context.Background(), options)
	require.NoError(t, err)
	first.Seconds, second.Seconds = 0, 0
	require.Equal(t, first, second)
}

// TestBenchReportsEveryMeasurement runs a tiny bench (the figures
// themselves are not asserted: the machine is shared) and checks that each
// measurement covers what it claims, that the same seeds hash the same in
// two measurements (the bench measures a deterministic workload), and that
// the engine makes the same fsyncs on simfs and on the real OS.
func TestBenchReportsEveryMeasurement(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	report, err := campaign.Bench(context.Background(), campaign.BenchOptions{
		Catalog: engines, Engines: []string{"lease"}, Seeds: 4, Workers: []int{1, 2}, Rounds: 5,
		RealFS: osenv.NewFS(), RealDir: dir,
		RealNamespace: func(dir string) (string, func(), error) {
			namespace, err := os.MkdirTemp(dir, "ns-")
			return namespace, func() {}, err
		},
	})
	require.NoError(t, err)
	require.Len(t, report.Engines, 1)
	lease := report.Engines[0]
	require.Equal(t, 4, lease.Seeds)
	require.Positive(t, lease.Steps)
	require.Positive(t, lease.Simulated)
	require.Positive(t, lease.Check, "porcupine checked the histories")
	again, err := engines.BenchEngine(context.Background(), "lease", 2, 4)
	require.NoError(t, err)
	require.Equal(t, lease.Hash, again.Hash, "same seeds, same runs, whatever the workers")
	require.Equal(t, lease.Steps, again.Steps)

	require.Len(t, report.Scaling, 2)
	require.Equal(t, 1.0, report.Scaling[0].Speedup)
	require.Len(t, report.OpMix, 2)
	simulated, real := report.OpMix[0], report.OpMix[1]
	require.Equal(t, "simfs", simulated.FS)
	require.Positive(t, simulated.Acquire.File, "an acquire syncs its owner record")
	require.Positive(t, simulated.Release.Directory, "a release syncs the namespace")
	require.Greater(t, simulated.FirstAcquire.Total(), simulated.Acquire.Total(), "the first acquire also makes the namespace")
	for _, got := range []struct{ simfs, real campaign.FsyncCount }{
		{simulated.FirstAcquire, real.FirstAcquire}, {simulated.Acquire, real.Acquire}, {simulated.Release, real.Release},
	} {
		require.Equal(t, got.simfs, got.real, "same engine code, same fsyncs")
	}
	require.Equal(t, simulated.AcquireSyncs, real.AcquireSyncs)
	require.Equal(t, simulated.ReleaseSyncs, real.ReleaseSyncs)

	var table bytes.Buffer
	require.NoError(t, report.WriteTable(&table))
	for _, want := range []string{"| lease | 4 |", "porcupine share", "| 2 | 4 |", "sim/real ratio", "What one acquire syncs"} {
		require.Contains(t, table.String(), want)
	}
}

// BenchmarkEngineSeeds is the engine measurement of `leasesim bench` as a
// Go benchmark: seeds of each engine's default scenario, run and checked.
func BenchmarkEngineSeeds(b *testing.B) {
	for _, name := range engines.Names(false) {
		b.Run(name, func(b *testing.B) {
			var total campaign.EngineBench
			for b.Loop() {
				bench, err := engines.BenchEngine(context.Background(), name, 1, 8)
				if err != nil {
					b.Fatal(err)
				}
				total.Seeds, total.Steps = total.Seeds+bench.Seeds, total.Steps+bench.Steps
				total.Run, total.Check, total.Simulated = total.Run+bench.Run, total.Check+bench.Check, total.Simulated+bench.Simulated
			}
			b.ReportMetric(total.StepsPerSecond(), "steps/s")
			b.ReportMetric(total.SeedsPerSecond(), "seeds/s")
			b.ReportMetric(100*total.PorcupineShare(), "porcupine%")
			b.ReportMetric(total.Compression(), "sim-s/s")
		})
	}
}

// regressionSeeds is the repository's seed directory: runs that once failed
// (since fixed) or reached a rare state. Every one must pass now.
const regressionSeeds = "../testdata/seeds"

// mutantSeeds holds seed files found under a mutant (a planted bug, see
// mutants/): they fail only with the mutant overlaid, so here, on the real
// code, they must pass; cmd/leasesim's mutant test replays them under the
// overlay and requires their failure.
const mutantSeeds = "testdata/mutant-seeds"

func seedFiles(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".seed") {
			paths = append(paths, path)
		}
		return nil
	})
	require.NoError(t, err)
	return paths
}

// TestSeedFilesPassAndReplayIdentically replays every seed file twice: the
// traces must agree bit for bit, and the run must pass. A regression seed
// that fails again means its bug is back.
func TestSeedFilesPassAndReplayIdentically(t *testing.T) {
	paths := append(seedFiles(t, regressionSeeds), seedFiles(t, mutantSeeds)...)
	require.NotEmpty(t, paths, "no seed files under %s or %s", regressionSeeds, mutantSeeds)
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			file, err := campaign.ReadSeedFile(path)
			require.NoError(t, err)
			replay, err := engines.ReplayTwice(file.Spec)
			require.NoError(t, err, "replay go run ./cmd/leasesim replay %s", strings.TrimPrefix(path, "../"))
			require.True(t, replay.Finding.OK(), "%s fails again (recorded: %v): %s\nreplay: go run ./cmd/leasesim replay %s",
				path, file.Expect, replay.Finding.Message, strings.TrimPrefix(path, "../"))
		})
	}
}

func TestSeedDirectoriesHoldOnlyCurrentVersionFiles(t *testing.T) {
	for _, root := range []string{regressionSeeds, mutantSeeds} {
		for _, path := range seedFiles(t, root) {
			file, err := campaign.ReadSeedFile(path)
			require.NoError(t, err, path)
			require.Equal(t, filepath.Base(filepath.Dir(path)), file.Spec.Engine, "%s: <dir>/<engine>/<name>.seed", path)
			require.Equal(t, filepath.Base(path), file.Name(), "%s: name is the spec's hash", path)
		}
	}
}
