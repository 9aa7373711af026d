package realstress

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/lease/osenv"
)

// The parent's side of the dirlease creators' children (see dirlease.go).

// childProc is one child process, spawned with a creator incarnation.
type childProc struct {
	lane   int
	pid    int
	cmd    *exec.Cmd
	killAt time.Time
	killed bool
	dead   bool
}

// Child lifetimes: a child dies at random (exponential, mean childLifeMean)
// or at most childOutliveMax after its creator.
const (
	childLifeMean   = 2 * time.Second
	childOutliveMax = 300 * time.Millisecond
	childStopWait   = 30 * time.Second
)

// spawnChild starts a child on a lane of its own and publishes its spawn
// before the creator that records it starts.
func (r *runner) spawnChild(exits chan<- exit) (*childProc, error) {
	r.laneNext++
	c := &childProc{lane: r.laneNext, cmd: r.config.WorkerCommand([]string{"--child"})}
	c.cmd.Stdout, c.cmd.Stderr = os.Stderr, os.Stderr
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("stress: starting a child: %w", err)
	}
	c.pid = c.cmd.Process.Pid
	c.killAt = time.Now().Add(time.Duration(r.random.ExpFloat64() * float64(childLifeMean)))
	started := osenv.NewInspector().Inspect(c.pid).Identity.StartTime
	if err := appendJSONLine(r.spawnsPath, Spawn{Lane: c.lane, PID: c.pid, StartTime: started}); err != nil {
		_ = c.cmd.Process.Kill()
		return nil, err
	}
	go func() {
		err := c.cmd.Wait()
		exits <- exit{child: c, lane: c.lane, ns: MonotonicNs(), err: err}
	}()
	return c, nil
}

// outlive schedules the child of an ended creator incarnation to die
// within childOutliveMax.
func (r *runner) outlive(creatorLane int) {
	c := r.children[creatorLane]
	if c == nil || c.killed {
		return
	}
	if at := time.Now().Add(time.Duration(r.random.Int64N(int64(childOutliveMax)))); at.Before(c.killAt) {
		c.killAt = at
	}
}

// killDueChildren SIGKILLs the children whose time has come.
func (r *runner) killDueChildren() {
	now := time.Now()
	for _, c := range r.children {
		if !c.killed && !c.killAt.After(now) {
			if err := c.cmd.Process.Signal(syscall.SIGKILL); err == nil {
				c.killed = true
			}
		}
	}
}

// childEnded stamps a child's death (after it was reaped).
func (r *runner) childEnded(ended exit) error {
	c := ended.child
	var exitErr *exec.ExitError
	signaled := false
	if errors.As(ended.err, &exitErr) {
		status, ok := exitErr.Sys().(syscall.WaitStatus)
		signaled = ok && status.Signaled() && status.Signal() == syscall.SIGKILL
	}
	if ended.err != nil && !(signaled && c.killed) {
		return fmt.Errorf("stress: child lane %d failed: %v", c.lane, ended.err)
	}
	death := Death{Lane: c.lane, PID: c.pid, Ns: ended.ns, Killed: signaled}
	if err := appendJSONLine(r.deathsPath, death); err != nil {
		return err
	}
	r.deaths = append(r.deaths, death)
	c.dead = true
	return nil
}

// stopChildren kills every child still alive and stamps their deaths
// (bounded wait), once every worker is gone.
func (r *runner) stopChildren(exits <-chan exit) error {
	alive := 0
	for _, c := range r.children {
		if !c.dead {
			c.killAt = time.Time{}
			alive++
		}
	}
	r.killDueChildren()
	deadline := time.After(childStopWait)
	for alive > 0 {
		select {
		case ended := <-exits:
			if ended.child == nil {
				panic("realstress: a worker exit after every worker ended")
			}
			if err := r.childEnded(ended); err != nil {
				return err
			}
			alive--
		case <-deadline:
			return fmt.Errorf("stress: %d children did not die within %v of SIGKILL", alive, childStopWait)
		}
	}
	return nil
}
