package main

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/realstress"
)

// TestStressCommand runs `leasereal stress` (re-executing the binary as
// its workers) for both engines with kills, Inspect included (the
// default); the JSON report must be clean.
// The full campaign is realstress.TestStressMustShow.
func TestStressCommand(t *testing.T) {
	for _, engine := range []string{"lease", "admission"} {
		t.Run(engine, func(t *testing.T) {
			got := run(t, "stress", "--engine", engine, "--procs", "4", "--ops", "400", "--kill-rate", "30",
				"--json", "--work-dir", t.TempDir())
			if got.code != exitOK {
				t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
			}
			knobs, reportText, _ := strings.Cut(got.stdout, "\n")
			if !strings.HasPrefix(knobs, "engine="+engine+" procs=4 ops=400 kill-rate=30 ") || !strings.Contains(knobs, " no-inspect=false ") {
				t.Fatalf("knobs line %q", knobs)
			}
			report := decode[realstress.Report](t, reportText)
			if report.Ops != 400 || report.Violations != 0 || report.Check != "ok" || !strings.HasPrefix(report.LivenessAcquire, "acquired") {
				t.Fatalf("report %+v", report)
			}
		})
	}
}
