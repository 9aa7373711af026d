package pidfile_test

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/pidfile"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/simtest"
)

// The harness finds the PID-file lock broken by PID reuse: a crashed
// holder's PID, taken by another process, keeps its stale lock "held".
func TestPIDFileIsBrokenByPIDReuse(t *testing.T) {
	examplekit.RequireFinds(t, pidfile.Engine(), simtest.Options{Seeds: 300}, "(PID reuse)")
}

// leasekit's lease passes the PID-file lock's workload.
func TestLeasePassesPIDFileWorkload(t *testing.T) {
	simtest.Run(t, lockwork.Engine(examplekit.LeaseSpec(pidfile.Spec())), simtest.Options{Seeds: 300})
}

// go test -fuzz=FuzzLeaseOnPIDFileWorkload explores the lease on the same
// workload from fuzzer-chosen decision streams; go test runs its seed corpus.
func FuzzLeaseOnPIDFileWorkload(f *testing.F) {
	simtest.Fuzz(f, lockwork.Engine(examplekit.LeaseSpec(pidfile.Spec())))
}

// With Options.HTML (-simtest.html, $LEASEKIT_HTML) a failure writes its
// page, porcupine's visualization of the failing run's history among it,
// and the failure names the page.
func TestFailureWritesPorcupinePageOfTheFailingRun(t *testing.T) {
	engine := pidfile.Engine()
	page := filepath.Join(t.TempDir(), "pidfile.html")
	failures, err := simtest.Find(engine, simtest.Options{Seeds: 300, SeedDir: t.TempDir(), HTML: page}, t.Logf)
	if err != nil || len(failures) == 0 {
		t.Fatalf("failures %v, err %v", failures, err)
	}
	f := failures[0]
	if f.HTML != page {
		t.Fatalf("failure %s names page %q, want %q", f.Class, f.HTML, page)
	}
	written, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	file, err := campaign.ReadSeedFile(f.SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	result, _, _, err := campaign.NewCatalog(engine).Execute(file.Spec, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var viz bytes.Buffer
	if err := engine.Visualize(result.History, &viz); err != nil {
		t.Fatal(err)
	}
	want := porcupineHistories(viz.String())
	if len(want) == 0 {
		t.Fatalf("porcupine's visualization of %s shows no history", f.SeedFile)
	}
	if got := porcupineHistories(html.UnescapeString(string(written))); !slices.Equal(got, want) {
		t.Fatalf("%s shows porcupine histories\n%v\nwant those of %s (%d operations):\n%v", page, got, f.SeedFile,
			len(result.History), want)
	}
	if !strings.Contains(string(written), html.EscapeString(f.Message)) {
		t.Fatalf("%s lacks the finding %q", page, f.Message)
	}
}

// porcupineHistory matches one partition's operations in porcupine's
// visualization data (its partial linearizations, which porcupine's
// parallel search may order differently from one check to the next, are
// left out).
var porcupineHistory = regexp.MustCompile(`\{"History":(\[.*?\]),"PartialLinearizations"`)

// porcupineHistories returns the operations of each partition a page's
// porcupine visualization shows.
func porcupineHistories(page string) []string {
	var histories []string
	for _, m := range porcupineHistory.FindAllStringSubmatch(page, -1) {
		histories = append(histories, m[1])
	}
	return histories
}

// While a stored seed still fails, SkipStored (-simtest.skip-stored) looks
// past it: the campaign reports the PID-file lock's other bugs, and none of
// the stored seed's kind.
func TestSkipStoredFindsTheNextBug(t *testing.T) {
	engine := pidfile.Engine()
	all, err := simtest.Find(engine, simtest.Options{Seeds: 300, SeedDir: t.TempDir()}, t.Logf)
	if err != nil || len(all) < 2 {
		t.Fatalf("failures %v, err %v: want at least two distinct bugs", all, err)
	}
	known := all[0]
	seeds := t.TempDir()
	if err := os.MkdirAll(filepath.Join(seeds, engine.Name), 0o755); err != nil {
		t.Fatal(err)
	}
	stored := filepath.Join(seeds, engine.Name, filepath.Base(known.SeedFile))
	data, err := os.ReadFile(known.SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stored, data, 0o644); err != nil {
		t.Fatal(err)
	}
	next, err := simtest.Find(engine, simtest.Options{Seeds: 300, SeedDir: seeds, SkipStored: true}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	var classes []string
	for _, f := range next {
		classes = append(classes, f.Class)
	}
	if len(next) != len(all)-1 || slices.Contains(classes, known.Class) {
		t.Fatalf("past the stored %s: found %v; want the %d other classes of %v", known.Class, classes, len(all)-1, all)
	}
}
