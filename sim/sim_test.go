package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lease"
)

func churnConfig(seed uint64, plan *FaultPlan) Config {
	c := &churnWorkload{restartsMax: 6, processesMax: 4}
	return Config{Seed: seed, StepsMax: 5000, Faults: plan, Setup: c.setup}
}

func TestToyLockBugFoundByRandomScheduler(t *testing.T) {
	const seedsMax = 200
	for seed := uint64(1); seed <= seedsMax; seed++ {
		lock := &toyLock{breakEmpty: true}
		r := Run(Config{Seed: seed, StepsMax: 2000, Scheduler: SchedulerRandom, Faults: &FaultPlan{}, Setup: lock.setup(2)})
		if r.Outcome == OutcomeViolation {
			if !strings.Contains(r.Message, "mutual-exclusion") {
				t.Fatalf("seed %d: unexpected violation %q", seed, r.Message)
			}
			t.Logf("seed %d found the race at step %d: %s", seed, r.Step, r.Message)
			// The recorded decisions replay to the same violation.
			replay := Run(Config{Seed: seed, Replay: r.Decisions, StepsMax: 2000, Scheduler: SchedulerRandom,
				Faults: &FaultPlan{}, Setup: (&toyLock{breakEmpty: true}).setup(2)})
			if replay.Outcome != OutcomeViolation || replay.Step != r.Step || replay.Hash != r.Hash {
				t.Fatalf("replay: %v at step %d hash %x, want violation at %d hash %x",
					replay.Outcome, replay.Step, replay.Hash, r.Step, r.Hash)
			}
			return
		}
		if r.Outcome != OutcomeOK {
			t.Fatalf("seed %d: %v %s", seed, r.Outcome, r.Message)
		}
	}
	t.Fatalf("the random scheduler missed the empty-lock race in %d seeds", seedsMax)
}

func TestToyLockCorrectVariantHolds(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		lock := &toyLock{}
		for _, kind := range []SchedulerKind{SchedulerRandom, SchedulerPCT} {
			r := Run(Config{Seed: seed, StepsMax: 2000, Scheduler: kind, Faults: &FaultPlan{}, Setup: lock.setup(3)})
			if r.Outcome != OutcomeOK {
				t.Fatalf("seed %d %v: %v %s", seed, kind, r.Outcome, r.Message)
			}
		}
	}
}

func TestPCTReportsBound(t *testing.T) {
	lock := &toyLock{}
	r := Run(Config{Seed: 3, StepsMax: 1000, Scheduler: SchedulerPCT, PCTDepth: 2, Faults: &FaultPlan{}, Setup: lock.setup(2)})
	if want := 1.0 / (2 * 1000); r.PCTBound != want {
		t.Fatalf("PCT bound %v, want %v", r.PCTBound, want)
	}
	if !slices.Contains(r.Knobs, "pct_depth=2") || !slices.Contains(r.Knobs, "scheduler=pct") {
		t.Fatalf("knobs %v", r.Knobs)
	}
}

func TestDeterminism(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for _, plan := range []*FaultPlan{nil, hotPlan()} {
			r := RunTwice(churnConfig(seed, plan))
			if r.Outcome == OutcomeNondeterminism {
				t.Fatalf("seed %d: %s", seed, r.Message)
			}
			if r.Outcome == OutcomeViolation {
				t.Fatalf("seed %d: %s", seed, r.Message)
			}
			cfg := churnConfig(seed, plan)
			cfg.Replay = r.Decisions
			cfg.HashStream = true
			cfg.StateHashPeriod = stateHashPeriodCheck // as RunTwice hashed
			replay := Run(cfg)
			if i := firstDivergence(r.HashStream, replay.HashStream); i >= 0 {
				t.Fatalf("seed %d: replay of %d decisions diverges at step %d", seed, len(r.Decisions), i)
			}
			if !slices.Equal(replay.Decisions, r.Decisions) {
				t.Fatalf("seed %d: replay recorded other decisions", seed)
			}
		}
	}
}

func TestRunTwiceReportsDivergence(t *testing.T) {
	// A workload that reads state outside the run (a counter shared across
	// runs) diverges; RunTwice must name the step.
	shared := 0
	setup := func(w *World) error {
		volume := w.AddVolume("disk")
		h := w.AddHost(HostSpec{Name: "alpha", Volume: volume})
		_, err := w.Spawn(h, ProcSpec{}, func(p *Proc) {
			shared++
			for i := 0; i < 10+shared; i++ {
				p.Clock().Now()
			}
		})
		return err
	}
	r := RunTwice(Config{Seed: 1, Faults: &FaultPlan{}, Setup: setup})
	// Step 11 is the first run's last Now, after which it exits.
	if r.Outcome != OutcomeNondeterminism || r.Step != 11 {
		t.Fatalf("%v at step %d: %s", r.Outcome, r.Step, r.Message)
	}
}

func TestStepBudgetIsLiveness(t *testing.T) {
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, err := w.Spawn(h, ProcSpec{}, func(p *Proc) {
			for {
				_, _ = p.FS().Lstat("/spin")
			}
		})
		return err
	}
	r := Run(Config{Seed: 1, StepsMax: 300, Faults: &FaultPlan{}, Setup: setup})
	if r.Outcome != OutcomeLiveness || r.Steps != 300 {
		t.Fatalf("%v after %d steps: %s", r.Outcome, r.Steps, r.Message)
	}
}

func TestSleepJumpsClock(t *testing.T) {
	var woke []string
	var monotonic []time.Duration
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		for _, d := range []time.Duration{time.Hour, time.Minute, 24 * time.Hour} {
			_, err := w.Spawn(h, ProcSpec{Name: d.String()}, func(p *Proc) {
				before := p.Clock().Monotonic()
				if err := p.Clock().Sleep(context.Background(), d); err != nil {
					panic(err)
				}
				after := p.Clock().Monotonic()
				if after-before < d {
					panic(fmt.Sprintf("slept %v of %v", after-before, d))
				}
				woke = append(woke, p.Name())
				monotonic = append(monotonic, after)
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	r := Run(Config{Seed: 5, StepsMax: 50, Faults: &FaultPlan{}, Setup: setup})
	if r.Outcome != OutcomeOK {
		t.Fatalf("%v: %s", r.Outcome, r.Message)
	}
	if want := []string{"1m0s", "1h0m0s", "24h0m0s"}; !slices.Equal(woke, want) {
		t.Fatalf("woke %v, want %v", woke, want)
	}
	// Each process: start, Monotonic, Sleep, wake, Monotonic.
	if r.Steps != 15 || monotonic[2] < 24*time.Hour || monotonic[2] > 24*time.Hour+time.Second {
		t.Fatalf("%d steps, last wake at %v", r.Steps, monotonic[2])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var err error
	r = Run(Config{Seed: 5, Faults: &FaultPlan{}, Setup: func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, spawnErr := w.Spawn(h, ProcSpec{}, func(p *Proc) { err = p.Clock().Sleep(ctx, time.Hour) })
		return spawnErr
	}})
	if err != context.Canceled || r.Outcome != OutcomeOK {
		t.Fatalf("sleep with a cancelled context: %v, run %v", err, r.Outcome)
	}
}

func TestCrashCutsOperationAndStopsDefers(t *testing.T) {
	var crashedAt int64 = -1
	var volume *Volume
	setup := func(w *World) error {
		volume = w.AddVolume("disk")
		mkdirAll(volume, "/d")
		h := w.AddHost(HostSpec{Name: "alpha", Volume: volume})
		w.OnExit(func(p *Proc, reason ExitReason) {
			if reason == ExitCrashed {
				crashedAt = w.Now()
			}
		})
		_, err := w.Spawn(h, ProcSpec{}, func(p *Proc) {
			defer func() {
				// A killed process runs no code: this write must not happen.
				if f, err := p.FS().OpenFile("/d/deferred", lease.O_CREATE|lease.O_WRONLY, 0o600); err == nil {
					_ = f.Close()
				}
			}()
			for i := 0; ; i++ {
				op := p.Begin("stat", i)
				_, _ = p.FS().Lstat("/d")
				p.End(op, "ok")
			}
		})
		return err
	}
	plan := &FaultPlan{}
	plan.Set(FaultCrash, 0.2)
	for seed := uint64(1); seed <= 20; seed++ {
		r := Run(Config{Seed: seed, StepsMax: 1000, Faults: plan, Setup: setup})
		if r.Outcome != OutcomeOK || crashedAt < 0 {
			t.Fatalf("seed %d: %v %s (crashed at %d)", seed, r.Outcome, r.Message, crashedAt)
		}
		if _, err := volume.FS().View(0).Lstat("/d/deferred"); err == nil {
			t.Fatalf("seed %d: a deferred call of a killed process wrote a file", seed)
		}
		if len(r.History) == 0 {
			continue // killed before its first operation
		}
		last := r.History[len(r.History)-1]
		if !last.Unknown || last.Return != crashedAt || last.Output != nil {
			t.Fatalf("seed %d: last operation %+v, want unknown returning at the crash %d", seed, last, crashedAt)
		}
		for _, op := range r.History[:len(r.History)-1] {
			if op.Unknown || op.Return < op.Call {
				t.Fatalf("seed %d: completed operation %+v", seed, op)
			}
		}
		if r.Probes["crash"] != 1 {
			t.Fatalf("seed %d: probes %v", seed, r.ProbeLines())
		}
		crashedAt = -1
	}
}

// powerLossScenario: a writer on host alpha makes one durable and one
// unsynced file, then sleeps; a hook cuts alpha's power once; the exit hook
// spawns a reader on the rebooted host. beta shares alpha's volume when
// shared is set. An OnPowerLoss hook notes what it sees on either side of
// the crash, and when it runs (order).
type powerLossScenario struct {
	shared                bool
	writerDone, fired     bool
	bootBefore, bootAfter string
	reader                *Proc
	readerTicks           uint64
	syncedOK, unsyncedOK  bool
	betaFinished          bool
	powerLossAt           int64
	order                 []string
	// hookHost is the host the hook was called with; writerAlive, before
	// and after what it saw: the writer alive, /d/unsynced there.
	hookHost              *Host
	writerAlive           bool
	unsyncedBefore, after bool
}

func (s *powerLossScenario) setup(w *World) error {
	volume := w.AddVolume("disk")
	mkdirAll(volume, "/d")
	alpha := w.AddHost(HostSpec{Name: "alpha", PIDMax: 100, Volume: volume})
	if s.shared {
		beta := w.AddHost(HostSpec{Name: "beta", Volume: volume})
		if _, err := w.Spawn(beta, ProcSpec{Name: "beta"}, func(p *Proc) {
			_ = p.Clock().Sleep(context.Background(), time.Hour)
			s.betaFinished = true
		}); err != nil {
			return err
		}
	}
	s.bootBefore = alpha.Table().BootID()
	writer, err := w.Spawn(alpha, ProcSpec{Name: "writer"}, func(p *Proc) {
		fsys := p.FS()
		synced, err := fsys.OpenFile("/d/synced", lease.O_CREATE|lease.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		_ = synced.Sync()
		_ = synced.Close()
		dir, err := fsys.OpenFile("/d", lease.O_RDONLY, 0)
		if err != nil {
			panic(err)
		}
		_ = dir.Sync()
		_ = dir.Close()
		unsynced, err := fsys.OpenFile("/d/unsynced", lease.O_CREATE|lease.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		_ = unsynced.Close()
		s.writerDone = true
		op := p.Begin("sleep", nil)
		_ = p.Clock().Sleep(context.Background(), time.Minute)
		p.End(op, "woke")
	})
	w.FaultHook(FaultCorrupt, func(w *World) {
		if s.writerDone && !s.fired {
			s.fired = true
			s.powerLossAt = w.Now()
			w.PowerLoss(alpha)
		}
	})
	w.OnPowerLoss(func(h *Host) func() {
		s.order = append(s.order, "before")
		_, err := volume.Root().Lstat("/d/unsynced")
		s.hookHost, s.writerAlive, s.unsyncedBefore = h, writer.Alive(), err == nil
		return func() {
			s.order = append(s.order, "after")
			_, err := volume.Root().Lstat("/d/unsynced")
			s.after = err == nil
		}
	})
	w.OnExit(func(p *Proc, reason ExitReason) {
		if reason != ExitPowerLoss {
			return
		}
		s.order = append(s.order, "exit")
		s.bootAfter = alpha.Table().BootID()
		q, err := w.Spawn(alpha, ProcSpec{Name: "reader"}, func(p *Proc) {
			_, err := p.FS().Lstat("/d/synced")
			s.syncedOK = err == nil
			_, err = p.FS().Lstat("/d/unsynced")
			s.unsyncedOK = err == nil
		})
		if err != nil {
			panic(err)
		}
		s.reader, s.readerTicks = q, q.Table().StartTicks
	})
	return err
}

func TestPowerLoss(t *testing.T) {
	plan := &FaultPlan{}
	plan.Set(FaultCorrupt, 1) // the scenario's hook decides when to fire
	for _, shared := range []bool{false, true} {
		unsyncedLost := 0
		for seed := uint64(1); seed <= 20; seed++ {
			s := &powerLossScenario{shared: shared}
			r := Run(Config{Seed: seed, StepsMax: 1000, Faults: plan, Setup: s.setup})
			if r.Outcome != OutcomeOK || !s.fired {
				t.Fatalf("shared=%v seed %d: %v %s (fired %v)", shared, seed, r.Outcome, r.Message, s.fired)
			}
			if s.bootAfter == s.bootBefore || s.reader.Table().PID != 1 || s.readerTicks != 0 {
				t.Fatalf("after reboot: boot %q (was %q), reader pid %d ticks %d",
					s.bootAfter, s.bootBefore, s.reader.Table().PID, s.readerTicks)
			}
			if !s.syncedOK {
				t.Fatalf("shared=%v seed %d: a synced file did not survive power loss", shared, seed)
			}
			if !s.unsyncedOK {
				unsyncedLost++
			}
			sleep := r.History[0]
			if !sleep.Unknown || sleep.Return != s.powerLossAt {
				t.Fatalf("sleep cut by power loss: %+v, want unknown at %d", sleep, s.powerLossAt)
			}
			// The hook saw the page cache before the crash (the writer
			// alive, its unsynced file there), then the crash state the
			// reader saw, before the exit hook ran.
			if want := []string{"before", "after", "exit"}; !slices.Equal(s.order, want) || s.hookHost.Name() != "alpha" {
				t.Fatalf("shared=%v seed %d: power-loss hook order %v on %s, want %v on alpha", shared, seed, s.order,
					s.hookHost.Name(), want)
			}
			if !s.writerAlive || !s.unsyncedBefore || s.after != s.unsyncedOK {
				t.Fatalf("shared=%v seed %d: the hook saw writer alive %v, unsynced file before %v, after %v (reader: %v)",
					shared, seed, s.writerAlive, s.unsyncedBefore, s.after, s.unsyncedOK)
			}
			if shared && !s.betaFinished {
				t.Fatalf("seed %d: beta did not survive alpha's power loss", seed)
			}
		}
		if shared && unsyncedLost != 0 {
			t.Fatalf("a shared mount lost unsynced files in %d runs: it must survive a client's power loss", unsyncedLost)
		}
		if !shared && unsyncedLost == 0 {
			t.Fatalf("the unsynced file survived every local power loss")
		}
	}
}

func TestNoLeaksAfterCrashingRuns(t *testing.T) {
	run := func(seeds uint64) {
		for seed := uint64(1); seed <= seeds; seed++ {
			r := Run(churnConfig(seed, hotPlan()))
			if r.Outcome == OutcomeViolation {
				t.Fatalf("seed %d: %s", seed, r.Message)
			}
		}
	}
	run(20) // warm up pools and caches
	goroutines := runtime.NumGoroutine()
	heap := liveHeap()
	run(300)
	if now := runtime.NumGoroutine(); now > goroutines {
		t.Fatalf("goroutines %d after crashing runs, %d before", now, goroutines)
	}
	if now := liveHeap(); now > heap+1<<20 {
		t.Fatalf("live heap %d after crashing runs, %d before", now, heap)
	}
}

func liveHeap() uint64 {
	var stats runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}

func TestFaultPlanRoundTrip(t *testing.T) {
	plan := DrawFaultPlan(NewDecisions(7))
	parsed, err := ParseFaultPlan(plan.String())
	if err != nil || parsed.String() != plan.String() {
		t.Fatalf("parse %q: %v, %q", plan.String(), err, parsed.String())
	}
	if zero := DrawFaultPlan(ReplayDecisions(nil)); zero != (FaultPlan{}) {
		t.Fatalf("an all-zero decision list enabled faults: %v", zero)
	}
	if _, err := ParseFaultPlan("crash=2"); err == nil {
		t.Fatal("probability 2 parsed")
	}
}

func TestEveryGenericFaultFires(t *testing.T) {
	probes := map[string]int{}
	for seed := uint64(1); seed <= 60; seed++ {
		r := Run(churnConfig(seed, hotPlan()))
		if r.Outcome == OutcomeViolation || r.Outcome == OutcomeNondeterminism {
			t.Fatalf("seed %d: %v %s", seed, r.Outcome, r.Message)
		}
		for name, count := range r.Probes {
			probes[name] += count
		}
	}
	for _, name := range []string{"crash", "powerloss", "pidchurn", "pid-reused", "zombie", "zombie-threads", "upgrade", "fserror", "clockstep", "inspect-unknown"} {
		if probes[name] == 0 {
			t.Errorf("probe %s never fired in 60 hot seeds: %v", name, probes)
		}
	}
}

func TestTraceAndKnobs(t *testing.T) {
	var trace strings.Builder
	cfg := churnConfig(4, hotPlan())
	cfg.Trace = &trace
	r := Run(cfg)
	lines := strings.Split(trace.String(), "\n")
	for i, knob := range r.Knobs {
		if lines[i] != knob {
			t.Fatalf("trace line %d %q, want knob %q", i, lines[i], knob)
		}
	}
	if !slices.Contains(r.Knobs, "crash=0.0100") || !slices.Contains(r.Knobs, "seed=4") {
		t.Fatalf("knobs %v", r.Knobs)
	}
	text := trace.String()
	for _, want := range []string{"spawn proc=worker-0 host=alpha pid=1", "op=openfile path=/data/w-", "end outcome="} {
		if !strings.Contains(text, want) {
			t.Fatalf("trace lacks %q", want)
		}
	}
	if r.Summary() == "" || !strings.Contains(r.Summary(), "outcome="+r.Outcome.String()) {
		t.Fatalf("summary %q", r.Summary())
	}
}

// TestPCTDepth: the empty-lock race needs one preemption (depth 2). PCT with
// depth 1 never preempts, so it cannot find it; with depth 2 and 3 it finds
// it at a rate no lower than its bound 1/(n*k^(d-1)) allows, measured loosely.
func TestPCTDepth(t *testing.T) {
	const seeds = 300
	for _, tt := range []struct {
		depth      int
		wantFound  bool
		boundFound float64
	}{{1, false, 0}, {2, true, PCTBound(2, 40, 2)}, {3, true, PCTBound(2, 40, 3)}} {
		found := 0
		for seed := uint64(1); seed <= seeds; seed++ {
			lock := &toyLock{breakEmpty: true}
			r := Run(Config{Seed: seed, StepsMax: 2000, PCTSteps: 40, PCTDepth: tt.depth, Scheduler: SchedulerPCT,
				Faults: &FaultPlan{}, Setup: lock.setup(2)})
			if r.Outcome == OutcomeViolation {
				found++
			}
		}
		if (found > 0) != tt.wantFound {
			t.Fatalf("depth %d found the race in %d of %d seeds", tt.depth, found, seeds)
		}
		if rate := float64(found) / seeds; rate < tt.boundFound/2 {
			t.Fatalf("depth %d: rate %v far below the PCT bound %v", tt.depth, rate, tt.boundFound)
		}
	}
}

// TestZeroDecisionsAreBoring: an empty replay list answers 0 everywhere,
// which must mean the random scheduler, no faults, and always the first
// runnable process, so a shrinker can cut any suffix.
func TestZeroDecisionsAreBoring(t *testing.T) {
	var order []string
	setup := func(w *World) error {
		order = nil
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		for _, name := range []string{"a", "b"} {
			if _, err := w.Spawn(h, ProcSpec{Name: name}, func(p *Proc) {
				for i := 0; i < 3; i++ {
					order = append(order, p.Name())
					p.Clock().Now()
				}
			}); err != nil {
				return err
			}
		}
		return nil
	}
	r := Run(Config{Replay: []uint32{}, Setup: setup})
	if r.Outcome != OutcomeOK || len(r.Probes) != 0 || !slices.Contains(r.Knobs, "scheduler=random") {
		t.Fatalf("%v probes %v knobs %v", r.Outcome, r.Probes, r.Knobs)
	}
	if got := strings.Join(order, ""); got != "aaabbb" {
		t.Fatalf("order %q, want the first runnable process to run to the end first", got)
	}
	for _, d := range r.Decisions {
		if d != 0 {
			t.Fatalf("recorded decisions %v, want zeros", r.Decisions)
		}
	}
	// Any prefix of a real run's decisions, padded with zeros, still runs.
	full := Run(churnConfig(9, hotPlan()))
	for _, cut := range []int{0, len(full.Decisions) / 3, len(full.Decisions) / 2} {
		cfg := churnConfig(9, hotPlan())
		cfg.Replay = full.Decisions[:cut]
		if r := Run(cfg); r.Outcome == OutcomeViolation || r.Outcome == OutcomeNondeterminism {
			t.Fatalf("prefix %d: %v %s", cut, r.Outcome, r.Message)
		}
	}
}

func TestInjectedErrors(t *testing.T) {
	var statErr error
	var inspection lease.Inspection
	plan := &FaultPlan{}
	plan.Set(FaultFSError, 1)
	plan.Set(FaultEACCES, 1)
	r := Run(Config{Seed: 2, Faults: plan, Setup: func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, err := w.Spawn(h, ProcSpec{}, func(p *Proc) {
			_, statErr = p.FS().Lstat("/")
			inspection = p.Inspector().Inspect(p.Table().PID)
		})
		return err
	}})
	var pathErr *fs.PathError
	if !errors.As(statErr, &pathErr) || (pathErr.Err != syscall.EIO && pathErr.Err != syscall.ENOSPC) {
		t.Fatalf("Lstat under fserror=1: %v", statErr)
	}
	if inspection.Kind != lease.InspectUnknown || !strings.Contains(inspection.Diagnostic, "permission denied") {
		t.Fatalf("Inspect under eacces=1: %+v", inspection)
	}
	if r.Outcome != OutcomeOK || r.Probes["fserror"] != 1 {
		t.Fatalf("%v probes %v", r.Outcome, r.ProbeLines())
	}
}

// TestHarnessLooksAreNotInjected: under fserror=1 a process's own Lstat
// fails, but the harness's looks at the volume in the same step (the root
// view, and a view Volume.FS gives for a co-tenant's uid) neither fail nor
// draw: the process's next call fails as if the looks had not been made.
func TestHarnessLooksAreNotInjected(t *testing.T) {
	run := func(look bool) (decisions int, lookErrs []error, after error) {
		plan := &FaultPlan{}
		plan.Set(FaultFSError, 1)
		r := Run(Config{Seed: 2, Faults: plan, Setup: func(w *World) error {
			v := w.AddVolume("disk")
			h := w.AddHost(HostSpec{Name: "alpha", Volume: v})
			_, err := w.Spawn(h, ProcSpec{}, func(p *Proc) {
				if look {
					_, rootErr := v.Root().Lstat("/")
					_, userErr := v.FS().View(1000).Lstat("/")
					f, openErr := v.FS().View(0).OpenFile("/f", lease.O_CREATE|lease.O_RDWR, 0o600)
					lookErrs = append(lookErrs, rootErr, userErr, openErr)
					if openErr == nil {
						_, writeErr := f.Write([]byte("x"))
						lookErrs = append(lookErrs, writeErr, f.Sync(), f.Close())
					}
				}
				_, after = p.FS().Lstat("/")
			})
			return err
		}})
		return len(r.Decisions), lookErrs, after
	}
	decisions, lookErrs, after := run(true)
	plainDecisions, _, plainAfter := run(false)
	for i, err := range lookErrs {
		if err != nil {
			t.Errorf("harness look %d under fserror=1: %v", i, err)
		}
	}
	if after == nil || after.Error() != plainAfter.Error() || decisions != plainDecisions {
		t.Fatalf("the looks changed the process's draws: %v (%d decisions) vs %v (%d)", after, decisions, plainAfter, plainDecisions)
	}
}

// countingFilesystem checks the runtime's contract with a filesystem: every
// view a process got is closed exactly once, whether the process finished,
// crashed, lost power, or was cut off by the end of the run.
type countingFilesystem struct {
	Filesystem
	open    map[lease.FS]bool
	doubles int
}

func (c *countingFilesystem) View(uid uint32) lease.FS {
	v := c.Filesystem.View(uid)
	c.open[v] = true
	return v
}

func (c *countingFilesystem) CloseAll(v lease.FS) {
	if !c.open[v] {
		c.doubles++
	}
	delete(c.open, v)
	c.Filesystem.CloseAll(v)
}

func TestEveryProcessViewIsClosed(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		var volumes []*countingFilesystem
		cfg := churnConfig(seed, hotPlan())
		cfg.StepsMax = 50 + int(seed)*10 // cut some runs off mid-flight
		cfg.Filesystem = func(fc FilesystemConfig) Filesystem {
			c := &countingFilesystem{Filesystem: SimfsFilesystem(fc), open: map[lease.FS]bool{}}
			volumes = append(volumes, c)
			return c
		}
		r := Run(cfg)
		for _, c := range volumes {
			if c.doubles != 0 || len(c.open) > 0 {
				t.Fatalf("seed %d (%v after %d steps): %d views left open, %d closed twice",
					seed, r.Outcome, r.Steps, len(c.open), c.doubles)
			}
		}
	}
}

// A hook that uses a process's environment panics, and the run ends as a
// harness panic, not a crash of the test binary.
func TestEnvironmentOutsideBodyPanics(t *testing.T) {
	plan := &FaultPlan{}
	plan.Set(FaultCorrupt, 1)
	r := Run(Config{Seed: 1, Faults: plan, Setup: func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		p, err := w.Spawn(h, ProcSpec{Name: "victim"}, func(p *Proc) { p.Clock().Now() })
		w.FaultHook(FaultCorrupt, func(*World) { _, _ = p.FS().Lstat("/") })
		return err
	}})
	if r.Outcome != OutcomeViolation || !strings.HasPrefix(r.Message, "the harness panicked at step ") ||
		!strings.Contains(r.Message, "victim's environment used from outside its body") {
		t.Fatalf("%v: %s", r.Outcome, r.Message)
	}
	if n := runtime.NumGoroutine(); n > 10 {
		t.Fatalf("%d goroutines after a panicking run", n)
	}
}

func TestEndlessSleepDoesNotOverflow(t *testing.T) {
	var before, after time.Duration
	r := Run(Config{Seed: 1, Faults: &FaultPlan{}, Setup: func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, err := w.Spawn(h, ProcSpec{}, func(p *Proc) {
			for i := 0; i < 3; i++ {
				before = p.Clock().Monotonic()
				_ = p.Clock().Sleep(context.Background(), time.Duration(1<<63-1))
				after = p.Clock().Monotonic()
			}
		})
		return err
	}})
	if r.Outcome != OutcomeOK || after < before || after < 1<<61 {
		t.Fatalf("%v %s: monotonic %v then %v", r.Outcome, r.Message, before, after)
	}
}

func TestDecisionsFormatRoundTrip(t *testing.T) {
	for _, list := range [][]uint32{{}, {0}, {0, 0, 0, 5, 1, 1, 0}, Run(churnConfig(3, nil)).Decisions} {
		text := FormatDecisions(list)
		parsed, err := ParseDecisions(text)
		if err != nil || !slices.Equal(parsed, list) {
			t.Fatalf("%q: %v, %v", text, err, parsed)
		}
	}
	if got := FormatDecisions([]uint32{0, 0, 0, 5, 1, 1, 0}); got != "0*3,5,1*2,0" {
		t.Fatalf("format %q", got)
	}
	for _, bad := range []string{"x", "1*0", "1*-2", "4294967296", "1,", "1*99999999999"} {
		if _, err := ParseDecisions(bad); err == nil {
			t.Fatalf("parsed %q", bad)
		}
	}
}

// TestRecycledDecisionListsChangeNothing: a run recording into a list that
// an earlier run recycled records the same decisions as a fresh one.
func TestRecycledDecisionListsChangeNothing(t *testing.T) {
	plan := AllFaultsPlan(7)
	config := func() Config { return churnConfig(7, &plan) }
	fresh := Run(config())
	want := append([]uint32(nil), fresh.Decisions...)
	Recycle(&fresh)
	if fresh.Decisions != nil {
		t.Fatal("Recycle left the list in the result")
	}
	for range 3 {
		again := Run(config())
		if !slices.Equal(again.Decisions, want) || again.Hash != Run(config()).Hash {
			t.Fatalf("a recycled list changed the run: %d decisions, want %d", len(again.Decisions), len(want))
		}
		Recycle(&again)
	}
}

// TestHashPathSeparatesPaths: the step hash tells apart paths that differ
// in one byte, in length only, or across the eight-byte word boundary.
func TestHashPathSeparatesPaths(t *testing.T) {
	seen := map[uint64]string{}
	paths := []string{"", "\x00", "\x00\x00", "/", "/ns", "/ns/", "/ns/receiver.lock", "/ns/receiver.lock/owner.json",
		"/ns/receiver.lock/owner.jso", "/ns/receiver.lock/owner.jsoN", "abcdefgh", "abcdefgh\x00", "abcdefg", "bbcdefgh"}
	for _, p := range paths {
		h := hashPath(p)
		if other, dup := seen[h]; dup {
			t.Fatalf("hashPath(%q) == hashPath(%q)", p, other)
		}
		seen[h] = p
		if hashPath(p) != h {
			t.Fatalf("hashPath(%q) is not deterministic", p)
		}
	}
}

// TestSharedCoroutinesChangeNothing: runs that borrow one Coroutines, one
// after another (a campaign worker), hash and decide exactly as runs with
// their own, crashes and power losses included; each returns them idle.
func TestSharedCoroutinesChangeNothing(t *testing.T) {
	shared := NewCoroutines()
	defer shared.Close()
	plan := AllFaultsPlan(11)
	for seed := uint64(1); seed <= 24; seed++ {
		config := churnConfig(seed, &plan)
		own := Run(config)
		config.Coroutines = shared
		borrowed := Run(config)
		if own.Hash != borrowed.Hash || own.Outcome != borrowed.Outcome || !slices.Equal(own.Decisions, borrowed.Decisions) {
			t.Fatalf("seed %d: own coroutines %v %x, shared %v %x", seed, own.Outcome, own.Hash, borrowed.Outcome, borrowed.Hash)
		}
		if len(shared.pool.idle) != len(shared.pool.all) || len(shared.pool.all) == 0 {
			t.Fatalf("seed %d: %d of %d coroutines idle", seed, len(shared.pool.idle), len(shared.pool.all))
		}
	}
}

// TestChanceEqualsFloat64Draw: Chance answers rand.Rand.Float64() < p from
// the same source, for probabilities down to subnormal ones.
func TestChanceEqualsFloat64Draw(t *testing.T) {
	for _, p := range []float64{1, 0.999, 0.5, 0.3, 0.0025, 1e-9, 1e-300, 5e-324, 2} {
		d := NewDecisions(99)
		reference := rand.New(rand.NewPCG(99, 99^0x9e3779b97f4a7c15))
		for i := range 2000 {
			if got, want := d.Chance(p), reference.Float64() < p; got != want {
				t.Fatalf("p=%g draw %d: Chance %v, Float64() < p %v", p, i, got, want)
			}
		}
	}
}

// panicOfReaderRun runs one process that reads the clock 100 times, with
// the invariant check made from w and the process, and returns the
// message of the harness panic the run ended in ("" if it did not).
func panicOfReaderRun(trace io.Writer, invariant func(w *World, p *Proc) func() error) string {
	r := Run(Config{Seed: 1, Faults: &FaultPlan{}, Trace: trace, Setup: func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		p, err := w.Spawn(h, ProcSpec{Name: "reader"}, func(p *Proc) {
			for range 100 {
				p.Clock().Now()
			}
		})
		if err == nil {
			w.Invariant("under test", invariant(w, p))
		}
		return err
	}})
	if r.Outcome != OutcomeViolation || !strings.HasPrefix(r.Message, "the harness panicked at step ") {
		return ""
	}
	return r.Message
}

// An invariant that panics while a process runs the step's end inline
// (step.go) ends the run as a harness panic with its own message, as it
// would on the main loop's side, not as the process's own panic.
func TestInvariantPanicInAnInlineStepIsAHarnessPanic(t *testing.T) {
	message := panicOfReaderRun(nil, func(w *World, _ *Proc) func() error {
		return func() error {
			if w.Step() == 5 {
				if w.inlineProc == nil {
					panic("test: step 5 was not inline")
				}
				panic("harness invariant broken at step 5")
			}
			return nil
		}
	})
	if !strings.HasPrefix(message, "the harness panicked at step 5: harness invariant broken at step 5") ||
		!strings.Contains(message, "raised in a step run inline") {
		t.Fatalf("message %q", message)
	}
	if n := runtime.NumGoroutine(); n > 10 {
		t.Fatalf("%d goroutines after a panicking run", n)
	}
}

// An invariant observes: one that kills a process is refused with a panic
// naming it, traced (main loop) or not (the step's end may run inline on
// the very process it would kill, which cannot unwind itself).
func TestInvariantThatKillsPanics(t *testing.T) {
	for _, trace := range []io.Writer{nil, io.Discard} {
		message := panicOfReaderRun(trace, func(w *World, p *Proc) func() error {
			return func() error {
				if w.Step() == 5 {
					w.Crash(p)
				}
				return nil
			}
		})
		if !strings.Contains(message, "an invariant killed reader") {
			t.Fatalf("traced=%v: panic %v", trace != nil, message)
		}
	}
	if n := runtime.NumGoroutine(); n > 10 {
		t.Fatalf("%d goroutines after panicking runs", n)
	}
}

// RunTwice runs a seed traced, then untraced (inline). A harness panic is
// raised on the main loop's side in the first and on the process's
// coroutine in the second, with different stacks: the same finding, not
// a nondeterminism.
func TestHarnessPanicRunTwiceIsDeterministic(t *testing.T) {
	r := RunTwice(Config{Seed: 1, Faults: &FaultPlan{}, Trace: io.Discard, Setup: func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, err := w.Spawn(h, ProcSpec{Name: "reader"}, func(p *Proc) {
			for range 100 {
				p.Clock().Now()
			}
		})
		w.Invariant("under test", func() error {
			if w.Step() == 5 {
				panic("harness invariant broken at step 5")
			}
			return nil
		})
		return err
	}})
	if r.Outcome != OutcomeViolation || !strings.HasPrefix(r.Message, "the harness panicked at step 5: harness invariant broken") {
		t.Fatalf("%v: %s", r.Outcome, r.Message)
	}
}
