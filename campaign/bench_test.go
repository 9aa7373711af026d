package campaign

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/sim"
)

// TestBenchReportsEveryMeasurement runs a tiny bench (the figures
// themselves are not asserted: the machine is shared) and checks that each
// measurement covers what it claims, that the same seeds hash the same in
// two measurements (the bench measures a deterministic workload), and that
// the engine makes the same fsyncs on simfs and on the real OS.
func TestBenchReportsEveryMeasurement(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	report, err := Bench(context.Background(), BenchOptions{
		Engines: []string{"lease"}, Seeds: 4, Workers: []int{1, 2}, Rounds: 5,
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
	again, err := BenchEngine(context.Background(), "lease", 2, 4)
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
	for _, got := range []struct{ simfs, real FsyncCount }{
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

func TestBenchRefusesBadOptions(t *testing.T) {
	for _, options := range []BenchOptions{{Seeds: -1}, {Rounds: 1}, {Workers: []int{0}}, {Engines: []string{"nope"}, Seeds: 1}} {
		_, err := Bench(context.Background(), options)
		require.Error(t, err, "%+v", options)
	}
}

// BenchmarkEngineSeeds is the engine measurement of `leasesim bench` as a
// Go benchmark: seeds of each engine's default scenario, run and checked.
func BenchmarkEngineSeeds(b *testing.B) {
	for _, name := range Names(false) {
		b.Run(name, func(b *testing.B) {
			e, err := Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			options := Options{Faults: FaultSetting{Swarm: true}}
			coroutines := sim.NewCoroutines()
			defer coroutines.Close()
			var total EngineBench
			for i := 0; b.Loop(); i++ {
				spec, err := options.SpecFor(name, uint64(i%benchSeedsDefault+1))
				if err != nil {
					b.Fatal(err)
				}
				total.add(benchOne(e, spec, coroutines))
			}
			b.ReportMetric(total.StepsPerSecond(), "steps/s")
			b.ReportMetric(total.SeedsPerSecond(), "seeds/s")
			b.ReportMetric(100*total.PorcupineShare(), "porcupine%")
			b.ReportMetric(total.Compression(), "sim-s/s")
		})
	}
}

// BenchmarkLeaseOpMix is one acquire/release pair of package lease on
// simfs, outside the simulator.
func BenchmarkLeaseOpMix(b *testing.B) {
	bench, err := BenchOpMixSimfs(2)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(bench.Acquire.Total(), "fsyncs/acquire")
	b.ReportMetric(bench.Release.Total(), "fsyncs/release")
	fsys := newOpMixSimfs()
	manager, err := opMixManager(fsys, "/bench/ns")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := opMixRound(manager); err != nil {
			b.Fatal(err)
		}
	}
}

// OnCores sets GOMAXPROCS to n, capped at the CPUs, leaves it for n <= 0,
// and its restore function puts back what was there.
func TestOnCoresSetsAndRestoresGOMAXPROCS(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	restore := OnCores(1)
	require.Equal(t, 1, runtime.GOMAXPROCS(0))
	restore()
	require.Equal(t, before, runtime.GOMAXPROCS(0))
	restore = OnCores(runtime.NumCPU() + 5)
	require.Equal(t, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	restore()
	restore = OnCores(0)
	require.Equal(t, before, runtime.GOMAXPROCS(0))
	restore()
	require.Equal(t, before, runtime.GOMAXPROCS(0))
}
