package main

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/realstress"
)

// `leasereal stress --engine run`: wrappers on one directory, commands
// that leave background jobs, kill -9 of wrappers while their jobs work,
// and an operator's forced reclaims. No two runs' trees may work at once.
func TestStressRunEngineHoldsTheLeaseOverEveryTree(t *testing.T) {
	ops := longOrShort(200, 60)
	got := run(t, "stress", "--engine", "run", "--procs", "4", "--ops", strconv.Itoa(ops), "--kill-rate", "5",
		"--json", "--work-dir", t.TempDir())
	if got.code != exitOK {
		t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
	}
	_, reportText, _ := strings.Cut(got.stdout, "\n")
	report := decode[realstress.Report](t, reportText)
	if report.Ops != ops || report.Violations != 0 || report.Check != "ok" || report.LivenessAcquire != "acquired" {
		t.Fatalf("report %+v", report)
	}
	if report.Completed == 0 || report.Kills == 0 || report.OperatorCodes["inspect exit 0"] == 0 {
		t.Fatalf("the campaign did not reach its patterns (runs that ran, kills, operator commands): %+v", report)
	}
	t.Logf("%+v", report)
}

// The check catches a planted bug: wrappers that each lease a directory
// of their own let runs overlap.
func TestStressRunEngineCatchesSplitNamespaces(t *testing.T) {
	report, err := realstress.Run(realstress.Config{Engine: realstress.EngineRun, Dir: t.TempDir(), Procs: 4, Ops: 24,
		PlantSplitNamespace: true,
		WorkerCommand: func(args []string) *exec.Cmd {
			return exec.Command(binary, append([]string{"stress-worker"}, args...)...)
		},
		LeaserealCommand: func(args []string) *exec.Cmd { return exec.Command(binary, args...) }})
	if err != nil {
		t.Fatal(err)
	}
	// Each run leases epoch 1 of a directory of its own: the check reports
	// the overlapping trees (and the epochs that do not rise), in any order.
	if report.Violations == 0 || report.Check != "illegal" || !slices.ContainsFunc(report.GroundTruth, func(v string) bool {
		return strings.Contains(v, "worked until")
	}) {
		t.Fatalf("a planted split namespace went unseen: %+v", report)
	}
}

// `leasereal stress --engine dirlease-run`: wrappers on two shared paths,
// kill -9 of wrappers while their commands work, and an operator's
// recover and inspect. No command may start in a directory while another
// run's command still runs there.
func TestStressDirleaseRunEngineKeepsOneCommandPerDirectory(t *testing.T) {
	ops := longOrShort(200, 60)
	got := run(t, "stress", "--engine", "dirlease-run", "--procs", "4", "--ops", strconv.Itoa(ops), "--kill-rate", "5",
		"--json", "--work-dir", t.TempDir())
	if got.code != exitOK {
		t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
	}
	_, reportText, _ := strings.Cut(got.stdout, "\n")
	report := decode[realstress.Report](t, reportText)
	if report.Ops != ops || report.Violations != 0 || report.Check != "ok" || report.LivenessAcquire != "acquired" {
		t.Fatalf("report %+v", report)
	}
	if report.RunCodes[0] == 0 || report.Kills == 0 || report.OperatorCodes["recover exit 0"] == 0 {
		t.Fatalf("the campaign did not reach its patterns (runs that ran, kills, recoveries): %+v", report)
	}
	t.Logf("%+v", report)
}

// The check catches a planted bug: wrappers that each keep their claims
// in a state home of their own let two commands work in one directory.
func TestStressDirleaseRunEngineCatchesSplitStateHomes(t *testing.T) {
	report, err := realstress.Run(realstress.Config{Engine: realstress.EngineDirleaseRun, Dir: t.TempDir(), Procs: 4, Ops: 24,
		PlantSplitNamespace: true,
		WorkerCommand: func(args []string) *exec.Cmd {
			return exec.Command(binary, append([]string{"stress-worker"}, args...)...)
		},
		LeaserealCommand: func(args []string) *exec.Cmd { return exec.Command(binary, args...) }})
	if err != nil {
		t.Fatal(err)
	}
	if report.Violations == 0 || report.Check != "illegal" || !slices.ContainsFunc(report.GroundTruth, func(v string) bool {
		return strings.Contains(v, "still ran there")
	}) {
		t.Fatalf("a planted split state home went unseen: %+v", report)
	}
}
