package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/realstress"
)

// stressFlags are the stress command's flags (every one is in usageText:
// TestUsageNamesEveryStressFlag).
type stressFlags struct {
	engine       *string
	procs        *int
	ops          *int
	killRate     *float64
	seed         *uint64
	workDir      *string
	checkTimeout *time.Duration
	quiesceEvery *time.Duration
	compareCheck *bool
	jsonOut      *bool
	verbose      *bool
	noInspect    *bool
}

// newStressFlags defines the stress command's flags.
func newStressFlags() (*flag.FlagSet, stressFlags) {
	flags := newFlagSet("stress")
	return flags, stressFlags{
		engine:       flags.String("engine", "lease", "engine under test: lease, admission, dirlease, run (leasereal run as people use it: background jobs, kill -9 of the wrappers, an operator's forced reclaims), or dirlease-run (leasereal dirlease run on two shared paths: kill -9 of the wrappers, an operator's recover)"),
		procs:        flags.Int("procs", 8, "worker processes running at once"),
		ops:          flags.Int("ops", 1000, "operations started in all"),
		killRate:     flags.Float64("kill-rate", 10, "mean SIGKILLs per second (Poisson); 0 disables kills"),
		seed:         flags.Uint64("seed", 1, "seed of the workers' choices and of the kill schedule"),
		workDir:      flags.String("work-dir", "", "directory for the namespace, logs and reports (default: a new temp dir)"),
		checkTimeout: flags.Duration("check-timeout", time.Minute, "time bound of the history check; running out is check=unknown: no verdict, exit 4"),
		quiesceEvery: flags.Duration("quiesce-every", realstress.DefaultQuiesceEvery, "pause every worker between two operations this often, so the check can cut the history there (0: never)"),
		compareCheck: flags.Bool("compare-check", false, "also check the history in one piece, unsegmented, and print both check times"),
		jsonOut:      flags.Bool("json", false, "print the report as JSON"),
		verbose:      flags.Bool("verbose", false, "print every kill"),
		noInspect:    flags.Bool("no-inspect", false, "leave the lock-free Inspect out of the workload (Inspect is included by default)"),
	}
}

// cmdStress runs a real multi-process stress campaign (package realstress)
// and prints its knobs up front and its report after.
func cmdStress(args []string, stdout, stderr io.Writer) error {
	flags, f := newStressFlags()
	engine, procs, ops, killRate, seed, workDir, checkTimeout, quiesceEvery, compareCheck, jsonOut, verbose, noInspect := f.engine, f.procs, f.ops, f.killRate, f.seed, f.workDir, f.checkTimeout, f.quiesceEvery, f.compareCheck, f.jsonOut, f.verbose, f.noInspect
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		return usagef("stress takes no arguments")
	}
	switch *engine {
	case realstress.EngineLease, realstress.EngineAdmission, realstress.EngineRun, realstress.EngineDirleaseRun:
	case realstress.EngineDirlease:
		if *procs < 2 {
			return usagef("stress --engine dirlease needs --procs 2 or more (creators and a recoverer)")
		}
	default:
		return usagef("stress --engine %s: the engines are lease, admission, dirlease, run and dirlease-run", *engine)
	}
	executable, err := os.Executable()
	if err != nil {
		return err
	}
	dir := *workDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "leasereal-stress-"); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "engine=%s procs=%d ops=%d kill-rate=%g seed=%d no-inspect=%t quiesce-every=%v work-dir=%s\n",
		*engine, *procs, *ops, *killRate, *seed, *noInspect, *quiesceEvery, dir)
	if *quiesceEvery == 0 {
		*quiesceEvery = -1 // Config: never
	}
	config := realstress.Config{Engine: *engine, Dir: dir, Procs: *procs, Ops: *ops, KillRate: *killRate, Seed: *seed,
		NoInspect: *noInspect, CheckTimeout: *checkTimeout, QuiesceEvery: *quiesceEvery, CompareWholeCheck: *compareCheck,
		WorkerCommand: func(args []string) *exec.Cmd {
			return exec.Command(executable, append([]string{"stress-worker"}, args...)...)
		},
		LeaserealCommand: func(args []string) *exec.Cmd { return exec.Command(executable, args...) }}
	if *verbose {
		config.Progress = stderr
	}
	report, err := realstress.Run(config)
	if err != nil {
		return err
	}
	switch {
	case *jsonOut:
		err = printJSON(stdout, report)
	case *engine == realstress.EngineRun, *engine == realstress.EngineDirleaseRun:
		err = printRunsReport(stdout, report)
	default:
		_, err = fmt.Fprintf(stdout, "ops=%d completed=%d unknown=%d kills=%d incarnations=%d reclaims=%d violations=%d check=%s run=%.1fs check-time=%.3fs segments=%d quiescent-points=%d liveness=%q\n",
			report.Ops, report.Completed, report.Unknown, report.Kills, report.Incarnations, report.Reclaims,
			report.Violations, report.Check, report.RunSeconds, report.CheckSeconds, report.Segments, report.QuiescentPoints, report.LivenessAcquire)
		if err == nil && report.WholeCheck != "" {
			_, err = fmt.Fprintf(stdout, "same history unsegmented: check=%s porcupine=%.3fs\n", report.WholeCheck, report.WholeCheckSeconds)
		}
	}
	if err != nil {
		return err
	}
	if report.Violations != 0 && *engine == realstress.EngineRun {
		return &codeError{code: exitConflict, err: fmt.Errorf("%d violation(s) of the lease over a run's process tree", report.Violations)}
	}
	if report.Violations != 0 && *engine == realstress.EngineDirleaseRun {
		return &codeError{code: exitConflict, err: fmt.Errorf("%d violation(s) of one command per leased directory", report.Violations)}
	}
	if report.Violations != 0 {
		return &codeError{code: exitConflict, err: fmt.Errorf("%d violation(s); check=%s; visualization %s",
			report.Violations, report.Check, report.Visualization)}
	}
	if report.Check != "ok" {
		// No verdict: neither a pass (exit 0) nor a violation (exit 1).
		return &codeError{code: exitError, err: fmt.Errorf("check=%s: the check ran out of time (--check-timeout %v); the history has no verdict",
			report.Check, *checkTimeout)}
	}
	return nil
}

// cmdStressWorker is the hidden worker of `stress`.
func cmdStressWorker(args []string) error {
	return realstress.WorkerMain(args)
}

// cmdScenarioActor is the hidden actor of the differential scenario test:
// it serves lease requests from stdin as one process (realstress.ActorMain).
func cmdScenarioActor(args []string, stdout io.Writer) error {
	flags := newFlagSet("scenario-actor")
	namespace := flags.String("namespace", "", "")
	session := flags.String("session", "", "")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if *namespace == "" || *session == "" {
		return usagef("scenario-actor needs --namespace and --session")
	}
	manager, err := lease.NewManager(lease.Config{Namespace: *namespace, RootID: realstress.RootID,
		FS: osenv.NewFS(), Clock: osenv.NewClock(), Inspector: osenv.NewInspector(), IDs: osenv.NewIDSource()})
	if err != nil {
		return err
	}
	return realstress.ActorMain(manager, *session, os.Stdin, stdout)
}

// printRunsReport prints a run campaign's report: its counts, then each
// violation on a line of its own.
func printRunsReport(w io.Writer, report realstress.Report) error {
	_, err := fmt.Fprintf(w, "runs=%d ran=%d killed=%d exit-codes=%v operator=%v violations=%d check=%s run=%.1fs liveness=%q\n",
		report.Ops, report.Completed, report.Unknown, report.RunCodes, report.OperatorCodes, report.Violations, report.Check,
		report.RunSeconds, report.LivenessAcquire)
	for _, v := range report.GroundTruth {
		if err == nil {
			_, err = fmt.Fprintln(w, "violation:", v)
		}
	}
	return err
}
