package campaign

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

// findToyViolation runs a campaign of the buggy toy lock and returns its
// first violation's spec and finding.
func findToyViolation(t *testing.T) (Options, *Report, *Failure) {
	t.Helper()
	o := Options{Catalog: testCatalog, Engines: []string{"toylock-buggy"}, Seeds: 200, Faults: swarm(t), Workers: 2}
	report, err := Run(context.Background(), o)
	require.NoError(t, err)
	for _, f := range report.FirstFailures() {
		if f.Outcome == "violation" && f.Class == "invariant mutual-exclusion" {
			return o, report, f
		}
	}
	t.Fatalf("no mutual-exclusion violation in %d runs: %v", report.Runs, report.Outcomes)
	return o, nil, nil
}

func TestShrinkPlantedBugToAFewChoicesThatReplayIdentically(t *testing.T) {
	o, _, f := findToyViolation(t)
	spec, err := o.SpecFor(f.Engine, f.Seed)
	require.NoError(t, err)
	want := Finding{Outcome: sim.OutcomeViolation, Class: f.Class}
	shrunk, err := testCatalog.Shrink(spec, want, ShrinkOptions{})
	require.NoError(t, err)
	t.Logf("shrunk %d decisions (%d choices) to %d (%d choices) in %d runs; knobs %v",
		shrunk.DecisionsBefore, shrunk.ChoicesBefore, shrunk.DecisionsAfter, shrunk.ChoicesAfter, shrunk.Runs, shrunk.Spec.knobLines())
	require.True(t, shrunk.Finding.Same(want))
	require.LessOrEqual(t, shrunk.ChoicesAfter, 15)
	require.LessOrEqual(t, shrunk.DecisionsAfter, shrunk.DecisionsBefore)
	require.Less(t, shrunk.Spec.Params["processes"]+shrunk.Spec.Params["attempts"], 4+6, "a workload knob shrank")

	// Shrinking is deterministic.
	again, err := testCatalog.Shrink(spec, want, ShrinkOptions{})
	require.NoError(t, err)
	require.Equal(t, shrunk.Spec, again.Spec)

	// The written file replays twice identically and finds the same failure.
	dir := t.TempDir()
	path, _, err := testCatalog.ShrinkToFile(spec, want, dir, ShrinkOptions{}, DefaultReplayCommand)
	require.NoError(t, err)
	file, err := ReadSeedFile(path)
	require.NoError(t, err)
	require.Equal(t, shrunk.Spec, file.Spec)
	replay, err := testCatalog.ReplayTwice(file.Spec)
	require.NoError(t, err)
	require.True(t, replay.Finding.Same(file.Expect))
	var text bytes.Buffer
	replay.WriteText(&text)
	require.Contains(t, text.String(), "invariant mutual-exclusion")
	require.Contains(t, text.String(), "# volatile: ")
	data := string(file.Format())
	require.Contains(t, data, "# replay: go run ./cmd/leasesim replay "+path)
	require.Contains(t, data, "shrunk from ")
	require.Contains(t, data, " context switches over ")
}

func TestShrinkRefusesASpecThatDoesNotFail(t *testing.T) {
	o := Options{Catalog: testCatalog, Engines: []string{"toylock"}}
	spec, err := o.SpecFor("toylock", 1)
	require.NoError(t, err)
	_, err = testCatalog.Shrink(spec, Finding{Outcome: sim.OutcomeViolation, Class: "invariant mutual-exclusion"}, ShrinkOptions{RunsMax: 10})
	require.ErrorContains(t, err, "does not reproduce")
}

func TestShrinkFailuresWritesSeedFilesAndReplayCommands(t *testing.T) {
	o, report, _ := findToyViolation(t)
	dir := t.TempDir()
	errs := ShrinkFailures(report, o, dir, 1, ShrinkOptions{RunsMax: 500}, DefaultReplayCommand)
	require.Empty(t, errs)
	first := report.FirstFailures()[0]
	require.NotEmpty(t, first.SeedFile)
	require.True(t, strings.HasPrefix(first.Replay, "go run ./cmd/leasesim replay "+dir))
	var summary bytes.Buffer
	report.WriteSummary(&summary)
	require.Contains(t, summary.String(), "replay: go run ./cmd/leasesim replay ")
	require.Contains(t, summary.String(), "toylock-buggy violation seed=")
}

func TestHTMLIsOneSelfContainedPage(t *testing.T) {
	o, _, f := findToyViolation(t)
	spec, err := o.SpecFor(f.Engine, f.Seed)
	require.NoError(t, err)
	replay, err := testCatalog.ReplaySpec(spec, true)
	require.NoError(t, err)
	var page bytes.Buffer
	require.NoError(t, replay.WriteHTML(&page))
	html := page.String()
	require.True(t, strings.HasPrefix(html, "<!doctype html>"))
	require.Contains(t, html, "Fault timeline")
	require.Contains(t, html, `class="spawn"`)
	require.NotContains(t, html, "<script src=")
}

func TestHistoryCheckFailuresAreFoundAndShrunkByClass(t *testing.T) {
	o := Options{Catalog: testCatalog, Engines: []string{"toylock-starved"}, Seeds: 40, Workers: 2,
		Faults: FaultSetting{Overrides: map[string]float64{sim.FaultCrash: 0.5}}}
	report, err := Run(context.Background(), o)
	require.NoError(t, err)
	firsts := report.FirstFailures()
	require.Len(t, firsts, 1, "one class, whatever the attempt count: %v", report.Failures)
	require.Equal(t, "history: no acquire succeeded", firsts[0].Class)
	require.Greater(t, report.Outcomes["violation"], 1)
	spec, err := o.SpecFor(firsts[0].Engine, firsts[0].Seed)
	require.NoError(t, err)
	shrunk, err := testCatalog.Shrink(spec, Finding{Outcome: sim.OutcomeViolation, Class: firsts[0].Class}, ShrinkOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, shrunk.Spec.Params["processes"], "one starved client suffices")
	require.Contains(t, shrunk.Finding.Message, "history check: no acquire succeeded")
}

func TestContextSwitchesCountProcessChangesBetweenSteps(t *testing.T) {
	trace := []byte("seed=1\n" +
		"step=0 t=0 spawn proc=a host=h\n" +
		"step=0 t=1 proc=a op=start path= result=ok\n" +
		"step=1 t=2 proc=a op=stat path=/x result=ok\n" +
		"step=2 t=3 proc=b op=start path= result=ok\n" +
		"step=2 t=3 crash proc=b at=stat path=/x\n" +
		"step=3 t=4 proc=a op=remove path=/x result=ok\n")
	require.Equal(t, 2, ContextSwitches(trace))
	require.Equal(t, 0, ContextSwitches(nil))
}
