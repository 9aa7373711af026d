package realstress

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// RealWorld runs a scenario with one real process per actor incarnation,
// each serving requests over a pipe (ActorMain).
type RealWorld struct {
	namespace string
	// Upgrade replaces the actors' executable on disk; nil refuses.
	upgrade func() error
	// Command builds an actor process for a namespace and session.
	command func(namespace, session string) *exec.Cmd
	actors  map[string]*realActor
}

type realActor struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	running bool
}

// NewRealWorld returns a world whose namespace lives in dir. upgrade
// replaces the executable the actors run (nil: scripts may not upgrade).
func NewRealWorld(dir string, command func(namespace, session string) *exec.Cmd, upgrade func() error) *RealWorld {
	return &RealWorld{namespace: filepath.Join(dir, "ns"), command: command, upgrade: upgrade,
		actors: map[string]*realActor{}}
}

// Upgrade replaces the actors' executable on disk.
func (w *RealWorld) Upgrade() error {
	if w.upgrade == nil {
		return fmt.Errorf("real: this world cannot upgrade its executable")
	}
	return w.upgrade()
}

// Start starts a real actor process for actor.
func (w *RealWorld) Start(actor, session string) error {
	cmd := w.command(w.namespace, session)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	w.actors[actor] = &realActor{cmd: cmd, in: in, out: bufio.NewReader(out), running: true}
	return nil
}

// Do sends request to actor's process and reads its outcome line.
func (w *RealWorld) Do(actor, request string) (Outcome, error) {
	a := w.actors[actor]
	if a == nil || !a.running {
		return Outcome{}, fmt.Errorf("real: actor %s is not running", actor)
	}
	if _, err := fmt.Fprintln(a.in, request); err != nil {
		return Outcome{}, err
	}
	line, err := a.out.ReadString('\n')
	if err != nil {
		return Outcome{}, fmt.Errorf("real: actor %s: %w", actor, err)
	}
	var outcome Outcome
	return outcome, json.Unmarshal([]byte(line), &outcome)
}

// Kill SIGKILLs actor's process, and reaps it or waits until it is a zombie.
func (w *RealWorld) Kill(actor string, reap bool) error {
	a := w.actors[actor]
	if a == nil || !a.running {
		return fmt.Errorf("real: actor %s is not running", actor)
	}
	a.running = false
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	if reap {
		_ = a.cmd.Wait()
		return nil
	}
	return waitForZombie(a.cmd.Process.Pid)
}

// Reap reaps actor's zombie.
func (w *RealWorld) Reap(actor string) error {
	a := w.actors[actor]
	if a == nil || a.running {
		return fmt.Errorf("real: actor %s is not a zombie", actor)
	}
	_ = a.cmd.Wait()
	return nil
}

// Close ends every actor still running by closing its input.
func (w *RealWorld) Close() {
	for _, a := range w.actors {
		if a.running {
			_ = a.in.Close()
			_ = a.cmd.Wait()
		}
	}
}

// waitForZombie polls /proc/PID/stat until the kernel shows the process as
// a single-threaded zombie (at most 5 s): right after a SIGKILL the leader
// can be Z while other threads still exit, which the rules call alive.
func waitForZombie(pid int) error {
	for range 500 {
		if fields, err := statFields(pid); err == nil && fields[0] == "Z" && fields[17] == "1" {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("PID %d did not become a zombie", pid)
}
