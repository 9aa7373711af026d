package simtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/sim"
)

// The environment variables override Options, and the flags override both.
func TestResolveTakesEnvironmentThenFlags(t *testing.T) {
	t.Setenv("LEASEKIT_SEEDS", "77")
	t.Setenv("LEASEKIT_DURATION", "3s")
	t.Setenv("LEASEKIT_SHARD", "2/5")
	t.Setenv("LEASEKIT_HTML", "env.html")
	o := Options{Seeds: 10, HTML: "options.html"}.resolve()
	if o.Seeds != 77 || o.Duration != 3*time.Second || o.Shard != 2 || o.Shards != 5 || o.HTML != "env.html" {
		t.Fatalf("environment not applied: %+v", o)
	}
	*flagSeeds, *flagShard, *flagHTML = 9, "1/3", "flag.html"
	defer func() { *flagSeeds, *flagShard, *flagHTML = 0, "", "" }()
	o = Options{}.resolve()
	if o.Seeds != 9 || o.Shard != 1 || o.Shards != 3 || o.HTML != "flag.html" {
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

// fakeT records what run reports; Fatalf ends the run by panicking.
type fakeT struct {
	name         string
	logs, errors []string
}

type fatal struct{}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...); panic(fatal{}) }
func (f *fakeT) Failed() bool                      { return len(f.errors) > 0 }

// runFake is Run reporting into a fakeT.
func runFake(engine *campaign.Engine, o Options) (f *fakeT) {
	f = &fakeT{name: "TestFake"}
	defer func() {
		if r := recover(); r != nil && r != (fatal{}) {
			panic(r)
		}
	}()
	run(f, engine, o)
	return f
}

// With Options.HTML, each failure's message names its page: the first at
// the given name, the next ones numbered beside it; a stored seed that
// still fails gets its page the same way.
func TestRunNamesEachFailurePage(t *testing.T) {
	engine := lockwork.Engine(lockwork.Spec{Name: "grab", Open: func(*sim.Proc) lockwork.Lock { return grabLock{} }})
	dir, seeds := t.TempDir(), t.TempDir()
	page := filepath.Join(dir, "grab.html")
	f := runFake(engine, Options{Seeds: 20, SeedDir: seeds, HTML: page})
	if len(f.errors) == 0 {
		t.Fatalf("no failure reported: %v", f.logs)
	}
	for i, message := range f.errors {
		want := page
		if i > 0 {
			want = filepath.Join(dir, fmt.Sprintf("grab-%d.html", i+1))
		}
		if !strings.HasSuffix(message, "; html: "+want) {
			t.Errorf("failure %d does not end in its page %s: %s", i, want, message)
		}
		if _, err := os.Stat(want); err != nil {
			t.Errorf("failure %d: %v", i, err)
		}
	}
	stored, _ := filepath.Glob(filepath.Join(seeds, "grab", "*.seed"))
	if len(stored) != 1 {
		t.Fatalf("stored seeds %v", stored)
	}
	copyFile(t, stored[0], filepath.Join(seeds, "grab", "zz-copy.seed"))
	again := runFake(engine, Options{Seeds: 20, SeedDir: seeds, HTML: page}) // both stored seeds fail
	want := []string{page, filepath.Join(dir, "grab-2.html")}
	if len(again.errors) != len(want) {
		t.Fatalf("stored seed failures %v", again.errors)
	}
	for i, message := range again.errors {
		if !strings.Contains(message, " still finds ") || !strings.HasSuffix(message, "; html: "+want[i]) {
			t.Errorf("stored seed failure %d does not name its page %s: %s", i, want[i], message)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A stored seed that still fails stops Run before its campaign; with
// SkipStored the campaign runs past it, and a failure of the stored one's
// kind is a known finding, logged and not shrunk or reported again.
func TestSkipStoredLooksPastAStoredFailure(t *testing.T) {
	engine := lockwork.Engine(lockwork.Spec{Name: "grab", Open: func(*sim.Proc) lockwork.Lock { return grabLock{} }})
	seeds := t.TempDir()
	if first := runFake(engine, Options{Seeds: 20, SeedDir: seeds}); len(first.errors) != 1 {
		t.Fatalf("first campaign: %v", first.errors)
	}
	stored, _ := filepath.Glob(filepath.Join(seeds, "grab", "*.seed"))
	campaignRan := func(f *fakeT) bool {
		return slices.ContainsFunc(f.logs, func(line string) bool { return strings.HasPrefix(line, "simtest: grab: 20 runs,") })
	}
	stopped := runFake(engine, Options{Seeds: 20, SeedDir: seeds})
	if len(stopped.errors) != 1 || !strings.Contains(stopped.errors[0], " still finds ") || campaignRan(stopped) {
		t.Fatalf("without SkipStored: errors %v, campaign ran %v", stopped.errors, campaignRan(stopped))
	}
	skipped := runFake(engine, Options{Seeds: 20, SeedDir: seeds, SkipStored: true})
	if len(skipped.errors) != 1 || !strings.Contains(skipped.errors[0], " still finds ") || !campaignRan(skipped) {
		t.Fatalf("with SkipStored: errors %v, campaign ran %v", skipped.errors, campaignRan(skipped))
	}
	for _, want := range []string{"simtest: grab: known finding violation (invariant two holders) again in ",
		"simtest: grab: the campaign found only known findings"} {
		if !slices.ContainsFunc(skipped.logs, func(line string) bool { return strings.HasPrefix(line, want) }) {
			t.Errorf("log lacks %q:\n%s", want, strings.Join(skipped.logs, "\n"))
		}
	}
	if after, _ := filepath.Glob(filepath.Join(seeds, "grab", "*.seed")); len(after) != len(stored) {
		t.Fatalf("a known finding was stored again: %v, before %v", after, stored)
	}
}

// LEASEKIT_SKIP_STORED and -simtest.skip-stored set SkipStored.
func TestSkipStoredFromEnvironmentAndFlag(t *testing.T) {
	if (Options{}).resolve().SkipStored {
		t.Fatal("SkipStored without flag or variable")
	}
	t.Setenv("LEASEKIT_SKIP_STORED", "1")
	if !(Options{}).resolve().SkipStored {
		t.Fatal("LEASEKIT_SKIP_STORED=1 not applied")
	}
	t.Setenv("LEASEKIT_SKIP_STORED", "")
	*flagSkip = true
	defer func() { *flagSkip = false }()
	if !(Options{}).resolve().SkipStored {
		t.Fatal("-simtest.skip-stored not applied")
	}
}
