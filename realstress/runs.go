package realstress

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// EngineRun is the campaign of `leasereal run` as people use it: several
// wrappers on one lease directory at once (each a flock-style `run -w`),
// commands that leave a background job behind and exit, kill -9 of the
// wrappers at random while their jobs work, and an operator typing
// `leasereal reclaim --force` and `inspect` in a second terminal. It
// checks the promise docs/LEASEREAL.md makes: a lease covers the whole
// process tree of the command it runs, so no two runs' trees ever work at
// once, and the epochs rise in the order the runs start.
//
// A run's command is `sh -c 'job & wait'`. Every process of its tree that
// works (the job and the background job it may start) is a job
// incarnation of the stress binary that appends an enter mark (one
// write(2), stamped on CLOCK_MONOTONIC) before it works and an exit mark
// after. A kill of the wrapper kills only the shell, so nothing kills a
// job, and every enter has its exit. A run's tree
// worked from its first enter to its last exit. The check needs no model:
// the intervals of two runs must not overlap.
const EngineRun = "run"

// JobMark is one line of the runs' mark file.
type JobMark struct {
	Run   int    `json:"run"`
	PID   int    `json:"pid"`
	Event string `json:"event"` // "enter" or "exit"
	Ns    int64  `json:"ns"`
	// Epoch is the lease's epoch the job saw in LEASEKIT_EPOCH.
	Epoch string `json:"epoch,omitempty"`
	// OtherRun and OtherPID (an "overlap" mark, EngineDirleaseRun) are
	// the earlier command that still ran as this one started.
	OtherRun int `json:"otherRun,omitempty"`
	OtherPID int `json:"otherPid,omitempty"`
}

// Bounds of a runs campaign.
const (
	runWaitSeconds   = "20"
	jobHoldMax       = 40 * time.Millisecond
	jobBackgroundMin = 20 * time.Millisecond
	jobBackgroundMax = 200 * time.Millisecond
	operatorMean     = 300 * time.Millisecond
	jobsSettleMax    = 30 * time.Second
)

// runsCampaign is the parent of an EngineRun campaign.
type runsCampaign struct {
	config    Config
	dir       string
	namespace string
	marksPath string
	random    *rand.Rand
	started   int
	report    Report
	// stderr is wrappers.log in the work directory: every wrapper's
	// --verbose account, for a failure's reader.
	stderr *os.File
}

type wrapperExit struct {
	w    *wrapper
	code int
}

type wrapper struct {
	cmd    *exec.Cmd
	killed bool
}

// runRuns executes an EngineRun campaign: Procs wrappers at a time until
// Ops have started, then the check.
func runRuns(config Config, dir string) (Report, error) {
	if config.LeaserealCommand == nil {
		return Report{}, errors.New("stress: the run engine needs Config.LeaserealCommand")
	}
	c := &runsCampaign{config: config, dir: dir, namespace: filepath.Join(dir, "namespace"),
		marksPath: filepath.Join(dir, "marks.jsonl"), random: rand.New(rand.NewPCG(config.Seed, 0x5eed)),
		report: Report{RunCodes: map[int]int{}, OperatorCodes: map[string]int{}}}
	if config.PlantSplitNamespace {
		c.report.Planted = "each wrapper leases a directory of its own"
	}
	stderr, err := os.OpenFile(filepath.Join(dir, "wrappers.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return Report{}, err
	}
	defer stderr.Close()
	c.stderr = stderr
	start := time.Now()
	if err := c.wrappers(); err != nil {
		return Report{}, err
	}
	if config.Engine == EngineDirleaseRun {
		marks, err := c.settledCommands()
		if err != nil {
			return Report{}, err
		}
		c.report.LivenessAcquire = c.dirleaseFinalRuns()
		c.report.GroundTruth = CheckDirleaseRunMarks(marks)
	} else {
		marks, err := c.settledMarks()
		if err != nil {
			return Report{}, err
		}
		c.report.LivenessAcquire = c.finalRun()
		c.report.GroundTruth = CheckRunMarks(marks)
	}
	c.report.RunSeconds = time.Since(start).Seconds()
	c.report.Violations = len(c.report.GroundTruth)
	c.report.Check = "ok"
	if c.report.Violations > 0 {
		c.report.Check = "illegal"
	}
	return c.report, nil
}

// wrappers keeps Procs wrappers running until Ops have started and every
// one has exited, SIGKILLing one at random (KillRate) and running an
// operator command now and then.
func (c *runsCampaign) wrappers() error {
	exits := make(chan wrapperExit, c.config.Procs)
	live := map[*wrapper]bool{}
	for range min(c.config.Procs, c.config.Ops) {
		if err := c.startWrapper(live, exits); err != nil {
			return err
		}
	}
	deadline := time.After(c.config.RunTimeout)
	kill, operator := c.killTimer(), time.After(c.operatorPause())
	operatorDone := make(chan map[string]int, 1)
	operatorBusy := false
	for len(live) > 0 || operatorBusy {
		select {
		case <-deadline:
			c.killAll(live)
			return fmt.Errorf("stress: the run did not finish within %v", c.config.RunTimeout)
		case <-kill:
			c.killOne(live)
			kill = c.killTimer()
		case <-operator:
			if !operatorBusy && len(live) > 0 {
				operatorBusy = true
				go func() { operatorDone <- c.operate() }()
			}
			operator = time.After(c.operatorPause())
		case codes := <-operatorDone:
			operatorBusy = false
			for name, n := range codes {
				c.report.OperatorCodes[name] += n
			}
		case e := <-exits:
			delete(live, e.w)
			c.recordExit(e)
			if c.started < c.config.Ops {
				if err := c.startWrapper(live, exits); err != nil {
					c.killAll(live)
					return err
				}
			}
		}
	}
	return nil
}

// startWrapper starts `leasereal run -w` of one job on the namespace.
func (c *runsCampaign) startWrapper(live map[*wrapper]bool, exits chan<- wrapperExit) error {
	c.started++
	c.report.Ops++
	job := c.config.WorkerCommand(c.drawJob(c.started))
	if c.config.Engine == EngineDirleaseRun {
		args, err := c.dirleaseWrapperArgs(c.started, job)
		if err != nil {
			return err
		}
		return c.startWrapperArgs(args, live, exits)
	}
	namespace := c.namespace
	if c.config.PlantSplitNamespace {
		namespace = filepath.Join(c.dir, "namespace-"+strconv.Itoa(c.started))
	}
	// `sh -c 'job & wait'`: kill -9 of the wrapper kills the shell (the
	// wrapper's PR_SET_PDEATHSIG), and the job works on, as a make's or a
	// pipeline's processes do.
	args := append([]string{"run", "--verbose", "-w", runWaitSeconds, "--dir", namespace, "--", "/bin/sh", "-c", `"$@" & wait`, "sh", job.Path},
		job.Args[1:]...)
	return c.startWrapperArgs(args, live, exits)
}

// startWrapperArgs starts the leasereal wrapper with args.
func (c *runsCampaign) startWrapperArgs(args []string, live map[*wrapper]bool, exits chan<- wrapperExit) error {
	w := &wrapper{cmd: c.config.LeaserealCommand(args)}
	w.cmd.Stderr = c.stderr
	if err := w.cmd.Start(); err != nil {
		return fmt.Errorf("stress: starting leasereal run: %w", err)
	}
	live[w] = true
	go func() { exits <- wrapperExit{w: w, code: exitCode(w.cmd.Wait())} }()
	return nil
}

// drawJob draws one run's command: a foreground hold, and half the time a
// background job that outlives it (never for a dirlease run, whose lease
// covers its child only).
func (c *runsCampaign) drawJob(run int) []string {
	hold := time.Duration(c.random.Int64N(int64(jobHoldMax)))
	background := time.Duration(0)
	if c.config.Engine != EngineDirleaseRun && c.random.IntN(2) == 0 {
		background = jobBackgroundMin + time.Duration(c.random.Int64N(int64(jobBackgroundMax-jobBackgroundMin)))
	}
	return jobArgs(c.marksPath, run, hold, background)
}

func jobArgs(marks string, run int, hold, background time.Duration) []string {
	return []string{"--job", "--marks", marks, "--run", strconv.Itoa(run), "--hold", hold.String(), "--background", background.String()}
}

func exitCode(err error) int {
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		return exitErr.ExitCode() // -1 when a signal ended it
	}
	return -2
}

// recordExit counts a wrapper's end (its killed mark is the main loop's).
func (c *runsCampaign) recordExit(e wrapperExit) {
	if e.w.killed {
		c.report.Unknown++
		return
	}
	c.report.RunCodes[e.code]++
	if e.code == 0 {
		c.report.Completed++
	}
}

func (c *runsCampaign) killTimer() <-chan time.Time {
	if c.config.KillRate <= 0 {
		return nil
	}
	return time.After(time.Duration(c.random.ExpFloat64() / c.config.KillRate * float64(time.Second)))
}

// killOne SIGKILLs one live wrapper at random (its command's tree lives on).
func (c *runsCampaign) killOne(live map[*wrapper]bool) {
	var candidates []*wrapper
	for w := range live {
		if !w.killed {
			candidates = append(candidates, w)
		}
	}
	if len(candidates) == 0 {
		return
	}
	// Map order is random; sort by PID so the seed decides the choice.
	sortWrappers(candidates)
	w := candidates[c.random.IntN(len(candidates))]
	if w.cmd.Process.Kill() == nil {
		w.killed = true
		c.report.Kills++
		fmt.Fprintf(c.config.Progress, "kill wrapper pid %d\n", w.cmd.Process.Pid)
	}
}

func (c *runsCampaign) killAll(live map[*wrapper]bool) {
	for w := range live {
		_ = w.cmd.Process.Kill()
	}
}

func (c *runsCampaign) operatorPause() time.Duration {
	return time.Duration(c.random.ExpFloat64() * float64(operatorMean))
}

// operate is the operator's second terminal: a forced reclaim, then an
// inspect. Their exit codes are counted; neither may let a second run in.
func (c *runsCampaign) operate() map[string]int {
	codes := map[string]int{}
	commands := [][]string{{"reclaim", "--dir", c.namespace, "--force"}, {"inspect", "--dir", c.namespace}}
	if c.config.Engine == EngineDirleaseRun {
		commands = c.dirleaseOperatorCommands()
	}
	for _, args := range commands {
		cmd := c.config.LeaserealCommand(args)
		name := args[0]
		if name == "dirlease" {
			name = args[1]
		}
		codes[name+" exit "+strconv.Itoa(exitCode(cmd.Run()))]++
	}
	return codes
}

// settledMarks waits until every job process that entered has exited (no
// job is killed, so each does, within its hold), and returns the marks.
func (c *runsCampaign) settledMarks() ([]JobMark, error) {
	deadline := time.Now().Add(jobsSettleMax)
	for {
		marks, err := readJSONLines[JobMark](c.marksPath)
		if err != nil {
			return nil, err
		}
		open := openJobs(marks)
		if open == 0 {
			return marks, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("stress: %d job process(es) never wrote their exit mark within %v", open, jobsSettleMax)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openJobs counts the job processes with an enter mark and no exit mark.
func openJobs(marks []JobMark) int {
	open := map[int]int{}
	for _, m := range marks {
		if m.Event == "enter" {
			open[m.PID]++
		} else {
			open[m.PID]--
		}
	}
	n := 0
	for _, count := range open {
		if count != 0 {
			n++
		}
	}
	return n
}

// finalRun is the liveness check: once every tree has ended, a run gets
// the lease.
func (c *runsCampaign) finalRun() string {
	cmd := c.config.LeaserealCommand([]string{"run", "-w", runWaitSeconds, "--dir", c.namespace, "--", "true"})
	if code := exitCode(cmd.Run()); code != 0 {
		return "refused: exit " + strconv.Itoa(code)
	}
	return "acquired"
}

// jobMain is one process of a run's tree (`stress-worker --job`): it marks
// its entry, starts its background job when it has one (which outlives
// it), holds, and marks its exit.
func jobMain(args []string) error {
	flags := newQuietFlagSet("stress-worker --job")
	marks := flags.String("marks", "", "")
	registry := flags.String("registry", "", "")
	run := flags.Int("run", 0, "")
	hold := flags.Duration("hold", 0, "")
	background := flags.Duration("background", 0, "")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *marks == "" || *run <= 0 {
		return errors.New("stress-worker --job: --marks and --run are required")
	}
	epoch := os.Getenv("LEASEKIT_EPOCH")
	if err := appendJSONLine(*marks, JobMark{Run: *run, PID: os.Getpid(), Event: "enter", Ns: MonotonicNs(), Epoch: epoch}); err != nil {
		return err
	}
	if *registry != "" {
		if err := registerCommand(*registry, *marks, *run); err != nil {
			return err
		}
	}
	if *background > 0 {
		if err := startBackgroundJob(*marks, *run, *background); err != nil {
			return err
		}
	}
	time.Sleep(*hold)
	return appendJSONLine(*marks, JobMark{Run: *run, PID: os.Getpid(), Event: "exit", Ns: MonotonicNs(), Epoch: epoch})
}

// startBackgroundJob starts a job of the same run that holds for hold and
// is not waited for: `cmd & exit` in a shell.
func startBackgroundJob(marks string, run int, hold time.Duration) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self, append([]string{"stress-worker"}, jobArgs(marks, run, hold, 0)...)...)
	if err := child.Start(); err != nil {
		return err
	}
	return child.Process.Release()
}

// sortWrappers orders wrappers by PID.
func sortWrappers(ws []*wrapper) {
	slices.SortFunc(ws, func(a, b *wrapper) int { return a.cmd.Process.Pid - b.cmd.Process.Pid })
}
