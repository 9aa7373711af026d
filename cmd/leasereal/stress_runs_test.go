package main

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/realstress"
)

// The real-OS campaigns of leasereal's own commands as people use them:
//   - `stress --engine run`: wrappers on one directory, commands that leave
//     background jobs, kill -9 of wrappers while their jobs work, and an
//     operator's forced reclaims; no two runs' trees may work at once;
//   - `stress --engine dirlease-run`: wrappers on two shared paths, kill -9
//     of wrappers while their commands work, and an operator's recover and
//     inspect; no command may start in a directory while another run's
//     command still runs there.
//
// Each must pass on the shipped binary and reach its patterns (runs that
// ran, kills, the operator's commands).
func TestStressRunEnginesKeepOneCommandUnderALease(t *testing.T) {
	longtest.Require(t, "real-OS campaigns of leasereal run and dirlease run")
	for _, tc := range []struct {
		engine   string
		operator string // an operator exit the campaign must reach
	}{
		{realstress.EngineRun, "inspect exit 0"},
		{realstress.EngineDirleaseRun, "recover exit 0"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			ops := longtest.Pick(120, 60)
			got := run(t, "stress", "--engine", tc.engine, "--procs", "4", "--ops", strconv.Itoa(ops), "--kill-rate", "5",
				"--json", "--work-dir", t.TempDir())
			if got.code != exitOK {
				t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
			}
			_, reportText, _ := strings.Cut(got.stdout, "\n")
			report := decode[realstress.Report](t, reportText)
			if report.Ops != ops || report.Violations != 0 || report.Check != "ok" || report.LivenessAcquire != "acquired" {
				t.Fatalf("report %+v", report)
			}
			if report.RunCodes[0] == 0 || report.Kills == 0 || report.OperatorCodes[tc.operator] == 0 {
				t.Fatalf("the campaign did not reach its patterns (runs that ran, kills, %q): %+v", tc.operator, report)
			}
			t.Logf("%+v", report)
		})
	}
}

// Each check catches its planted bug: wrappers that each lease a directory
// of their own (run), or keep their claims in a state home of their own
// (dirlease-run), let two commands work at once. The check reports the
// overlap among its lines (a split run namespace also gives epochs that do
// not rise).
func TestStressRunEnginesCatchSplitLeases(t *testing.T) {
	longtest.Require(t, "real-OS campaigns of leasereal run and dirlease run with a planted split lease")
	for _, tc := range []struct {
		engine, violation string
	}{
		{realstress.EngineRun, "worked until"},
		{realstress.EngineDirleaseRun, "still ran there"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			report, err := realstress.Run(realstress.Config{Engine: tc.engine, Dir: t.TempDir(), Procs: 4, Ops: 24,
				PlantSplitNamespace: true,
				WorkerCommand: func(args []string) *exec.Cmd {
					return exec.Command(binary, append([]string{"stress-worker"}, args...)...)
				},
				LeaserealCommand: func(args []string) *exec.Cmd { return exec.Command(binary, args...) }})
			if err != nil {
				t.Fatal(err)
			}
			if report.Violations == 0 || report.Check != "illegal" || !slices.ContainsFunc(report.GroundTruth, func(v string) bool {
				return strings.Contains(v, tc.violation)
			}) {
				t.Fatalf("a planted split lease went unseen: %+v", report)
			}
		})
	}
}
