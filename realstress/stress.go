package realstress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/models"
)

// Config configures one stress run.
type Config struct {
	// Engine is EngineLease (default), EngineAdmission, EngineDirlease,
	// EngineRun (runs.go: leasereal run itself) or EngineDirleaseRun
	// (dirleaseruns.go: leasereal dirlease run itself); the last two need
	// LeaserealCommand.
	Engine string
	// Dir is an empty or missing work directory: the namespace, the logs,
	// the deaths file and any failure report go inside it.
	Dir string
	// Procs worker processes run at once; Ops operations are started in all
	// (each slot gets an equal share, and a restarted worker continues its
	// slot's share).
	Procs, Ops int
	// KillRate is the mean number of SIGKILLs per second (Poisson); 0
	// disables kills.
	KillRate float64
	Seed     uint64
	// NoInspect leaves Inspect out of the workload (WorkerConfig.NoInspect).
	NoInspect bool
	// PlantBlindInspector plants a bug in every worker (WorkerConfig): the
	// harness's own tests use it to show a broken engine run is caught.
	PlantBlindInspector bool
	// WorkerCommand builds the command of one worker incarnation from the
	// worker arguments (see WorkerArgs); the binary re-executes itself.
	WorkerCommand func(args []string) *exec.Cmd
	// LeaserealCommand builds a leasereal command line (EngineRun: the
	// wrappers and the operator's commands).
	LeaserealCommand func(args []string) *exec.Cmd
	// PlantSplitNamespace plants a bug in an EngineRun campaign: each
	// wrapper leases a directory of its own (EngineDirleaseRun: keeps its
	// claims in a state home of its own), so nothing keeps two runs
	// apart. The harness's own tests use it to show the check catches it.
	PlantSplitNamespace bool
	// CheckTimeout bounds porcupine; 0 means one minute.
	CheckTimeout time.Duration
	// QuiesceEvery is how often the parent pauses every worker between two
	// operations, to give the history quiescent points to cut at
	// (quiesce.go); 0 means DefaultQuiesceEvery, a negative value never.
	QuiesceEvery time.Duration
	// SegmentOps is the smallest segment CheckSegmented cuts; 0 means
	// defaultSegmentOps.
	SegmentOps int
	// CompareWholeCheck also checks the history in one piece, without
	// segments, and reports both times (Report.WholeCheck*).
	CompareWholeCheck bool
	// RunTimeout bounds the whole run; 0 means ten minutes.
	RunTimeout time.Duration
	// Progress receives a line per notable event; nil discards.
	Progress io.Writer
}

// Report is the outcome of a stress run.
type Report struct {
	Ops             int `json:"ops"`
	Completed       int `json:"completed"`
	Unknown         int `json:"unknown"`
	DroppedInspects int `json:"droppedInspects"`
	Kills           int `json:"kills"`
	Incarnations    int `json:"incarnations"`
	// Reclaims: lease, the stale owners acquires moved into quarantine;
	// dirlease, the directories recovery passes removed.
	Reclaims   int `json:"reclaims"`
	Violations int `json:"violations"`
	// Check is ok, illegal (a violation) or unknown (the check ran out of
	// time: no verdict, neither a pass nor a violation).
	Check        string  `json:"check"`
	RunSeconds   float64 `json:"runSeconds"`
	CheckSeconds float64 `json:"checkSeconds"`
	// QuiescentPoints is how many pauses every live worker acknowledged;
	// Segments how many segments the check cut the history into.
	QuiescentPoints int `json:"quiescentPoints"`
	Segments        int `json:"segments"`
	// WholeCheck and WholeCheckSeconds: the same history checked in one
	// piece (Config.CompareWholeCheck only).
	WholeCheck        string  `json:"wholeCheck,omitempty"`
	WholeCheckSeconds float64 `json:"wholeCheckSeconds,omitempty"`
	// Moves (dirlease) is how many leased directories recovery passes moved
	// out of their paths; GroundTruth describes each move the ground truth
	// forbids (a violation each).
	Moves       int      `json:"moves,omitempty"`
	GroundTruth []string `json:"groundTruth,omitempty"`
	// LivenessAcquire is the final acquire's outcome after every worker died.
	LivenessAcquire string `json:"livenessAcquire"`
	// Visualization is the porcupine HTML written on a failed check.
	Visualization string `json:"visualization,omitempty"`
	// RunCodes (EngineRun, EngineDirleaseRun) counts the exit codes of the wrappers that were
	// not killed; OperatorCodes the operator's commands' ("reclaim exit
	// 1"); Planted names a planted bug.
	RunCodes      map[int]int    `json:"runCodes,omitempty"`
	OperatorCodes map[string]int `json:"operatorCodes,omitempty"`
	Planted       string         `json:"planted,omitempty"`
}

// slot is one worker position: its share of operations, and its current
// incarnation.
type slot struct {
	worker    int
	remaining int
	lane      int
	cmd       *exec.Cmd
	pid       int
	killed    bool
}

type exit struct {
	slot  *slot
	child *childProc // a dirlease creator's child, slot nil
	lane  int
	ns    int64
	err   error
}

// Bounds of a run.
const (
	defaultCheckTimeout = time.Minute
	defaultSegmentOps   = 1
	defaultRunTimeout   = 10 * time.Minute
	procsMax            = 64
	opsMax              = 1_000_000
)

// WorkerArgs are the arguments of a worker incarnation after the hidden
// subcommand name; WorkerMain reads them back.
func WorkerArgs(config WorkerConfig) []string {
	return []string{"--engine", config.Engine, "--no-inspect=" + strconv.FormatBool(config.NoInspect),
		"--plant-blind-inspector=" + strconv.FormatBool(config.PlantBlindInspector), "--namespace", config.Namespace, "--worker", strconv.Itoa(config.Worker),
		"--lane", strconv.Itoa(config.Lane), "--ops", strconv.Itoa(config.Ops),
		"--seed", strconv.FormatUint(config.Seed, 10), "--log", config.LogPath, "--spawns", config.SpawnsPath, "--deaths", config.DeathsPath,
		"--barrier", config.BarrierDir, "--role", config.Role, "--work", config.WorkDir,
		"--child-pid", strconv.Itoa(config.ChildPID), "--child-lane", strconv.Itoa(config.ChildLane)}
}

// Run executes a stress run and checks its history.
func Run(config Config) (Report, error) {
	if config.Procs <= 0 || config.Procs > procsMax || config.Ops <= 0 || config.Ops > opsMax || config.KillRate < 0 {
		return Report{}, fmt.Errorf("stress: need 1..%d procs, 1..%d ops and a kill rate >= 0", procsMax, opsMax)
	}
	if config.Engine == "" {
		config.Engine = EngineLease
	}
	switch config.Engine {
	case EngineLease, EngineAdmission, EngineDirlease, EngineRun, EngineDirleaseRun:
	default:
		return Report{}, fmt.Errorf("stress: engine %q is not implemented (lease, admission, dirlease, run, dirlease-run)", config.Engine)
	}
	if config.Engine == EngineDirlease && config.Procs < 2 {
		return Report{}, fmt.Errorf("stress: dirlease needs 2 or more procs (creators and a recoverer)")
	}
	if config.WorkerCommand == nil {
		return Report{}, fmt.Errorf("stress: WorkerCommand is required")
	}
	if config.CheckTimeout == 0 {
		config.CheckTimeout = defaultCheckTimeout
	}
	if config.RunTimeout == 0 {
		config.RunTimeout = defaultRunTimeout
	}
	if config.Progress == nil {
		config.Progress = io.Discard
	}
	if config.QuiesceEvery == 0 {
		config.QuiesceEvery = DefaultQuiesceEvery
	}
	if config.SegmentOps == 0 {
		config.SegmentOps = defaultSegmentOps
	}
	dir, err := canonicalWorkDir(config.Dir)
	if err != nil {
		return Report{}, err
	}
	if config.Engine == EngineRun || config.Engine == EngineDirleaseRun {
		return runRuns(config, dir)
	}
	run := &runner{config: config, dir: dir, namespace: filepath.Join(dir, "namespace"),
		deathsPath: filepath.Join(dir, "deaths.jsonl"), spawnsPath: filepath.Join(dir, "spawns.jsonl"), random: rand.New(rand.NewPCG(config.Seed, 0x5eed))}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		return Report{}, err
	}
	if config.QuiesceEvery > 0 {
		run.quiesce = &quiesceParent{dir: filepath.Join(dir, "barrier")}
		if err := os.Mkdir(run.quiesce.dir, 0o700); err != nil {
			return Report{}, err
		}
	}
	if config.Engine == EngineAdmission || config.Engine == EngineDirlease { // the state home must exist and be private
		if err := os.Mkdir(run.namespace, 0o700); err != nil {
			return Report{}, err
		}
	}
	if config.Engine == EngineDirlease {
		run.children = map[int]*childProc{}
		if err := os.Mkdir(run.workDir(), 0o700); err != nil {
			return Report{}, err
		}
	}
	started := time.Now()
	if err := run.workers(); err != nil {
		return Report{}, err
	}
	if err := run.liveness(); err != nil {
		return Report{}, err
	}
	run.report.RunSeconds = time.Since(started).Seconds()
	return run.check()
}

type runner struct {
	config     Config
	dir        string
	namespace  string
	deathsPath string
	spawnsPath string
	random     *rand.Rand
	lanes      map[int][]Record
	deaths     []Death
	laneNext   int
	report     Report
	quiesce    *quiesceParent     // nil: no pauses
	children   map[int]*childProc // dirlease: by the lane of their creator incarnation
}

// canonicalWorkDir makes dir and returns its absolute path with no symlink
// on the way (dirlease refuses a leased directory whose path has one).
func canonicalWorkDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// workDir is where dirlease creators make their leased directories.
func (r *runner) workDir() string { return filepath.Join(r.dir, "work") }

// barrierDir is the workers' barrier directory, "" without pauses.
func (r *runner) barrierDir() string {
	if r.quiesce == nil {
		return ""
	}
	return r.quiesce.dir
}

func (r *runner) logPath(lane int) string {
	return filepath.Join(r.dir, "logs", fmt.Sprintf("lane-%04d.jsonl", lane))
}

// workers runs every slot to the end of its share, killing at random.
func (r *runner) workers() error {
	r.lanes = map[int][]Record{}
	exits := make(chan exit, 2*r.config.Procs)
	live := 0
	slots := make([]*slot, r.config.Procs)
	for i := range slots {
		share := r.config.Ops / r.config.Procs
		if i < r.config.Ops%r.config.Procs {
			share++
		}
		slots[i] = &slot{worker: i + 1, remaining: share}
		if err := r.spawn(slots[i], exits); err != nil {
			return err
		}
		live++
	}
	incarnationsMax := 4*r.config.Ops + r.config.Procs
	deadline := time.After(r.config.RunTimeout)
	kill := r.killTimer()
	pause, settle := r.pauseTimer(), (<-chan time.Time)(nil)
	var childTick <-chan time.Time
	if r.children != nil {
		ticker := time.NewTicker(10 * time.Millisecond)
		defer ticker.Stop()
		childTick = ticker.C
	}
	for live > 0 {
		select {
		case <-deadline:
			r.stopAll(slots)
			return fmt.Errorf("stress: the run did not finish within %v", r.config.RunTimeout)
		case <-kill:
			r.killOne(slots)
			kill = r.killTimer()
		case <-pause:
			if err := r.quiesce.pause(); err != nil {
				r.stopAll(slots)
				return err
			}
			settle = time.After(quiescePoll)
		case <-settle:
			over, err := r.quiesce.settle(liveLanes(slots))
			if err != nil {
				r.stopAll(slots)
				return err
			}
			if settle = time.After(quiescePoll); over {
				settle, pause = nil, r.pauseTimer()
			}
		case <-childTick:
			r.killDueChildren()
		case ended := <-exits:
			if ended.child != nil {
				if err := r.childEnded(ended); err != nil {
					r.stopAll(slots)
					return err
				}
				continue
			}
			live--
			r.outlive(ended.lane)
			restart, err := r.ended(ended)
			if err != nil {
				r.stopAll(slots)
				return err
			}
			if restart {
				if r.report.Incarnations >= incarnationsMax {
					r.stopAll(slots)
					return fmt.Errorf("stress: more than %d incarnations", incarnationsMax)
				}
				if err := r.spawn(ended.slot, exits); err != nil {
					r.stopAll(slots)
					return err
				}
				live++
			}
		}
	}
	return r.stopChildren(exits)
}

// pauseTimer fires when the next pause is due (never without a barrier).
func (r *runner) pauseTimer() <-chan time.Time {
	if r.quiesce == nil {
		return nil
	}
	return time.After(r.config.QuiesceEvery)
}

// liveLanes are the lanes of the incarnations not yet reaped: each must
// acknowledge a pause (a killed one is reaped, and its death stamped, first).
func liveLanes(slots []*slot) []int {
	var lanes []int
	for _, s := range slots {
		if s.cmd != nil {
			lanes = append(lanes, s.lane)
		}
	}
	return lanes
}

// killTimer fires after an exponentially distributed pause (mean 1/rate).
func (r *runner) killTimer() <-chan time.Time {
	if r.config.KillRate == 0 {
		return nil
	}
	pause := time.Duration(r.random.ExpFloat64() / r.config.KillRate * float64(time.Second))
	return time.After(pause)
}

func (r *runner) spawn(s *slot, exits chan<- exit) error {
	var child *childProc
	role := ""
	if r.config.Engine == EngineDirlease {
		if role = dirRecovererRole(s.worker, r.config.Procs); role == RoleCreator {
			var err error
			if child, err = r.spawnChild(exits); err != nil {
				return err
			}
		}
	}
	r.laneNext++
	s.lane, s.killed = r.laneNext, false
	worker := WorkerConfig{Engine: r.config.Engine, Namespace: r.namespace, Worker: s.worker, Lane: s.lane, Ops: s.remaining,
		BarrierDir: r.barrierDir(), Role: role,
		Seed: r.config.Seed, NoInspect: r.config.NoInspect,
		PlantBlindInspector: r.config.PlantBlindInspector, LogPath: r.logPath(s.lane), SpawnsPath: r.spawnsPath, DeathsPath: r.deathsPath}
	if role != "" {
		worker.WorkDir = r.workDir()
	}
	if child != nil {
		worker.ChildPID, worker.ChildLane = child.pid, child.lane
		r.children[s.lane] = child
	}
	cmd := r.config.WorkerCommand(WorkerArgs(worker))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("stress: starting worker %d: %w", s.worker, err)
	}
	s.cmd = cmd
	s.pid = cmd.Process.Pid
	r.report.Incarnations++
	lane := s.lane
	// The child is blocked in awaitSpawn until this line exists, so its
	// start time is already fixed and readable.
	started := osenv.NewInspector().Inspect(s.pid).Identity.StartTime
	if err := appendJSONLine(r.spawnsPath, Spawn{Lane: lane, PID: s.pid, StartTime: started}); err != nil {
		_ = cmd.Process.Kill()
		return err
	}
	go func() {
		err := cmd.Wait()
		exits <- exit{slot: s, lane: lane, ns: MonotonicNs(), err: err}
	}()
	return nil
}

// killOne SIGKILLs a random running worker that has started operating
// (its log is not empty): a kill during process start-up tests nothing,
// and on a slow machine it could starve the run of progress.
func (r *runner) killOne(slots []*slot) {
	running := make([]*slot, 0, len(slots))
	for _, s := range slots {
		if s.cmd == nil || s.killed {
			continue
		}
		if info, err := os.Stat(r.logPath(s.lane)); err == nil && info.Size() > 0 {
			running = append(running, s)
		}
	}
	if len(running) == 0 {
		return
	}
	victim := running[r.random.IntN(len(running))]
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err == nil {
		victim.killed = true
	}
}

func (r *runner) stopAll(slots []*slot) {
	for _, s := range slots {
		if s.cmd != nil {
			_ = s.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	for _, c := range r.children {
		if !c.dead {
			_ = c.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
}

// ended records an incarnation's death (stamped after it was reaped),
// publishes it to the workers, and says whether the slot must restart.
func (r *runner) ended(ended exit) (restart bool, err error) {
	s := ended.slot
	s.cmd = nil
	signaled := false
	var exitErr *exec.ExitError
	if errors.As(ended.err, &exitErr) {
		status, ok := exitErr.Sys().(syscall.WaitStatus)
		signaled = ok && status.Signaled() && status.Signal() == syscall.SIGKILL
	}
	if ended.err != nil && !(signaled && s.killed) {
		return false, fmt.Errorf("stress: worker %d (lane %d) failed: %v", s.worker, ended.lane, ended.err)
	}
	death := Death{Lane: ended.lane, PID: s.pid, Ns: ended.ns, Killed: signaled}
	if err := appendJSONLine(r.deathsPath, death); err != nil {
		return false, err
	}
	r.deaths = append(r.deaths, death)
	records, err := ReadLog(r.logPath(ended.lane))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	r.lanes[ended.lane] = records
	s.remaining -= CountCalls(records)
	if s.remaining < 0 {
		panic(fmt.Sprintf("realstress: lane %d ran more operations than its share", ended.lane))
	}
	if signaled {
		r.report.Kills++
		fmt.Fprintf(r.config.Progress, "killed worker %d lane %d after %d ops; %d left\n", s.worker, ended.lane, CountCalls(records), s.remaining)
	}
	return s.remaining > 0, nil
}

// liveness is the final acquire, after every worker died: a lock that
// crashed holders can wedge is a bug. It is part of the history, on a lane
// of its own.
func (r *runner) liveness() error {
	r.laneNext++
	lane := r.laneNext
	log, err := CreateLog(r.logPath(lane))
	if err != nil {
		return err
	}
	config := WorkerConfig{Engine: r.config.Engine, Namespace: r.namespace, Lane: lane, Ops: 0, Seed: r.config.Seed,
		LogPath: r.logPath(lane), SpawnsPath: r.spawnsPath, DeathsPath: r.deathsPath}
	if r.config.Engine == EngineAdmission || r.config.Engine == EngineDirlease {
		live := r.livenessAdmission
		if r.config.Engine == EngineDirlease {
			live = r.livenessDirlease
		}
		text, acquired, err := live(&opLog{config: config, log: log})
		if err != nil {
			return err
		}
		r.report.LivenessAcquire = text
		if !acquired {
			r.report.Violations++ // liveness: every holder is dead, the acquire must succeed
		}
		return r.finishLiveness(log, lane)
	}
	manager, err := newGatedManager(config)
	if err != nil {
		return err
	}
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	w := &leaseWorker{opLog: opLog{config: config, log: log}, manager: manager, host: host, random: rand.New(rand.NewPCG(1, 1))}
	if err := w.acquire(); err != nil {
		return err
	}
	if err := r.finishLiveness(log, lane); err != nil {
		return err
	}
	records := r.lanes[lane]
	var result models.LeaseAcquireResult
	if len(records) == 2 && len(records[1].Output) > 0 {
		if err := json.Unmarshal(records[1].Output, &result); err != nil {
			return err
		}
	}
	r.report.LivenessAcquire = describeAcquire(result, records)
	if result.Kind != models.LeaseAcquired {
		r.report.Violations++ // liveness: every holder is dead, the acquire must succeed
	}
	return nil
}

// finishLiveness closes the liveness lane's log and adds it to the history.
func (r *runner) finishLiveness(log *LogWriter, lane int) error {
	if err := log.Close(); err != nil {
		return err
	}
	records, err := ReadLog(r.logPath(lane))
	if err != nil {
		return err
	}
	if len(records) != 2 {
		panic(fmt.Sprintf("realstress: liveness lane has %d records", len(records)))
	}
	r.lanes[lane] = records
	return nil
}

func describeAcquire(result models.LeaseAcquireResult, records []Record) string {
	switch result.Kind {
	case models.LeaseAcquired:
		return fmt.Sprintf("acquired epoch %d, reclaimed %d", result.Epoch, len(result.Reclaimed))
	case models.LeaseHeld:
		return "held by " + result.Session
	case models.LeaseAcquireRefused:
		return "refused " + result.Reason.String()
	}
	if len(records) == 2 {
		return "error: " + records[1].Error
	}
	return "no result"
}

// check merges the history and checks it in segments (CheckSegmented).
// Illegal is a violation; a timeout is Check "unknown": no verdict, neither
// a pass nor a violation (the caller must not report it as either).
func (r *runner) check() (Report, error) {
	history, err := BuildHistory(r.lanes, r.deaths)
	if err != nil {
		return r.report, err
	}
	// The liveness acquire is in the history (and completed: the run
	// returned it) but is not a worker operation.
	r.report.Ops = history.Completed + history.Unknown + history.DroppedInspects - 1
	r.report.Completed, r.report.Unknown = history.Completed-1, history.Unknown
	r.report.DroppedInspects, r.report.Reclaims = history.DroppedInspects, history.Reclaims
	if r.quiesce != nil {
		r.report.QuiescentPoints = r.quiesce.points
	}
	if r.config.Engine == EngineDirlease {
		r.report.Reclaims = recoveredDirectories(history.Operations)
		if err := r.checkMoves(); err != nil {
			return r.report, err
		}
	}
	engine, err := engineChecks(r.config.Engine)
	if err != nil {
		return r.report, err
	}
	if err := engine.validate(history.Operations); err != nil {
		panic("realstress: the merged history breaks the models' contract: " + err.Error())
	}
	if r.config.CompareWholeCheck {
		started := time.Now()
		whole, _ := engine.whole(history.Operations, r.config.CheckTimeout)
		r.report.WholeCheckSeconds = time.Since(started).Seconds()
		r.report.WholeCheck = checkName(whole)
	}
	started := time.Now()
	var result SegmentedResult
	if engine.model == nil {
		result.Segments, result.Model = 1, engine.wholeModel()
		result.Result, result.Info = engine.whole(history.Operations, r.config.CheckTimeout)
	} else {
		result = CheckSegmented(engine.model(), history.Operations, r.config.SegmentOps, r.config.CheckTimeout)
	}
	r.report.CheckSeconds = time.Since(started).Seconds()
	r.report.Segments = result.Segments
	r.report.Check = checkName(result.Result)
	if result.Result != porcupine.Illegal {
		return r.report, nil
	}
	r.report.Violations++
	r.report.Visualization = filepath.Join(r.dir, "history.html")
	if err := porcupine.VisualizePath(result.Model, result.Info, r.report.Visualization); err != nil {
		return r.report, err
	}
	return r.report, writeFailure(filepath.Join(r.dir, "failure.txt"), result.Info, result.Model)
}

// checkMoves checks the dirlease recoveries' moves against the ground
// truth (checkDirMoves); each bad move is a violation, described in
// GroundTruth and in ground-truth.txt.
func (r *runner) checkMoves() error {
	moves, err := readJSONLines[Move](filepath.Join(r.dir, "moves.jsonl"))
	if err != nil {
		return err
	}
	r.report.Moves = len(moves)
	violations, err := checkDirMoves(r.lanes, r.deaths, moves)
	if err != nil || len(violations) == 0 {
		return err
	}
	r.report.Violations += len(violations)
	r.report.GroundTruth = violations
	return os.WriteFile(filepath.Join(r.dir, "ground-truth.txt"), []byte(strings.Join(violations, "\n")+"\n"), 0o600)
}

// recoveredDirectories sums the directories the recovery passes of a
// dirlease history report they removed.
func recoveredDirectories(ops []porcupine.Operation) int {
	recovered := 0
	for _, op := range ops {
		if out, ok := op.Output.(models.DirRecoverResult); ok {
			recovered += out.Recovered
		}
	}
	return recovered
}

// checkName is a porcupine result as Report.Check says it.
func checkName(result porcupine.CheckResult) string {
	switch result {
	case porcupine.Ok:
		return "ok"
	case porcupine.Illegal:
		return "illegal"
	}
	return "unknown"
}

// engineCheck is how one engine's history is validated and checked.
type engineCheck struct {
	validate func([]porcupine.Operation) error
	model    func() porcupine.NondeterministicModel
	// whole is the models package's check of the history in one piece.
	whole func([]porcupine.Operation, time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo)
	// wholeModel, when model is nil, is the model of whole's report: the
	// history is then checked in one piece only.
	wholeModel func() porcupine.Model
}

func engineChecks(engine string) (engineCheck, error) {
	switch engine {
	case EngineLease:
		return engineCheck{validate: models.ValidateLeaseHistory, model: models.LeaseNondeterministicModel, whole: models.CheckLease}, nil
	case EngineAdmission:
		return engineCheck{validate: models.ValidateAdmissionHistory, model: models.AdmissionNondeterministicModel, whole: models.CheckAdmission}, nil
	case EngineDirlease:
		// Not segmented: CheckDirLease annotates each update with its
		// child's fate from the whole history first, which the models
		// package does not export; the dirlease model is deterministic.
		return engineCheck{validate: models.ValidateDirLeaseHistory, whole: models.CheckDirLease,
			wholeModel: models.DirLeaseModel}, nil
	}
	return engineCheck{}, fmt.Errorf("stress: no checker for engine %q", engine)
}
