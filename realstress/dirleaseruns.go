package realstress

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EngineDirleaseRun is the campaign of `leasereal dirlease run` as people
// use it: wrappers (`dirlease run -w`) on two directories the user names,
// each made again (mkdir) before a run, since a recovery removes an
// abandoned lease's directory; kill -9 of wrappers while their commands
// work (the command dies too, by leasereal's parent-death signal: a
// dirlease lease records its child, not the child's descendants); and an
// operator typing `dirlease recover` and `dirlease inspect` in a second
// terminal. It checks the promise of docs/LEASEREAL.md: one command in a
// leased directory at a time.
//
// A run's command is a job incarnation of the stress binary, leasereal's
// direct child. As it starts it registers (PID, start time) in its
// directory's registry file beside the directory, then looks at every
// other command registered there: one that still runs is an overlap mark,
// a violation. A killed command writes no exit mark; the campaign waits
// until every registered command's process is gone.
const EngineDirleaseRun = "dirlease-run"

// Bounds of a dirlease-run campaign.
const (
	dirleaseRunPaths = 2
	// dirleaseRunRecoverAfter is each run's launching window: a killed
	// wrapper's command died with it, so a short one keeps the paths
	// moving.
	dirleaseRunRecoverAfter = "100ms"
)

// registryEntry is one command registered on a directory.
type registryEntry struct {
	Run   int    `json:"run"`
	PID   int    `json:"pid"`
	Start string `json:"start"`
}

func (c *runsCampaign) userPath(i int) string {
	return filepath.Join(c.dir, "paths", "shared-"+strconv.Itoa(i))
}

func (c *runsCampaign) registryPath(i int) string {
	return filepath.Join(c.dir, "registry-"+strconv.Itoa(i)+".jsonl")
}

func (c *runsCampaign) stateHome() string { return filepath.Join(c.dir, "home") }

// dirleaseWrapperArgs is `dirlease run` of job on a path drawn from the
// shared ones, made again first when a recovery removed it.
func (c *runsCampaign) dirleaseWrapperArgs(run int, job *exec.Cmd) ([]string, error) {
	i := c.random.IntN(dirleaseRunPaths)
	path, home := c.userPath(i), c.stateHome()
	if c.config.PlantSplitNamespace {
		home = filepath.Join(c.dir, "home-"+strconv.Itoa(run))
	}
	for _, dir := range []string{home, path} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	args := []string{"dirlease", "run", "--state-home", home, "--path", path, "-w", runWaitSeconds,
		"--recover-after", dirleaseRunRecoverAfter, "--", job.Path}
	return append(append(args, job.Args[1:]...), "--registry", c.registryPath(i)), nil
}

// dirleaseOperatorCommands are the operator's second terminal.
func (c *runsCampaign) dirleaseOperatorCommands() [][]string {
	return [][]string{{"dirlease", "recover", "--state-home", c.stateHome()}, {"dirlease", "inspect", "--state-home", c.stateHome()}}
}

// dirleaseFinalRuns is the liveness check: once every command is gone and
// a recovery has run, a run on each path gets its lease.
func (c *runsCampaign) dirleaseFinalRuns() string {
	time.Sleep(150 * time.Millisecond) // past every launching window
	if code := exitCode(c.config.LeaserealCommand(c.dirleaseOperatorCommands()[0]).Run()); code != 0 {
		return "recover: exit " + strconv.Itoa(code)
	}
	for i := range dirleaseRunPaths {
		if err := os.MkdirAll(c.userPath(i), 0o700); err != nil {
			return err.Error()
		}
		cmd := c.config.LeaserealCommand([]string{"dirlease", "run", "--state-home", c.stateHome(), "--path", c.userPath(i),
			"-w", runWaitSeconds, "--", "true"})
		if code := exitCode(cmd.Run()); code != 0 {
			return fmt.Sprintf("refused on %s: exit %d", c.userPath(i), code)
		}
	}
	return "acquired"
}

// settledCommands waits until every registered command's process is gone
// (a killed wrapper's command dies by its parent-death signal, so each
// does), and returns the marks.
func (c *runsCampaign) settledCommands() ([]JobMark, error) {
	deadline := time.Now().Add(jobsSettleMax)
	for {
		running := 0
		for i := range dirleaseRunPaths {
			entries, err := readJSONLines[registryEntry](c.registryPath(i))
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				if processRuns(e.PID, e.Start) {
					running++
				}
			}
		}
		if running == 0 {
			return readJSONLines[JobMark](c.marksPath)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("stress: %d command process(es) still ran %v after the last run", running, jobsSettleMax)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CheckDirleaseRunMarks checks the marks of an EngineDirleaseRun campaign:
// every overlap mark is a violation.
func CheckDirleaseRunMarks(marks []JobMark) []string {
	var violations []string
	for _, m := range marks {
		if m.Event == "overlap" {
			violations = append(violations, fmt.Sprintf("run %d's command (pid %d) started in its directory while run %d's command (pid %d) still ran there",
				m.Run, m.PID, m.OtherRun, m.OtherPID))
		}
	}
	return violations
}

// registerCommand is a command's start on a registry: it registers itself,
// then marks an overlap for every other registered command that still
// runs. Registering first means two commands that start together each see
// the other.
func registerCommand(registry, marks string, run int) error {
	self := os.Getpid()
	start, err := processStart(self)
	if err != nil {
		return err
	}
	if err := appendJSONLine(registry, registryEntry{Run: run, PID: self, Start: start}); err != nil {
		return err
	}
	entries, err := readJSONLines[registryEntry](registry)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.PID != self && processRuns(e.PID, e.Start) {
			overlap := JobMark{Run: run, PID: self, Event: "overlap", Ns: MonotonicNs(), OtherRun: e.Run, OtherPID: e.PID}
			if err := appendJSONLine(marks, overlap); err != nil {
				return err
			}
		}
	}
	return nil
}

// processRuns reports whether pid is the process that started at start
// and has not exited (a zombie has).
func processRuns(pid int, start string) bool {
	state, started, err := processStat(pid)
	return err == nil && started == start && state != "Z" && state != "X"
}

// processStart is pid's start time (/proc/PID/stat field 22).
func processStart(pid int) (string, error) {
	_, start, err := processStat(pid)
	return start, err
}

// processStat reads pid's state and start time from /proc/PID/stat.
func processStat(pid int) (state, start string, err error) {
	fields, err := statFields(pid)
	if err != nil {
		return "", "", err
	}
	return fields[0], fields[19], nil
}

// statFields are /proc/PID/stat's fields after the command name: field 3
// (the state) is fields[0], field 22 (the start time) fields[19]. One
// reader serves waitForZombie and the dirlease-run registry.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, err
	}
	text := string(data)
	fields := strings.Fields(text[strings.LastIndexByte(text, ')')+1:])
	if len(fields) < 20 {
		return nil, errors.New("realstress: a short /proc/" + strconv.Itoa(pid) + "/stat")
	}
	return fields, nil
}
