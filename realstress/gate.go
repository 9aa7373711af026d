package realstress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// Spawn is the parent's record of one worker incarnation's PID, published
// before the worker may run its first operation.
type Spawn struct {
	Lane int `json:"lane"`
	PID  int `json:"pid"`
	// StartTime is /proc/PID/stat's start time ("" if the parent could not
	// read it): it tells this incarnation from a later process reusing the
	// PID.
	StartTime string `json:"startTime"`
}

// deathGateWaitMax bounds one wait for the parent to publish deaths. Hitting
// it hides nothing: the engine then goes on, and if that makes the history
// illegal the run reports a violation.
const deathGateWaitMax = 10 * time.Second

// deathGate is an Inspector that, whenever it reports a worker process
// dead (absent, or a zombie), first waits until the parent has published
// the death of every incarnation that ever ran under that PID; when it
// reports a live process, it waits for the deaths of the incarnations that
// had that PID with another start time (the PID was reused, so they are
// dead, and the engine will judge them stale). The engine's next step (a
// reclaim) then happens after the death's stamp in the history. This is
// only a delay of the caller, a schedule the kernel could have produced on
// its own; see the package comment.
type deathGate struct {
	inner      lease.Inspector
	spawnsPath string
	deathsPath string
	// waitMax bounds one wait (deathGateWaitMax when zero); giving up is
	// said on report (the worker's stderr, which the parent passes on).
	waitMax time.Duration
	report  io.Writer
}

func (g deathGate) Current() (lease.ProcessIdentity, error) { return g.inner.Current() }

func (g deathGate) Inspect(pid int) lease.Inspection {
	inspection := g.inner.Inspect(pid)
	switch {
	case inspection.Kind == lease.InspectAbsent:
		g.awaitDeaths(pid, "")
	case inspection.Kind == lease.InspectLive && inspection.State == lease.StateZombie:
		g.awaitDeaths(pid, "")
	case inspection.Kind == lease.InspectLive:
		g.awaitDeaths(pid, inspection.Identity.StartTime)
	}
	return inspection
}

// awaitDeaths waits until every incarnation spawned with pid (except the
// one with start time alive, the process seen running) has a published
// death. A file it cannot read or decode keeps the gate shut (it is read
// again): opening on an error would let the engine act before the death's
// stamp, which the check reports as a violation of the engine. Giving up
// at the bound is said, so that a violation that follows is not taken for
// the engine's.
func (g deathGate) awaitDeaths(pid int, alive string) {
	waitMax := g.waitMax
	if waitMax == 0 {
		waitMax = deathGateWaitMax
	}
	deadline := time.Now().Add(waitMax)
	var (
		pending int
		err     error
	)
	for time.Now().Before(deadline) {
		if pending, err = g.pendingDeaths(pid, alive); err == nil && pending == 0 {
			return
		}
		time.Sleep(500 * time.Microsecond)
	}
	report := g.report
	if report == nil {
		report = os.Stderr
	}
	fmt.Fprintf(report, "realstress: death gate: PID %d: %d death(s) still unpublished after %v (last error: %v); going on, and a violation that follows may be the gate's\n",
		pid, pending, waitMax, err)
}

func (g deathGate) pendingDeaths(pid int, alive string) (int, error) {
	spawns, err := readJSONLines[Spawn](g.spawnsPath)
	if err != nil {
		return 0, err
	}
	lanes := map[int]bool{}
	for _, spawn := range spawns {
		if spawn.PID == pid && (alive == "" || spawn.StartTime != alive) {
			lanes[spawn.Lane] = true
		}
	}
	if len(lanes) == 0 {
		return 0, nil
	}
	deaths, err := readJSONLines[Death](g.deathsPath)
	for _, death := range deaths {
		delete(lanes, death.Lane)
	}
	return len(lanes), err
}

// awaitSpawn blocks a new worker until the parent has published its spawn
// record, so no death of this incarnation can be observed before its PID is
// known to every gate.
func awaitSpawn(spawnsPath string, lane int) error {
	deadline := time.Now().Add(deathGateWaitMax)
	for time.Now().Before(deadline) {
		spawns, err := readJSONLines[Spawn](spawnsPath)
		if err != nil {
			return err
		}
		for _, spawn := range spawns {
			if spawn.Lane == lane {
				if spawn.PID != os.Getpid() {
					return fmt.Errorf("lane %d: spawn record names PID %d, this is %d", lane, spawn.PID, os.Getpid())
				}
				return nil
			}
		}
		time.Sleep(500 * time.Microsecond)
	}
	return fmt.Errorf("lane %d: the parent did not publish its spawn within %v", lane, deathGateWaitMax)
}

// readJSONLines reads a JSON-lines file; a missing file is empty and a last
// line without its newline is still being written.
func readJSONLines[T any](path string) ([]T, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var values []T
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasSuffix(line, "\n") {
			break
		}
		var value T
		if err := json.Unmarshal([]byte(line), &value); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		values = append(values, value)
	}
	return values, nil
}

// appendJSONLine appends one JSON line to path with one write(2).
func appendJSONLine(path string, value any) error {
	line, err := json.Marshal(value)
	if err != nil {
		return err
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = file.Write(append(line, '\n'))
	return errors.Join(err, file.Close())
}

// startWorker is every worker incarnation's start: it waits until the
// parent has recorded its spawn (so the death gate knows the PID), then
// returns the host name its operations record and its open operation log.
func startWorker(config WorkerConfig) (string, *LogWriter, error) {
	if err := awaitSpawn(config.SpawnsPath, config.Lane); err != nil {
		return "", nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		return "", nil, err
	}
	log, err := CreateLog(config.LogPath)
	return host, log, err
}
