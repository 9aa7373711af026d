package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/realstress"
)

// TestStressCommand runs `leasereal stress` (re-executing the binary as
// its workers) for every engine with kills, Inspect included (the
// default); the JSON report must be clean.
// The full campaign is realstress.TestStressMustShow.
func TestStressCommand(t *testing.T) {
	ops := longtest.Pick(400, 120)
	for _, engine := range []string{"lease", "admission", "dirlease"} {
		t.Run(engine, func(t *testing.T) {
			got := run(t, "stress", "--engine", engine, "--procs", "4", "--ops", strconv.Itoa(ops), "--kill-rate", "30",
				"--json", "--work-dir", t.TempDir())
			if got.code != exitOK {
				t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
			}
			knobs, reportText, _ := strings.Cut(got.stdout, "\n")
			if !strings.HasPrefix(knobs, fmt.Sprintf("engine=%s procs=4 ops=%d kill-rate=30 ", engine, ops)) || !strings.Contains(knobs, " no-inspect=false ") {
				t.Fatalf("knobs line %q", knobs)
			}
			report := decode[realstress.Report](t, reportText)
			live := "acquired"
			if engine == "dirlease" {
				live = "recovered"
			}
			if report.Ops != ops || report.Violations != 0 || report.Check != "ok" || !strings.HasPrefix(report.LivenessAcquire, live) {
				t.Fatalf("report %+v", report)
			}
		})
	}
}

// TestStressUsage: an unknown engine, and dirlease with one process (no
// room for a creator and a recoverer), are usage errors.
func TestStressUsage(t *testing.T) {
	for _, args := range [][]string{{"--engine", "nope"}, {"--engine", "dirlease", "--procs", "1"}} {
		got := run(t, append([]string{"stress", "--work-dir", t.TempDir()}, args...)...)
		if got.code != exitUsage {
			t.Fatalf("%v: exit %d, want %d: %s", args, got.code, exitUsage, got.stderr)
		}
	}
}

// TestStressCheckTimeoutIsNoVerdict: a check that runs out of time is
// check=unknown and exit 4, neither a pass (0) nor a violation (1).
func TestStressCheckTimeoutIsNoVerdict(t *testing.T) {
	got := run(t, "stress", "--procs", "2", "--ops", "50", "--kill-rate", "0", "--check-timeout", "1ns",
		"--json", "--work-dir", t.TempDir())
	if got.code != exitError {
		t.Fatalf("exit %d, want %d: %s%s", got.code, exitError, got.stdout, got.stderr)
	}
	_, reportText, _ := strings.Cut(got.stdout, "\n")
	report := decode[realstress.Report](t, reportText)
	if report.Check != "unknown" || report.Violations != 0 {
		t.Fatalf("report %+v", report)
	}
	if !strings.Contains(got.stderr, "no verdict") {
		t.Fatalf("stderr %q", got.stderr)
	}
}
