package campaign

import (
	"context"
	"runtime"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

func TestBenchRefusesBadOptions(t *testing.T) {
	for _, options := range []BenchOptions{{Seeds: -1}, {Rounds: 1}, {Workers: []int{0}}, {Catalog: testCatalog, Engines: []string{"nope"}, Seeds: 1}} {
		_, err := Bench(context.Background(), options)
		require.Error(t, err, "%+v", options)
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
