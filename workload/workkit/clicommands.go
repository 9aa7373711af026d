package workkit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/sim"
)

// CLICommands are the commands of simulated engine-backed CLI runs
// (`leasereal dirlease run`, `leasereal admission run`): the process side
// of leasecli.Starter and leasecli.Child in a world. A run's wrapper is a
// simulated process that calls the CLI's own run logic; its command is a
// process Spawn starts beside it, which works a while and exits. Each
// command belongs to a place (the leased path, the state home). The
// oracle: a command never starts in a place while another run's command
// works there under its live wrapper, which has not seen it exit.
type CLICommands struct {
	World *sim.World
	// Spawn starts a wrapper's command; Alive says whether a process lives.
	Spawn func(wrapper *sim.Proc) (*sim.Proc, error)
	Alive func(p *sim.Proc) bool
	// Fail reports an oracle failure.
	Fail func(err error)
	// Polls bounds a wrapper's polls of its command's exit, each 1 to 3 ms.
	Polls int
	// Checked is the probe fired when a start is judged against an
	// earlier command in its place; Outlived when a wrapper gave up
	// waiting for its command.
	Checked, Outlived string
	started           map[string][]*CLICommand
}

// Starter is the starter of wrapper's runs in place.
func (c *CLICommands) Starter(wrapper *sim.Proc, place string) leasecli.Starter {
	return cliStarter{commands: c, wrapper: wrapper, place: place}
}

type cliStarter struct {
	commands *CLICommands
	wrapper  *sim.Proc
	place    string
}

func (s cliStarter) Start([]string, []string) (leasecli.Child, int, error) {
	c := s.commands
	c.checkAlone(s.wrapper, s.place)
	proc, err := c.Spawn(s.wrapper)
	if err != nil {
		return nil, 127, err
	}
	command := &CLICommand{commands: c, wrapper: s.wrapper, Proc: proc, unwaited: true}
	if c.started == nil {
		c.started = make(map[string][]*CLICommand)
	}
	c.started[s.place] = append(c.started[s.place], command)
	return command, 0, nil
}

// checkAlone fails the run when a command starts in place while another
// run's command works there under its live wrapper. A command whose
// wrapper was killed is not judged (leasereal's parent-death signal would
// end it; the simulated command outlives it), nor one whose wrapper gave
// up waiting for it (Polls).
func (c *CLICommands) checkAlone(wrapper *sim.Proc, place string) {
	if len(c.started[place]) > 0 {
		c.World.Probe(c.Checked)
	}
	for _, other := range c.started[place] {
		if other.unwaited && c.Alive(other.Proc) && c.Alive(other.wrapper) {
			c.Fail(fmt.Errorf("%s starts its command in %s while %s's command %s works there under its live run",
				wrapper.Name(), place, other.wrapper.Name(), other.Proc.Name()))
		}
	}
}

// CLICommand is a simulated run's command. Its wrapper cannot end another
// simulated process (only the world's crash fault does), so Kill refuses
// and Wait waits for the command's own exit. unwaited is set until its
// wrapper's Wait returns.
type CLICommand struct {
	commands *CLICommands
	wrapper  *sim.Proc
	Proc     *sim.Proc
	unwaited bool
}

func (c *CLICommand) PID() int              { return c.Proc.Table().PID }
func (c *CLICommand) Exited() (bool, error) { return !c.commands.Alive(c.Proc), nil }
func (c *CLICommand) Kill() error           { return errCLIKill }

// Wait polls the command's exit, at most Polls times.
func (c *CLICommand) Wait(ctx context.Context) (int, error) {
	defer func() { c.unwaited = false }()
	cs := c.commands
	d := cs.World.Decisions()
	for poll := 0; poll < cs.Polls && cs.Alive(c.Proc); poll++ {
		if err := c.wrapper.Clock().Sleep(ctx, time.Duration(1+d.Intn(3))*time.Millisecond); err != nil {
			return 128 + 9, err
		}
	}
	if cs.Alive(c.Proc) {
		cs.World.Probe(cs.Outlived)
		return 128 + 9, fmt.Errorf("%s outlived %d polls", c.Proc.Name(), cs.Polls)
	}
	return 0, nil
}

// errCLIKill is a simulated wrapper's refused kill of its command.
var errCLIKill = errors.New("workkit: a simulated wrapper cannot kill its command; it waits for its exit")

// CommandFlag is the value that follows flag in an operator command as
// leasereal prints it ("" when the command has no such flag): a simulated
// operator runs the command it was told, with the confirmation it printed.
func CommandFlag(command, flag string) string {
	fields := strings.Fields(command)
	for i := 0; i+1 < len(fields); i++ {
		if fields[i] == flag {
			return fields[i+1]
		}
	}
	return ""
}
