package leasework

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/sim"
)

// leaseCampaignOptions is the workload every lease campaign test runs:
// two hosts, two workers each, one impostor, the layout drawn per seed.
var leaseCampaignOptions = LeaseOptions{OpsPerProc: 6}

// leaseCampaignSeeds is the must-show budget: the clean engine must pass
// it, and every mutant must fail within it. It is a long test
// (internal/longtest): the default test command runs a quarter of it.
const leaseCampaignSeeds = 2000

// leaseDeterminismPeriod: every this many seeds, the run is repeated by
// RunTwice and its hash streams compared.
const leaseDeterminismPeriod = 100

// leaseFinding is one seed's failure: the run's, or porcupine's.
type leaseFinding struct {
	seed    uint64
	class   string // "violation", "liveness", "history", "nondeterminism"
	message string
}

func (f leaseFinding) String() string {
	return fmt.Sprintf("seed=%d class=%s message=%q", f.seed, f.class, f.message)
}

// leaseSeed runs one seed of the campaign and checks its history.
func leaseSeed(seed uint64, twice bool) (sim.Result, *leaseFinding) {
	plan := sim.AllFaultsPlan(seed)
	cfg := sim.Config{Seed: seed, Faults: &plan, Setup: LeaseWorkload(leaseCampaignOptions)}
	var r sim.Result
	if twice {
		r = sim.RunTwice(cfg)
	} else {
		r = sim.Run(cfg)
	}
	switch r.Outcome {
	case sim.OutcomeViolation:
		return r, &leaseFinding{seed, "violation", r.Message}
	case sim.OutcomeLiveness:
		return r, &leaseFinding{seed, "liveness", r.Message}
	case sim.OutcomeNondeterminism:
		return r, &leaseFinding{seed, "nondeterminism", r.Message}
	}
	if err := CheckLeaseHistory(r.History); err != nil {
		return r, &leaseFinding{seed, "history", err.Error()}
	}
	return r, nil
}

// leaseProbesDeclared must each fire at least once in the clean campaign:
// the workload reaches every state it is meant to exercise.
var leaseProbesDeclared = []string{
	"lease-acquired", "lease-held", "lease-released", "lease-release-not-owner", "lease-released-by-capability",
	"lease-fence-ok", "lease-fenced", "lease-impostor-fenced", "lease-reclaimed", "lease-reclaim-observed",
	"lease-reclaimed-PID is absent", "lease-reclaimed-PID start identity changed",
	"lease-reclaimed-host boot identity changed", "lease-refused-remote-owner", "lease-refused-corrupt-owner",
	"lease-refused-lifecycle-unverifiable", "lease-refused-lifecycle-busy", "lease-inspect-corrupt",
	"lease-hostile-corrupt-owner", "lease-hostile-corrupt-receiver", "lease-hostile-corrupt-guard",
	"lease-hostile-swap-receiver", "lease-hostile-swap-owner", "lease-hostile-swap-guard",
	"lease-operator-repair-owner", "lease-died-inside-fence", "lease-respawn", "lease-probe-acquired",
	"lease-probe-waits-live-zombie", "lease-bystander-on-owner-pid",
	"lease-bystander-on-owner-pid-and-tick-after-reboot",
	"crash", "powerloss", "pid-reused", "zombie-threads", "upgrade", "fserror", "clockstep",
	"lease-refused-unverifiable-owner",
}

// envSeeds returns LEASEKIT_SEEDS when set (fromEnv), else full.
func envSeeds(t *testing.T, full int) (seeds int, fromEnv bool) {
	value := os.Getenv("LEASEKIT_SEEDS")
	if value == "" {
		return full, false
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 {
		t.Fatalf("LEASEKIT_SEEDS=%q is not a positive count", value)
	}
	return n, true
}

// TestLeaseCampaign runs the lease workload on leaseCampaignSeeds seeds with
// every fault enabled and checks every history with porcupine. By default
// it asserts no finding at all, repeats a sample of seeds with RunTwice (the
// determinism self-check) and asserts the declared probes fire. With
// LEASEKIT_EXPECT_VIOLATION=1 (set by workload's TestEngineMutants, with a mutant
// overlaid on the engine) it asserts instead that the budget finds a
// finding of class LEASEKIT_EXPECT_CLASS whose message contains
// LEASEKIT_EXPECT_MESSAGE, and prints it on an "ENGINE-FINDING" line.
func TestLeaseCampaign(t *testing.T) {
	seeds, fromEnv := envSeeds(t, leaseCampaignSeeds)
	switch {
	case fromEnv || longtest.Enabled():
	case testing.Short():
		seeds = leaseCampaignSeeds / 10
		t.Logf("-short: running %d seeds instead of %d", seeds, leaseCampaignSeeds)
	default:
		seeds = leaseCampaignSeeds / 4
		t.Logf("running %d seeds instead of %d (CI=1 or LEASEKIT_LONG=1 runs all, and checks the declared probes)",
			seeds, leaseCampaignSeeds)
	}
	expect := os.Getenv("LEASEKIT_EXPECT_VIOLATION") == "1"
	wantClass, wantMessage := os.Getenv("LEASEKIT_EXPECT_CLASS"), os.Getenv("LEASEKIT_EXPECT_MESSAGE")
	probes := map[string]int{}
	var findings []leaseFinding
	steps, twice := 0, 0
	start := time.Now()
	for i := 0; i < seeds; i++ {
		seed := uint64(i + 1)
		check := !expect && i%leaseDeterminismPeriod == 0
		r, finding := leaseSeed(seed, check)
		if check {
			twice++
		}
		steps += r.Steps
		for name, count := range r.Probes {
			probes[name] += count
		}
		if finding == nil {
			continue
		}
		findings = append(findings, *finding)
		if expect && (wantClass == "" || finding.class == wantClass) && strings.Contains(finding.message, wantMessage) {
			fmt.Printf("ENGINE-FINDING %v after %d seeds\n", finding, i+1)
			t.Logf("found after %d seeds (%v): %v", i+1, time.Since(start), finding)
			return
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d seeds (%d repeated by RunTwice) in %v: %.0f seeds/s, %.0f steps/s, %d steps", seeds, twice,
		elapsed.Round(time.Millisecond), float64(seeds)/elapsed.Seconds(), float64(steps)/elapsed.Seconds(), steps)
	if expect {
		t.Fatalf("ENGINE-NOT-FOUND: %d seeds found no %q finding containing %q; other findings: %v", seeds,
			wantClass, wantMessage, findings)
	}
	for i, f := range findings {
		if i == 5 {
			t.Errorf("... and %d more findings", len(findings)-5)
			break
		}
		t.Errorf("finding %v\nreplay: LEASEKIT_SEEDS=%d go test ./workload/leasework -run TestLeaseCampaign", f, f.seed)
	}
	lines := make([]string, 0, len(probes))
	for name, count := range probes {
		lines = append(lines, fmt.Sprintf("%s=%d", name, count))
	}
	slices.Sort(lines)
	t.Logf("probes: %s", strings.Join(lines, " "))
	if seeds >= leaseCampaignSeeds {
		for _, name := range leaseProbesDeclared {
			if probes[name] == 0 {
				t.Errorf("declared probe %q never fired in %d seeds", name, seeds)
			}
		}
	}
}

// leaseMemorySeeds returns the long campaign's seed count: 20,000 under CI
// (CI set) or LEASEKIT_LONG=1, fewer otherwise (it takes minutes on one core).
func leaseMemorySeeds(t *testing.T) int {
	if longtest.Enabled() {
		return 20_000
	}
	if testing.Short() {
		t.Logf("-short: running 200 seeds instead of 20,000 (set CI=1 or LEASEKIT_LONG=1 for the full count)")
		return 200
	}
	t.Logf("running 2,000 seeds instead of 20,000 (about 2 min; set CI=1 or LEASEKIT_LONG=1 for the full count)")
	return 2_000
}

// TestLeaseMemoryFlat runs a long campaign with crashes and checks that the
// goroutine count and the live heap afterwards are back where they started:
// a run leaks no coroutine, view or history.
func TestLeaseMemoryFlat(t *testing.T) {
	seeds := leaseMemorySeeds(t)
	// The layout is drawn per seed, so power losses also crash simfs
	// volumes (random-subset and the other modes) and must pass.
	opts := LeaseOptions{Hosts: 1, ProcsPerHost: 2, OpsPerProc: 3, Impostors: -1}
	var plan sim.FaultPlan
	plan.Set(sim.FaultCrash, 0.02)
	plan.Set(sim.FaultPowerLoss, 0.002)
	plan.Set(sim.FaultZombie, 0.3)
	plan.Set(sim.FaultPIDChurn, 0.01)
	goroutinesBefore, heapBefore := liveState()
	start := time.Now()
	steps := 0
	for i := 0; i < seeds; i++ {
		r := sim.Run(sim.Config{Seed: uint64(i), Faults: &plan, Setup: LeaseWorkload(opts)})
		if r.Outcome != sim.OutcomeOK {
			t.Fatalf("seed %d: %v: %s", i, r.Outcome, r.Message)
		}
		steps += r.Steps
	}
	elapsed := time.Since(start)
	goroutinesAfter, heapAfter := liveState()
	t.Logf("%d seeds, %d steps in %v; goroutines %d -> %d; live heap %d -> %d bytes", seeds, steps,
		elapsed.Round(time.Millisecond), goroutinesBefore, goroutinesAfter, heapBefore, heapAfter)
	if goroutinesAfter > goroutinesBefore {
		t.Errorf("goroutines grew from %d to %d: a run leaks coroutines", goroutinesBefore, goroutinesAfter)
	}
	// A little slack for runtime-internal caches; a leaked run keeps
	// hundreds of kilobytes (its volumes, history and coroutines).
	if heapAfter > heapBefore+heapBefore/4+1<<20 {
		t.Errorf("live heap grew from %d to %d bytes over %d seeds", heapBefore, heapAfter, seeds)
	}
}

func liveState() (goroutines int, heap uint64) {
	var stats runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&stats)
	return runtime.NumGoroutine(), stats.HeapAlloc
}

// BenchmarkLeaseCampaign measures the campaign workload: simulated steps
// per second, seeds per second and bytes allocated per run (-benchmem).
func BenchmarkLeaseCampaign(b *testing.B) {
	b.ReportAllocs()
	steps := 0
	for i := 0; b.Loop(); i++ {
		plan := sim.AllFaultsPlan(uint64(i + 1))
		r := sim.Run(sim.Config{Seed: uint64(i + 1), Faults: &plan, Setup: LeaseWorkload(leaseCampaignOptions)})
		steps += r.Steps
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
	b.ReportMetric(float64(steps)/float64(b.N), "steps/run")
}

// BenchmarkLeaseCheck measures porcupine on campaign histories.
func BenchmarkLeaseCheck(b *testing.B) {
	plan := sim.AllFaultsPlan(1)
	r := sim.Run(sim.Config{Seed: 1, Faults: &plan, Setup: LeaseWorkload(leaseCampaignOptions)})
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckLeaseHistory(r.History); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(r.History)), "ops/history")
}

// TestLeaseDeclaredProbes runs the lease campaign (every fault on, the
// same seeds and options as TestLeaseCampaign) and fails naming any probe
// Engine().Probes lists that never fired. It costs a minute of CPU,
// so it runs under CI (or LEASEKIT_LONG=1) only.
func TestLeaseDeclaredProbes(t *testing.T) {
	if !longtest.Enabled() && os.Getenv("LEASEKIT_SEEDS") == "" {
		t.Skip("a second 2,000-seed lease campaign (about a minute): set CI=1 or LEASEKIT_LONG=1")
	}
	seeds, _ := envSeeds(t, leaseCampaignSeeds)
	probes := map[string]int{}
	for i := 0; i < seeds; i++ {
		r, _ := leaseSeed(uint64(i+1), false)
		for name, count := range r.Probes {
			probes[name] += count
		}
	}
	if missing := Engine().MissingProbes(probes); len(missing) > 0 {
		t.Errorf("lease: declared probes never fired in %d seeds: %v", seeds, missing)
	}
	for _, name := range Engine().Probes {
		t.Logf("%s=%d", name, probes[name])
	}
}
