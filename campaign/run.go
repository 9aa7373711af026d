package campaign

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// Options configures a campaign.
type Options struct {
	// Catalog holds the engines Engines names.
	Catalog *Catalog
	// Engines are engine names of Catalog.
	Engines []string
	// Seeds is the number of seed indices (each runs every engine); zero
	// means unbounded, so Duration must be set.
	Seeds int
	// Duration is the time budget; zero means none.
	Duration time.Duration
	// BaseSeed: index i runs seed BaseSeed+i.
	BaseSeed uint64
	// FirstIndex is the first seed index: the campaign runs indices
	// FirstIndex .. FirstIndex+Seeds-1 (Resume sets it to where a report
	// stopped).
	FirstIndex int
	// Shard and Shards: this process runs the indices i with i%Shards == Shard.
	Shard, Shards int
	// Workers is the number of goroutines; zero means runtime.NumCPU().
	Workers int
	// Scheduler is "random", "pct", "sticky" or "mix" (random or pct,
	// decided per seed); "" means "mix".
	Scheduler string
	PCTDepth  int
	// StepsMax overrides the engines' step budgets when non-zero.
	StepsMax int
	// Faults is the fault setting: "swarm" (drawn per seed), "none", or
	// "swarm" followed by name=probability overrides, or just overrides
	// (applied over an all-zero plan). See ParseFaultSetting.
	Faults FaultSetting
	// Params overrides engine knobs (only for engines that have them).
	Params Params
	// DeterminismSample: every K-th index also runs twice and compares
	// hash streams (zero: never).
	DeterminismSample int
	// Search is "random" (the default: seed indices in order) or "guided"
	// (a coverage-guided search over decision lists, guided.go).
	Search string
	// Signal, with Search "guided", is the coverage signal that guides it:
	// "" or "calls" (DefaultCoverage: operations and the call trace) or
	// "operations" (OperationCoverage alone, the signal without the call
	// trace, for comparison). An engine's own Engine.Coverage overrides
	// both.
	Signal string
	// Corpus, with Search "guided", is the corpus the search starts from
	// and adds to (nil: a fresh one).
	Corpus *Corpus
	// Progress, when not nil, is called at most every ProgressPeriod.
	Progress       func(Progress)
	ProgressPeriod time.Duration
}

// Progress is a live snapshot of a campaign.
type Progress struct {
	Runs, Violations, Liveness, Nondeterminism int
	ProbesHit                                  int
	Elapsed                                    time.Duration
}

// FaultSetting is how a campaign sets each run's fault plan.
type FaultSetting struct {
	// Swarm draws each run's plan from its seed (swarm testing).
	Swarm bool
	// Overrides pin named faults to a probability, over the swarm plan or
	// an all-zero plan.
	Overrides map[string]float64
}

// ParseFaultSetting parses --faults: "swarm", "none", or a list of
// name=probability pairs, optionally after "swarm," ("swarm,crash=0").
func ParseFaultSetting(text string) (FaultSetting, error) {
	setting := FaultSetting{Overrides: map[string]float64{}}
	for _, field := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' }) {
		switch field {
		case "swarm":
			setting.Swarm = true
			continue
		case "none":
			continue
		}
		name, value, ok := strings.Cut(field, "=")
		known := false
		for _, n := range faultNames {
			known = known || n == name
		}
		probability, err := strconv.ParseFloat(value, 64)
		if !ok || !known || err != nil || probability < 0 || probability > 1 {
			return FaultSetting{}, &UsageError{Message: fmt.Sprintf(
				"--faults: %q is not swarm, none or name=probability (faults: %s)", field, strings.Join(faultNames, ", "))}
		}
		setting.Overrides[name] = probability
	}
	return setting, nil
}

// swarmSalt separates the decision source of a seed's fault plan from the
// run's own decisions.
const swarmSalt = 0x5eed_fa17_5eed_fa17

// SpecFor returns the Spec of one seed of an engine (not of an index):
// every knob is a function of (options, engine, seed), so `leasesim replay
// SEED` with the same flags reruns it.
func (o Options) SpecFor(engine string, seed uint64) (Spec, error) {
	e, err := o.Catalog.Lookup(engine)
	if err != nil {
		return Spec{}, err
	}
	spec := Spec{Engine: engine, Seed: seed, PCTDepth: o.PCTDepth, PCTSteps: pctStepsDefault,
		StepsMax: e.StepsMax, Params: Params{}}
	if spec.PCTDepth == 0 {
		spec.PCTDepth = 3
	}
	if spec.StepsMax == 0 {
		spec.StepsMax = stepsMaxDefault
	}
	if o.StepsMax != 0 {
		spec.StepsMax = o.StepsMax
	}
	switch o.Scheduler {
	case "", "mix":
		spec.Scheduler = sim.SchedulerRandom
		if splitmix(seed)&1 == 1 {
			spec.Scheduler = sim.SchedulerPCT
		}
	default:
		if spec.Scheduler, err = parseScheduler(o.Scheduler); err != nil {
			return Spec{}, err
		}
	}
	if o.Faults.Swarm {
		spec.Faults = sim.DrawFaultPlan(sim.NewDecisions(seed ^ swarmSalt))
	}
	for name, probability := range o.Faults.Overrides {
		spec.Faults.Set(name, probability)
	}
	for name, value := range e.DefaultParams() {
		spec.Params[name] = value
	}
	for name, value := range o.Params {
		if _, ok := e.param(name); ok {
			spec.Params[name] = value
		}
	}
	if err := e.checkParams(spec.Params); err != nil {
		return Spec{}, err
	}
	return spec, nil
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// validate checks the options as a whole.
func (o *Options) validate() error {
	if o.Shards == 0 {
		o.Shards = 1
	}
	switch {
	case len(o.Engines) == 0:
		return &UsageError{Message: "no engine selected"}
	case o.Seeds < 0 || o.FirstIndex < 0:
		return &UsageError{Message: "--seeds and the first index must not be negative"}
	case o.Seeds == 0 && o.Duration <= 0:
		return &UsageError{Message: "give --seeds N or --duration D (or both)"}
	case o.Shards < 1 || o.Shard < 0 || o.Shard >= o.Shards:
		return &UsageError{Message: fmt.Sprintf("--shard %d/%d: need 0 <= i < n", o.Shard, o.Shards)}
	case o.Workers < 0 || o.DeterminismSample < 0:
		return &UsageError{Message: "--workers and --determinism-sample must not be negative"}
	}
	if o.Workers == 0 {
		o.Workers = runtime.NumCPU()
	}
	switch o.Search {
	case "", "random", "guided":
	default:
		return &UsageError{Message: fmt.Sprintf("--search %q: random or guided", o.Search)}
	}
	switch o.Signal {
	case "", SignalCalls, SignalOperations:
	default:
		return &UsageError{Message: fmt.Sprintf("--signal %q: %s or %s", o.Signal, SignalCalls, SignalOperations)}
	}
	for _, engine := range o.Engines {
		if _, err := o.SpecFor(engine, o.BaseSeed); err != nil {
			return err
		}
	}
	return nil
}

// job is one (engine, index) run of the campaign.
type job struct {
	engine string
	index  int
}

// jobAt returns the k-th job of this shard, or ok=false past the end: the
// shard's indices are those from FirstIndex on with index % Shards == Shard.
func (o *Options) jobAt(k int) (job, bool) {
	engines := len(o.Engines)
	start := o.FirstIndex + ((o.Shard-o.FirstIndex)%o.Shards+o.Shards)%o.Shards
	index := start + (k/engines)*o.Shards
	if o.Seeds > 0 && index >= o.FirstIndex+o.Seeds {
		return job{}, false
	}
	return job{engine: o.Engines[k%engines], index: index}, true
}

// nextIndex is where this shard stopped after its first done jobs: every
// index of the shard below it ran on every engine. Workers take jobs in
// order and finish every job they take, so the done jobs are 0..done-1.
func (o *Options) nextIndex(done int) int {
	j, ok := o.jobAt(done)
	if !ok {
		return o.FirstIndex + o.Seeds
	}
	return j.index
}

// Run runs a campaign and returns its report. It stops at Seeds, at
// Duration, or when ctx is cancelled (the report then covers the runs done).
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Search == "guided" {
		return runGuided(ctx, o)
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	report := newReport(o)
	started := time.Now()
	var next atomic.Int64
	var mutex sync.Mutex
	var workers sync.WaitGroup
	stopProgress := o.startProgress(report, &mutex, started)
	for range o.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			coroutines := sim.NewCoroutines() // this worker's runs reuse grown stacks
			defer coroutines.Close()
			for ctx.Err() == nil {
				j, ok := o.jobAt(int(next.Add(1) - 1))
				if !ok {
					return
				}
				record := o.runJob(j, coroutines)
				mutex.Lock()
				report.add(record)
				mutex.Unlock()
			}
		}()
	}
	workers.Wait()
	stopProgress()
	report.ElapsedSeconds = time.Since(started).Seconds()
	report.NextIndex = o.nextIndex(report.Runs)
	report.finish()
	return report, nil
}

// startProgress starts the progress ticker and returns its stop function.
func (o *Options) startProgress(report *Report, mutex *sync.Mutex, started time.Time) func() {
	if o.Progress == nil {
		return func() {}
	}
	period := o.ProgressPeriod
	if period <= 0 {
		period = 200 * time.Millisecond
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	snapshot := func() Progress {
		mutex.Lock()
		defer mutex.Unlock()
		return Progress{Runs: report.Runs, Violations: report.Outcomes["violation"], Liveness: report.Outcomes["liveness"],
			Nondeterminism: report.Outcomes["nondeterminism"], ProbesHit: len(report.Probes), Elapsed: time.Since(started)}
	}
	go func() {
		defer close(stopped)
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				o.Progress(snapshot())
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		o.Progress(snapshot())
	}
}

// record is what one job contributes to the report.
type record struct {
	job     job
	spec    Spec
	result  sim.Result
	finding Finding
	// twice is set when the run was a determinism check.
	twice bool
}

func (o *Options) runJob(j job, coroutines *sim.Coroutines) record {
	seed := o.BaseSeed + uint64(j.index)
	spec, err := o.SpecFor(j.engine, seed)
	if err != nil {
		panic(fmt.Sprintf("campaign: spec of validated options: %v", err)) // validate checked it
	}
	e, err := o.Catalog.Lookup(j.engine)
	if err != nil {
		panic(err)
	}
	cfg := spec.Config(e, nil)
	cfg.Coroutines = coroutines
	var result sim.Result
	twice := o.DeterminismSample > 0 && j.index%o.DeterminismSample == 0
	if twice {
		result = sim.RunTwice(cfg)
		result.HashStream = nil
	} else {
		result = sim.Run(cfg)
	}
	finding, _ := judge(e, result, false)
	result.History = nil // keep the report's memory flat
	sim.Recycle(&result)
	return record{job: j, spec: spec, result: result, finding: finding, twice: twice}
}

// sortFailures orders failures by engine, then index.
func sortFailures(failures []Failure) {
	sort.Slice(failures, func(i, j int) bool {
		if failures[i].Engine != failures[j].Engine {
			return failures[i].Engine < failures[j].Engine
		}
		return failures[i].Index < failures[j].Index
	})
}
