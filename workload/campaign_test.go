package workload_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/internal/mutant"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload"
	"github.com/leasekit/leasekit/workload/admissionwork"
	"github.com/leasekit/leasekit/workload/dirleasework"
	"github.com/leasekit/leasekit/workload/leasework"
	"github.com/leasekit/leasekit/workload/workkit"
)

// engineCampaign is one engine's campaign as the tests run it: a Setup per
// seed and the history check.
type engineCampaign struct {
	name  string
	setup func() func(w *sim.World) error
	check func(history []sim.Operation) error
}

var engineCampaigns = map[string]engineCampaign{
	"lease": {name: "lease", setup: func() func(w *sim.World) error {
		return leasework.LeaseWorkload(leasework.LeaseOptions{OpsPerProc: 6}) // leasework's campaign tests' options
	}, check: leasework.CheckLeaseHistory},
	"admission": {name: "admission", setup: func() func(w *sim.World) error {
		return admissionwork.AdmissionWorkload(admissionwork.AdmissionOptions{})
	}, check: admissionwork.CheckAdmissionHistory},
	"dirlease": {name: "dirlease", setup: func() func(w *sim.World) error {
		return dirleasework.DirleaseWorkload(dirleasework.DirleaseOptions{})
	}, check: dirleasework.CheckDirleaseHistory},
}

// nameHash is the FNV-1a hash of an engine's name, which salts the seed of
// its campaign's fault plan.
func nameHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// engineCampaignSeeds is the must-show budget per engine.
const engineCampaignSeeds = 2000

// engineMustShowSeeds is an engine's must-show budget: admission's runs
// are short and one of its declared probes is rare (an operator's inspect
// of an indeterminate record whose helper still runs, about 1 run in 800),
// so it runs 8000 seeds in the time dirlease runs 2000.
func engineMustShowSeeds(name string) int {
	if name == "admission" {
		return 4 * engineCampaignSeeds
	}
	return engineCampaignSeeds
}

// campaignSeeds returns the seed count: LEASEKIT_SEEDS, else the full
// budget under CI (or LEASEKIT_LONG=1), else short with -short and
// defaultSeeds otherwise (the package's default run stays within budget).
func campaignSeeds(t *testing.T, full, short int) int {
	if value := os.Getenv("LEASEKIT_SEEDS"); value != "" {
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			t.Fatalf("LEASEKIT_SEEDS=%q is not a positive count", value)
		}
		return n
	}
	if longtest.Enabled() {
		return full
	}
	if testing.Short() {
		t.Logf("-short: running %d seeds instead of %d (CI=1 or LEASEKIT_LONG=1 runs all)", short, full)
		return short
	}
	t.Logf("running %d seeds instead of %d (CI=1 or LEASEKIT_LONG=1 runs all, and checks the declared probes)",
		engineDefaultSeeds, full)
	return engineDefaultSeeds
}

// engineDefaultSeeds is the seed count of a plain `go test ./workload`.
const engineDefaultSeeds = 400

// engineSeed runs one seed of an engine's campaign with every fault on and
// checks its history; it returns the result and a finding ("" if none).
func engineSeed(c engineCampaign, seed uint64, twice bool) (sim.Result, string, string) {
	plan := sim.AllFaultsPlan(seed ^ nameHash(c.name))
	cfg := sim.Config{Seed: seed, Faults: &plan, Setup: c.setup()}
	var r sim.Result
	if twice {
		r = sim.RunTwice(cfg)
	} else {
		r = sim.Run(cfg)
	}
	if r.Outcome != sim.OutcomeOK {
		return r, r.Outcome.String(), r.Message
	}
	if err := c.check(r.History); err != nil {
		if errors.Is(err, workkit.ErrCheckTimeout) {
			return r, "unknown", err.Error()
		}
		return r, "history", err.Error()
	}
	return r, "", ""
}

// campaignStats is what a campaign run measured.
type campaignStats struct {
	seeds   int
	elapsed time.Duration
	probes  map[string]int
	found   string // first finding, as "seed=N class=C message=M"
}

// runEngineCampaign runs seeds seeds; with stopAt set it stops at the first
// finding of that class whose message contains want.
func runEngineCampaign(t *testing.T, c engineCampaign, seeds int, expect bool, wantClass, want string) campaignStats {
	stats := campaignStats{probes: map[string]int{}}
	start := time.Now()
	failures := 0
	for i := 0; i < seeds; i++ {
		seed := uint64(i + 1)
		r, class, message := engineSeed(c, seed, !expect && i%200 == 0)
		stats.seeds++
		for name, count := range r.Probes {
			stats.probes[name] += count
		}
		if class == "" {
			continue
		}
		finding := fmt.Sprintf("seed=%d class=%s message=%q", seed, class, message)
		if expect {
			if (wantClass == "" || class == wantClass) && strings.Contains(message, want) {
				stats.found = finding
				break
			}
			continue
		}
		failures++
		if failures <= 5 {
			t.Errorf("%s finding %s\nreplay: LEASEKIT_SEEDS=%d", c.name, finding, seed)
		}
	}
	stats.elapsed = time.Since(start)
	return stats
}

func probeLines(probes map[string]int) string {
	lines := make([]string, 0, len(probes))
	for name, count := range probes {
		lines = append(lines, fmt.Sprintf("%s=%d", name, count))
	}
	slices.Sort(lines)
	return strings.Join(lines, " ")
}

// testEngineCampaign is TestAdmissionCampaign and TestDirleaseCampaign: the
// clean engine passes every seed with every fault on and fires every
// declared probe; with LEASEKIT_EXPECT_VIOLATION=1 (a mutant overlaid) it
// must find the expected finding instead, printed on an ENGINE-FINDING line.
func testEngineCampaign(t *testing.T, name string) {
	c := engineCampaigns[name]
	budget := engineMustShowSeeds(name)
	seeds := campaignSeeds(t, budget, budget/10)
	if os.Getenv("LEASEKIT_EXPECT_VIOLATION") == "1" {
		stats := runEngineCampaign(t, c, seeds, true, os.Getenv("LEASEKIT_EXPECT_CLASS"), os.Getenv("LEASEKIT_EXPECT_MESSAGE"))
		if stats.found == "" {
			t.Fatalf("ENGINE-NOT-FOUND in %d seeds", seeds)
		}
		fmt.Printf("ENGINE-FINDING %s after %d seeds\n", stats.found, stats.seeds)
		return
	}
	stats := runEngineCampaign(t, c, seeds, false, "", "")
	t.Logf("%s: %d seeds in %v: %.0f seeds/s", name, seeds, stats.elapsed.Round(time.Millisecond),
		float64(seeds)/stats.elapsed.Seconds())
	t.Logf("probes: %s", probeLines(stats.probes))
	if seeds >= budget {
		if missing := engineOf(name).MissingProbes(stats.probes); len(missing) > 0 {
			t.Errorf("%s: declared probes never fired in %d seeds: %v", name, seeds, missing)
		}
	}
}

func TestAdmissionCampaign(t *testing.T) { testEngineCampaign(t, "admission") }

func TestDirleaseCampaign(t *testing.T) { testEngineCampaign(t, "dirlease") }

// TestEngineMutants is the must-show for the checker's power: each planted
// bug (mutants/<name>), built with go test -overlay (the shipped engine
// untouched), is found by the same seed budget the clean engine passes:
// the engine's campaign test (in package dir) runs with
// LEASEKIT_EXPECT_VIOLATION=1 and prints the finding on an ENGINE-FINDING
// line. One mutant per engine and finding class (a violation, a liveness
// finding, a non-linearizable history); `leasesim mutants --check-seeds`
// checks the whole catalog by its stored seeds.
func TestEngineMutants(t *testing.T) {
	longtest.Require(t, "builds each mutant and runs a campaign in a subprocess")
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ name, dir, test, class, message string }{
		{"fence-outside-guard", "./leasework", "TestLeaseCampaign", "violation", "inside WithCurrentLease"},
		{"ignore-start-time", "./leasework", "TestLeaseCampaign", "liveness", "held by dead owner"},
		{"admission-release-without-cas", ".", "TestAdmissionCampaign", "history", "not linearizable"},
		{"dirlease-recover-live-owner", ".", "TestDirleaseCampaign", "violation", "of live owner"},
	} {
		t.Run(m.name, func(t *testing.T) {
			planted, err := mutant.Load(repo, m.name)
			if err != nil {
				t.Fatal(err)
			}
			overlay, err := planted.WriteOverlay(repo, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			command := exec.Command("go", "test", "-overlay", overlay, "-count=1", "-run", "^"+m.test+"$", "-v", m.dir)
			command.Env = append(os.Environ(), "LEASEKIT_EXPECT_VIOLATION=1", "LEASEKIT_EXPECT_CLASS="+m.class,
				"LEASEKIT_EXPECT_MESSAGE="+m.message, "LEASEKIT_SEEDS="+strconv.Itoa(engineCampaignSeeds))
			output, err := command.CombinedOutput()
			if err != nil {
				t.Fatalf("mutant %s: no %s finding with %q in %d seeds: %v\n%s", m.name, m.class, m.message,
					engineCampaignSeeds, err, output)
			}
			for _, line := range strings.Split(string(output), "\n") {
				if strings.HasPrefix(line, "ENGINE-FINDING ") {
					t.Logf("mutant %s: %s", m.name, line)
					return
				}
			}
			t.Fatalf("mutant %s: no ENGINE-FINDING line:\n%s", m.name, output)
		})
	}
}

// engineOf returns the named engine's definition.
func engineOf(name string) *campaign.Engine {
	for _, e := range workload.Engines() {
		if e.Name == name {
			return e
		}
	}
	panic("no engine " + name)
}
