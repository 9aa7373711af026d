package simtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/sim"
)

// interleaveEngine is a toy engine whose planted failure needs a decision
// pattern: two processes each take four steps, and with planted the run
// fails when their steps interleave as a, b, a, b. The all-boring schedule
// (run the first runnable process) runs a to its end first and passes;
// the fuzzer, or an input written for the test, has to steer the
// scheduler. Without planted it never fails.
func interleaveEngine(planted bool) *campaign.Engine {
	return &campaign.Engine{Name: "interleave", Doc: "simtest's planted failing engine", StepsMax: 200, WorkloadVersion: 1,
		Setup: func(campaign.Params) func(w *sim.World) error {
			return func(w *sim.World) error {
				volume := w.AddVolume("disk")
				host := w.AddHost(sim.HostSpec{Name: "alpha", PIDMax: 16, Volume: volume})
				var order strings.Builder
				for _, name := range []string{"a", "b"} {
					if _, err := w.Spawn(host, sim.ProcSpec{Name: name, UID: 1000}, func(p *sim.Proc) {
						for range 4 {
							_, _ = p.FS().Stat("/")
							order.WriteString(name)
						}
					}); err != nil {
						return err
					}
				}
				w.Invariant("no abab", func() error {
					if planted && strings.Contains(order.String(), "abab") {
						return fmt.Errorf("the steps interleaved as abab: %s", order.String())
					}
					return nil
				})
				return nil
			}
		},
		Check: func(sim.Result, bool) campaign.Verdict { return campaign.Verdict{OK: true} },
	}
}

// interleaveCrasher is a fuzz input failing interleaveEngine(true) with
// Faults "none": seed 2 (the random scheduler) and the decisions that steer
// it into a, b, a, b (found by enumerating the 4,096 0/1 patterns of 12
// decisions: 512 of them fail for seed 2).
var interleaveCrasher = append(binary.LittleEndian.AppendUint64(nil, 2), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0)

func interleaveOptions(t *testing.T, planted bool) (*campaign.Catalog, campaign.Options, Options) {
	t.Helper()
	engine := interleaveEngine(planted)
	catalog := campaign.NewCatalog(engine)
	o := Options{Faults: "none", SeedDir: t.TempDir(), ShrinkRuns: 500}.resolve()
	options, err := o.campaign(catalog, engine, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	return catalog, options, o
}

func seedFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "interleave", "*.seed"))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func leasesimReplay(path string) string { return "leasesim replay " + path }

// Outside the fuzzer a failing input is shrunk into a seed file whose
// replay fails the same way, and the error names the file and its command.
func TestFuzzInputStoresShrunkSeedFile(t *testing.T) {
	catalog, options, o := interleaveOptions(t, true)
	err := fuzzInput(catalog, options, o, "FuzzInterleave", interleaveCrasher, true, leasesimReplay)
	var failure *FuzzFailure
	if !errors.As(err, &failure) {
		t.Fatalf("fuzzInput = %v, want a *FuzzFailure", err)
	}
	if failure.Finding.Class != "invariant no abab" || failure.Shrunk.Finding.Class != failure.Finding.Class {
		t.Fatalf("finding %v, shrunk to %v", failure.Finding, failure.Shrunk.Finding)
	}
	paths := seedFilesUnder(t, o.SeedDir)
	if len(paths) != 1 || failure.SeedFile != paths[0] || failure.Replay != leasesimReplay(paths[0]) {
		t.Fatalf("seed files %v, failure %+v", paths, failure)
	}
	if !strings.Contains(err.Error(), "replay: leasesim replay "+paths[0]) {
		t.Fatalf("error %q does not end in the replay command", err)
	}
	if failure.HTML != "" {
		t.Fatalf("a page %s written without Options.HTML", failure.HTML)
	}
	file, err := campaign.ReadSeedFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if choices := campaign.Choices(file.Spec.Decisions); choices > 2 || choices != failure.Shrunk.ChoicesAfter {
		t.Fatalf("seed file has %d choices (shrink says %d): %v", choices, failure.Shrunk.ChoicesAfter, file.Spec.Decisions)
	}
	_, finding, _, err := catalog.Execute(file.Spec, nil, false)
	if err != nil || finding.Class != failure.Finding.Class {
		t.Fatalf("the seed file replays to %v (err %v), want %v", finding, err, failure.Finding)
	}
}

// With Options.HTML the shrunk crasher's page is written, and the error
// names it.
func TestFuzzInputWritesItsPage(t *testing.T) {
	catalog, options, o := interleaveOptions(t, true)
	o.HTML = filepath.Join(t.TempDir(), "crasher.html")
	err := fuzzInput(catalog, options, o, "FuzzInterleave", interleaveCrasher, true, leasesimReplay)
	var failure *FuzzFailure
	if !errors.As(err, &failure) || failure.HTML != o.HTML || !strings.HasSuffix(err.Error(), "; html: "+o.HTML) {
		t.Fatalf("fuzzInput = %v, want a failure naming page %s", err, o.HTML)
	}
	page, err := os.ReadFile(o.HTML)
	if err != nil || !strings.Contains(string(page), "invariant no abab") {
		t.Fatalf("page %s (err %v) lacks the finding", o.HTML, err)
	}
}

// Inside a fuzz worker (store false) a failing input only fails: the
// fuzzer minimizes it by running it again and again, and each run must
// not write a seed file.
func TestFuzzInputInWorkerOnlyFails(t *testing.T) {
	catalog, options, o := interleaveOptions(t, true)
	err := fuzzInput(catalog, options, o, "FuzzInterleave", interleaveCrasher, false, leasesimReplay)
	var failure *FuzzFailure
	if !errors.As(err, &failure) || failure.SeedFile != "" || !strings.Contains(err.Error(), "go test -run=FuzzInterleave/<input>") {
		t.Fatalf("fuzzInput = %v", err)
	}
	if paths := seedFilesUnder(t, o.SeedDir); len(paths) != 0 {
		t.Fatalf("a fuzz worker wrote seed files %v", paths)
	}
}

// A passing input is no error and writes nothing, and so is the crasher
// on the engine without its planted bug.
func TestFuzzInputPasses(t *testing.T) {
	boring := binary.LittleEndian.AppendUint64(nil, 2)
	for _, tc := range []struct {
		name    string
		planted bool
		data    []byte
	}{{"boring schedule", true, boring}, {"no planted bug", false, interleaveCrasher}} {
		t.Run(tc.name, func(t *testing.T) {
			catalog, options, o := interleaveOptions(t, tc.planted)
			if err := fuzzInput(catalog, options, o, "FuzzInterleave", tc.data, true, leasesimReplay); err != nil {
				t.Fatal(err)
			}
			if paths := seedFilesUnder(t, o.SeedDir); len(paths) != 0 {
				t.Fatalf("a passing input wrote %v", paths)
			}
		})
	}
}

// plantedSeedDirVariable, set, makes FuzzInterleave fuzz the planted
// engine and store seed files there: TestCrasherRerunBecomesSeedFile sets
// it in a child go test process. Unset, FuzzInterleave fuzzes the engine
// without the bug, and its corpus (the crasher in
// testdata/fuzz/FuzzInterleave/) passes.
const plantedSeedDirVariable = "LEASEKIT_SIMTEST_PLANTED_SEEDDIR"

func FuzzInterleave(f *testing.F) {
	dir := os.Getenv(plantedSeedDirVariable)
	o := Options{Faults: "none", SeedDir: dir, ShrinkRuns: 500, ReplayCommand: leasesimReplay}
	if dir == "" {
		o.SeedDir = f.TempDir()
	}
	FuzzWith(f, interleaveEngine(dir != ""), o)
}

// The path a crasher takes: go test -fuzz writes the failing input to
// testdata/fuzz/FuzzX/<hash> and prints `go test -run=FuzzX/<hash>`;
// that rerun (here in a child process of this test binary, on the stored
// crasher testdata/fuzz/FuzzInterleave/crasher) shrinks the run into a
// seed file and prints its replay command.
func TestCrasherRerunBecomesSeedFile(t *testing.T) {
	corpus, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzInterleave", "crasher"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "go test fuzz v1\n[]byte(" + strconv.Quote(string(interleaveCrasher)) + ")\n"; string(corpus) != want {
		t.Fatalf("testdata/fuzz/FuzzInterleave/crasher is %q, want %q", corpus, want)
	}
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^FuzzInterleave$/^crasher$", "-test.v")
	child.Env = append(os.Environ(), plantedSeedDirVariable+"="+dir)
	output, err := child.CombinedOutput()
	if err == nil {
		t.Fatalf("the crasher's rerun passed:\n%s", output)
	}
	paths := seedFilesUnder(t, dir)
	if len(paths) != 1 || !strings.Contains(string(output), "replay: leasesim replay "+paths[0]) {
		t.Fatalf("seed files %v; output:\n%s", paths, output)
	}
	file, err := campaign.ReadSeedFile(paths[0])
	if err != nil || file.Expect.Class != "invariant no abab" {
		t.Fatalf("seed file %+v, err %v", file, err)
	}
}
