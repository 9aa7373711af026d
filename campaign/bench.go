package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// Bench measures, side by side in one process and one run, what the
// harness's performance targets (docs/BENCH.md) ask of it: simulated steps
// and seeds per second per core for each engine's default scenario,
// porcupine's share of that time, time compression (simulated seconds per
// wall second), scaling with workers, and the fsyncs of one acquire and one
// release of package lease, in simfs and, when asked, on the real OS (the
// same operation mix, for a sim/real ratio). `leasesim bench` prints it; campaign's Benchmark* functions call
// the same code. The figures are not asserted anywhere: the machine is
// shared and they vary.

// BenchOptions configures Bench.
type BenchOptions struct {
	// Catalog holds the engines to measure.
	Catalog *Catalog
	// Engines to measure; nil means every engine of Catalog but the hidden.
	Engines []string
	// Seeds is the number of seeds of each engine measurement (and of each
	// scaling measurement); zero means benchSeedsDefault.
	Seeds int
	// Workers lists the worker counts of the scaling measurement (lease
	// engine); nil means 1 and 2.
	Workers []int
	// Rounds is the number of acquire/release pairs of the operation mix;
	// zero means benchRoundsDefault.
	Rounds int
	// Repeat is how many times each engine and scaling measurement runs
	// (after one untimed warm-up); the report keeps the median and the
	// range. Zero means benchRepeatDefault. A shared machine moves single
	// measurements by a third; the median of a few moves much less.
	Repeat int
	// RealFS and RealDir, when RealFS is not nil, run the operation mix on
	// that filesystem too, in a fresh namespace under RealDir (an absolute
	// directory that exists): the same engine code on the kernel.
	RealFS  lease.FS
	RealDir string
	// RealNamespace makes the namespace of the real operation mix under
	// RealDir and returns it with a cleanup; the command gives os.MkdirTemp.
	RealNamespace func(dir string) (namespace string, cleanup func(), err error)
}

const (
	benchSeedsDefault  = 300
	benchRoundsDefault = 500
	benchRepeatDefault = 3
	// benchWarmUpSeeds is the untimed warm-up of each engine: a process's
	// first runs grow its heap and its coroutines' stacks, which a campaign
	// pays once, not per seed.
	benchWarmUpSeeds = 60
)

// EngineBench is one engine's default scenario on one worker: Seeds seeds
// (base seed 1, the scheduler mix, swarm faults, default knobs: what
// `leasesim run --engine NAME --workers 1` runs).
type EngineBench struct {
	Engine string
	Seeds  int
	Steps  int64
	// Simulated is the virtual time the runs covered, summed.
	Simulated time.Duration
	// Run is the time in sim.Run; Check the time in the engine's history
	// check (porcupine).
	Run, Check time.Duration
	// CPU is the process's CPU time (user+system, every thread: the GC's
	// included) over the measurement: on a loaded machine the wall-time
	// rates fall, the per-CPU-second ones much less.
	CPU time.Duration
	// Failures counts seeds that did not pass (a bench is not a campaign,
	// but a failing seed is worth knowing).
	Failures int
	// Hash combines every run's final hash: the same seeds must give the
	// same hash before and after a speed change (behaviour unchanged).
	Hash uint64
	// SeedsPerSecondRange is the lowest and highest SeedsPerSecond of the
	// repeated measurements this one is the median of.
	SeedsPerSecondRange [2]float64
	// Allocs counts the heap allocations (objects) of the measurement:
	// specs, simulation and check. Zero in reports of builds before it.
	Allocs uint64
}

// AllocsPerSeed is Allocs over Seeds.
func (e EngineBench) AllocsPerSeed() float64 {
	if e.Seeds == 0 {
		return 0
	}
	return float64(e.Allocs) / float64(e.Seeds)
}

// Total is the measured time of the seeds: simulation plus check.
func (e EngineBench) Total() time.Duration { return e.Run + e.Check }

// StepsPerSecond counts steps per second of simulation plus check.
func (e EngineBench) StepsPerSecond() float64 { return perSecond(float64(e.Steps), e.Total()) }

// StepsPerSecondSimulating counts steps per second of simulation alone.
func (e EngineBench) StepsPerSecondSimulating() float64 { return perSecond(float64(e.Steps), e.Run) }

// SeedsPerSecond counts seeds (simulated and checked) per second.
func (e EngineBench) SeedsPerSecond() float64 { return perSecond(float64(e.Seeds), e.Total()) }

// StepsPerCPUSecond counts steps per second of process CPU time.
func (e EngineBench) StepsPerCPUSecond() float64 { return perSecond(float64(e.Steps), e.CPU) }

// SeedsPerCPUSecond counts seeds per second of process CPU time.
func (e EngineBench) SeedsPerCPUSecond() float64 { return perSecond(float64(e.Seeds), e.CPU) }

// PorcupineShare is the fraction of the time spent checking histories.
func (e EngineBench) PorcupineShare() float64 {
	if e.Total() <= 0 {
		return 0
	}
	return float64(e.Check) / float64(e.Total())
}

// Compression is simulated seconds per wall second.
func (e EngineBench) Compression() float64 { return perSecond(e.Simulated.Seconds(), e.Total()) }

// ScalingBench is the lease engine's default scenario over Workers
// goroutines: wall time and seeds per second, and the speedup over the
// first worker count measured.
type ScalingBench struct {
	Workers int
	Seeds   int
	Wall    time.Duration
	Speedup float64
	// CPU is the process CPU time of the measurement; Efficiency is seeds
	// per CPU-second over the first measurement's. On a machine of its own
	// Speedup approaches Workers x Efficiency; on a shared one Speedup
	// says little and Efficiency still says whether workers slow each
	// other down (allocator, GC, memory bandwidth).
	CPU        time.Duration
	Efficiency float64
}

// SeedsPerSecond counts seeds per wall second over all workers.
func (s ScalingBench) SeedsPerSecond() float64 { return perSecond(float64(s.Seeds), s.Wall) }

// BenchReport is everything Bench measured, in one run.
type BenchReport struct {
	GoVersion string
	OS, Arch  string
	CPUs      int
	Started   time.Time
	// LoadAverage is /proc/loadavg's first three fields ("" elsewhere):
	// the machine is shared, and the wall-time rates depend on it.
	LoadAverage string
	// GCPercent is the collector's setting during the run (GOGC; leasesim
	// sets its own default): it moves the rates by several percent.
	GCPercent int
	// PGO is the profile the binary was built with (go build's -pgo
	// setting: cmd/leasesim/leasesim.pgo when built with -pgo=), "off"
	// when none: it moves the rates by several percent too.
	PGO string
	// Repeat is how many measurements each engine and scaling figure is
	// the median of.
	Repeat  int
	Engines []EngineBench
	// ScalingEngine is the engine whose default scenario Scaling measures:
	// lease, or the first measured engine of a catalog without it.
	ScalingEngine string
	Scaling       []ScalingBench
	// OpMix holds the lease operation mix on simfs and, with RealFS, on
	// the real OS.
	OpMix []OpMixBench
}

// Bench runs every measurement once, in order, on the calling goroutine
// except the scaling runs.
func Bench(ctx context.Context, o BenchOptions) (*BenchReport, error) {
	if o.Seeds == 0 {
		o.Seeds = benchSeedsDefault
	}
	if o.Rounds == 0 {
		o.Rounds = benchRoundsDefault
	}
	if o.Repeat == 0 {
		o.Repeat = benchRepeatDefault
	}
	if o.Workers == nil {
		o.Workers = []int{1, 2}
	}
	if o.Engines == nil {
		o.Engines = o.Catalog.Names(false)
	}
	if o.Seeds < 1 || o.Rounds < 2 || o.Repeat < 1 {
		return nil, &UsageError{Message: fmt.Sprintf("bench: seeds %d, rounds %d and repeat %d must be at least 1, 2 and 1",
			o.Seeds, o.Rounds, o.Repeat)}
	}
	for _, workers := range o.Workers {
		if workers < 1 {
			return nil, &UsageError{Message: fmt.Sprintf("bench: %d workers", workers)}
		}
	}
	report := &BenchReport{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUs: runtime.NumCPU(), Started: time.Now().UTC(), LoadAverage: loadAverage(),
		GCPercent: gcPercent(), PGO: buildPGO()}
	report.Repeat = o.Repeat
	engines, err := benchEngines(ctx, o)
	if err != nil {
		return nil, err
	}
	report.Engines = engines
	report.ScalingEngine = scalingEngine(o.Catalog.Names(true), o.Engines)
	scaling, err := o.Catalog.benchScaling(ctx, report.ScalingEngine, o.Workers, o.Seeds, o.Repeat)
	if err != nil {
		return nil, err
	}
	report.Scaling = scaling
	simulated, err := BenchOpMixSimfs(o.Rounds)
	if err != nil {
		return nil, err
	}
	report.OpMix = append(report.OpMix, simulated)
	if o.RealFS != nil {
		if o.RealNamespace == nil {
			return nil, errors.New("bench: RealFS without RealNamespace")
		}
		namespace, cleanup, err := o.RealNamespace(o.RealDir)
		if err != nil {
			return nil, err
		}
		real, err := BenchOpMix("osenv "+o.RealDir, o.RealFS, namespace, o.Rounds)
		cleanup()
		if err != nil {
			return nil, err
		}
		report.OpMix = append(report.OpMix, real)
	}
	return report, ctx.Err()
}

// benchEngines measures each engine on one worker and one core, after an
// untimed warm-up.
func benchEngines(ctx context.Context, o BenchOptions) ([]EngineBench, error) {
	defer OnCores(1)()
	var engines []EngineBench
	for _, name := range o.Engines {
		if _, err := o.Catalog.BenchEngine(ctx, name, 1, min(o.Seeds, benchWarmUpSeeds)); err != nil {
			return nil, err
		}
		engine, err := o.Catalog.benchEngineRepeated(ctx, name, o.Seeds, o.Repeat)
		if err != nil {
			return nil, err
		}
		engines = append(engines, engine)
	}
	return engines, nil
}

// benchEngineRepeated measures an engine repeat times and returns the
// median measurement (by seeds per second), with the range.
func (c *Catalog) benchEngineRepeated(ctx context.Context, name string, seeds, repeat int) (EngineBench, error) {
	var samples []EngineBench
	for range repeat {
		cpuBefore, allocsBefore := processCPU(), heapAllocs()
		engine, err := c.BenchEngine(ctx, name, 1, seeds)
		if err != nil {
			return EngineBench{}, err
		}
		engine.CPU, engine.Allocs = processCPU()-cpuBefore, heapAllocs()-allocsBefore
		if len(samples) > 0 && engine.Hash != samples[0].Hash {
			panic(fmt.Sprintf("campaign: bench of %s: the same seeds hashed %016x, then %016x", name, samples[0].Hash, engine.Hash))
		}
		samples = append(samples, engine)
	}
	slices.SortFunc(samples, func(a, b EngineBench) int { return cmp.Compare(a.SeedsPerSecond(), b.SeedsPerSecond()) })
	median := samples[len(samples)/2]
	median.SeedsPerSecondRange = [2]float64{samples[0].SeedsPerSecond(), samples[len(samples)-1].SeedsPerSecond()}
	return median, nil
}

// scalingEngine is lease when the catalog has it (leasekit's figures, for
// any --engine), else the first measured engine (a user catalog's).
func scalingEngine(catalog, measured []string) string {
	if len(measured) == 0 || slices.Contains(catalog, "lease") {
		return "lease"
	}
	return measured[0]
}

// benchScaling measures an engine's default scenario over each worker
// count, repeat times in turn, and keeps each count's median wall and CPU
// time.
func (c *Catalog) benchScaling(ctx context.Context, engine string, workerCounts []int, seeds, repeat int) ([]ScalingBench, error) {
	walls := make([][]time.Duration, len(workerCounts))
	cpus := make([][]time.Duration, len(workerCounts))
	for range repeat {
		for i, workers := range workerCounts {
			cpuBefore := processCPU()
			wall, err := c.benchWorkers(ctx, engine, workers, seeds)
			if err != nil {
				return nil, err
			}
			walls[i] = append(walls[i], wall)
			cpus[i] = append(cpus[i], processCPU()-cpuBefore)
		}
	}
	var scaling []ScalingBench
	for i, workers := range workerCounts {
		row := ScalingBench{Workers: workers, Seeds: seeds, Wall: medianDuration(walls[i]), CPU: medianDuration(cpus[i]),
			Speedup: 1, Efficiency: 1}
		if len(scaling) > 0 && row.Wall > 0 && row.CPU > 0 {
			row.Speedup = float64(scaling[0].Wall) / float64(row.Wall)
			row.Efficiency = float64(scaling[0].CPU) / float64(row.CPU)
		}
		scaling = append(scaling, row)
	}
	return scaling, nil
}

func medianDuration(samples []time.Duration) time.Duration {
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// BenchEngine runs seeds 1..seeds of an engine's default scenario on one
// worker and times the simulation and the check of each apart. The index
// runs are spread over workers goroutines when workers > 1 (then Run and
// Check are summed CPU-side times, not wall time).
func (c *Catalog) BenchEngine(ctx context.Context, name string, workers, seeds int) (EngineBench, error) {
	e, err := c.Lookup(name)
	if err != nil {
		return EngineBench{}, err
	}
	options := Options{Catalog: c, Faults: FaultSetting{Swarm: true}}
	specs := make([]Spec, seeds)
	for i := range specs {
		if specs[i], err = options.SpecFor(name, uint64(i+1)); err != nil {
			return EngineBench{}, err
		}
	}
	results := make([]EngineBench, workers)
	var next atomic.Int64
	var wait sync.WaitGroup
	for worker := range workers {
		wait.Go(func() {
			total := &results[worker]
			coroutines := sim.NewCoroutines()
			defer coroutines.Close()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(specs) {
					return
				}
				total.add(benchOne(e, specs[i], coroutines))
			}
		})
	}
	wait.Wait()
	bench := EngineBench{Engine: name}
	for _, r := range results {
		bench.Seeds += r.Seeds
		bench.Steps += r.Steps
		bench.Simulated += r.Simulated
		bench.Run += r.Run
		bench.Check += r.Check
		bench.Failures += r.Failures
		bench.Hash ^= r.Hash
	}
	return bench, ctx.Err()
}

// benchWorkers runs seeds seeds of an engine over workers goroutines and
// returns the wall time.
func (c *Catalog) benchWorkers(ctx context.Context, name string, workers, seeds int) (time.Duration, error) {
	defer OnCores(workers)()
	start := time.Now()
	_, err := c.BenchEngine(ctx, name, workers, seeds)
	return time.Since(start), err
}

// OnCores runs the Go scheduler on n cores (GOMAXPROCS, at most the
// machine's; n <= 0 leaves it as it is) until the returned function restores
// the setting. The bench measures w workers on w cores, and leasesim run
// --workers N uses N cores: the collector and porcupine's goroutines then
// share the workers' cores instead of borrowing an idle one, and waking an
// idle core for each porcupine check (a futex and, in a VM, an
// inter-processor interrupt) cost more than it gave: one worker on one core
// ran about 8% more seeds per second than one worker on two, side by side.
func OnCores(n int) (restore func()) {
	if n <= 0 {
		return func() {}
	}
	previous := runtime.GOMAXPROCS(min(n, runtime.NumCPU()))
	return func() { runtime.GOMAXPROCS(previous) }
}

// benchOne runs and checks one spec.
func benchOne(e *Engine, spec Spec, coroutines *sim.Coroutines) EngineBench {
	config := spec.Config(e, nil)
	config.Coroutines = coroutines
	var world *sim.World
	setup := config.Setup
	config.Setup = func(w *sim.World) error {
		world = w
		return setup(w)
	}
	start := time.Now()
	result := sim.Run(config)
	ran := time.Now()
	finding, _ := judge(e, result, false)
	checked := time.Now()
	sim.Recycle(&result)
	one := EngineBench{Seeds: 1, Steps: int64(result.Steps), Run: ran.Sub(start), Check: checked.Sub(ran),
		Hash: splitmix(result.Hash ^ spec.Seed)}
	if world != nil {
		one.Simulated = time.Duration(world.Now())
	}
	if !finding.OK() {
		one.Failures = 1
	}
	return one
}

func (e *EngineBench) add(one EngineBench) {
	e.Seeds += one.Seeds
	e.Steps += one.Steps
	e.Simulated += one.Simulated
	e.Run += one.Run
	e.Check += one.Check
	e.Failures += one.Failures
	e.Hash ^= one.Hash
}

func perSecond(count float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return count / d.Seconds()
}

// processCPU is the process's user+system CPU time so far (zero where
// getrusage fails: the CPU columns then read 0).
func processCPU() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// heapAllocs is the process's count of heap objects allocated so far,
// tiny ones included (what MemStats.Mallocs counts, without stopping the
// world).
func heapAllocs() uint64 {
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}}
	metrics.Read(samples)
	var total uint64
	for _, sample := range samples {
		if sample.Value.Kind() == metrics.KindUint64 {
			total += sample.Value.Uint64()
		}
	}
	return total
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	fields := strings.Fields(string(data))
	return strings.Join(fields[:min(3, len(fields))], " ")
}

// buildPGO returns the running binary's -pgo build setting: the profile's
// file name, or "off".
func buildPGO() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, setting := range info.Settings {
		if setting.Key == "-pgo" {
			return filepath.Base(setting.Value)
		}
	}
	return "off"
}

// gcPercent reads the collector's GOGC setting (debug has no getter).
func gcPercent() int {
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent
}
