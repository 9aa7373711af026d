package simtest

import (
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/sim"
)

// The environment variables override Options, and the flags override both.
func TestResolveTakesEnvironmentThenFlags(t *testing.T) {
	t.Setenv("LEASEKIT_SEEDS", "77")
	t.Setenv("LEASEKIT_DURATION", "3s")
	t.Setenv("LEASEKIT_SHARD", "2/5")
	o := Options{Seeds: 10}.resolve()
	if o.Seeds != 77 || o.Duration != 3*time.Second || o.Shard != 2 || o.Shards != 5 {
		t.Fatalf("environment not applied: %+v", o)
	}
	*flagSeeds, *flagShard = 9, "1/3"
	defer func() { *flagSeeds, *flagShard = 0, "" }()
	o = Options{}.resolve()
	if o.Seeds != 9 || o.Shard != 1 || o.Shards != 3 {
		t.Fatalf("flags do not win: %+v", o)
	}
}

func TestResolveDefaults(t *testing.T) {
	o := Options{}.resolve()
	if o.Seeds != SeedsDefault || o.SeedDir != SeedDirDefault || o.ShrinkRuns != ShrinkRunsDefault || o.Faults != "swarm" {
		t.Fatalf("defaults: %+v", o)
	}
}

type grabLock struct{}

func (grabLock) TryLock() (bool, uint64, error) { return true, 0, nil }
func (grabLock) Unlock() error                  { return nil }

type refuseLock struct{}

func (refuseLock) TryLock() (bool, uint64, error) { return false, 0, lockwork.ErrRefused }
func (refuseLock) Unlock() error                  { return nil }

// Find shrinks a failure into a seed file whose replay command names it.
func TestFindShrinksAndStores(t *testing.T) {
	engine := lockwork.Engine(lockwork.Spec{Name: "grab", Open: func(*sim.Proc) lockwork.Lock { return grabLock{} }})
	failures, err := Find(engine, Options{Seeds: 20, SeedDir: t.TempDir()}, t.Logf)
	if err != nil || len(failures) == 0 {
		t.Fatalf("failures %v, err %v", failures, err)
	}
	f := failures[0]
	if f.Class != "invariant two holders" || !strings.HasSuffix(f.SeedFile, ".seed") || f.Choices > 20 {
		t.Fatalf("failure %+v", f)
	}
	if got := replayCommand(t)(f.SeedFile); !strings.HasPrefix(got, "go test -run '^TestFindShrinksAndStores$' -simtest.replay=") {
		t.Fatalf("replay command %q", got)
	}
}

// A campaign that never reaches the engine's declared probes fails.
func TestFindReportsMissingProbes(t *testing.T) {
	engine := lockwork.Engine(lockwork.Spec{Name: "refuse", Open: func(*sim.Proc) lockwork.Lock { return refuseLock{} }})
	failures, err := Find(engine, Options{Seeds: 20, SeedDir: t.TempDir()}, t.Logf)
	if err != nil || len(failures) != 1 || failures[0].Class != "missing probes" {
		t.Fatalf("failures %+v, err %v", failures, err)
	}
}
