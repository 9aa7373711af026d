package admissionwork

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Users at the command line: user processes run
// `leasereal admission run --state-home H -- CMD` by the code leasereal
// runs (leasecli.RunAdmission), one run after another on a state home of
// their own (userHome), with the user's process as the wrapper and a
// simulated command (workkit.CLICommands). A user is killed at any step by
// the crash fault and run again, the ordinary retry; a killed run's slot
// then waits for its helper, or for a reboot when the helper was never
// recorded. The slot's record is not in the history porcupine checks (the
// controllers' slot is); the oracle is CLICommands': a command never
// starts while another run's command works under its live wrapper.

const (
	userHome = "/home/cli"
	// userCommandPolls bounds a run's wait for its command (commands work
	// at most 30 ms).
	userCommandPolls = 40
	userBindAttempts = 4
)

// setupUsers makes the users' state home and starts the users.
func (aw *admissionWorld) setupUsers() error {
	if aw.opts.Users == 0 {
		return nil
	}
	aw.volume.FS().MkdirAll(userHome, 0o700, admissionUID)
	aw.userCommands = &workkit.CLICommands{World: aw.world, Alive: aw.Alive, Polls: userCommandPolls,
		Fail:    func(err error) { aw.fail(err, false) },
		Checked: "admission-user-command-checked", Outlived: "admission-user-command-outlived-wait",
		Spawn: func(wrapper *sim.Proc) (*sim.Proc, error) {
			return aw.spawnAt(placeOf(wrapper), wrapper.Name()+"-command", aw.userCommand)
		}}
	for i := 0; i < aw.opts.Users; i++ {
		if _, err := aw.spawnAt(aw.places.Deal(i), fmt.Sprintf("user-%d", i), aw.user); err != nil {
			return err
		}
		aw.controllers++
	}
	return nil
}

// user runs the command a few times.
func (aw *admissionWorld) user(p *sim.Proc) {
	d := aw.world.Decisions()
	config := admission.Config{StateHome: userHome, FS: p.FS(), Clock: p.Clock(), Inspector: p.Inspector(), IDs: p.IDs()}
	for i := 0; i < max(1, aw.opts.OpsPerProc/2); i++ {
		aw.userRun(p, config)
		_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(4))*time.Millisecond)
	}
}

// userRun is one `admission run`.
func (aw *admissionWorld) userRun(p *sim.Proc, config admission.Config) {
	w := aw.world
	run := leasecli.AdmissionRun{Command: []string{"export"}, BindAttempts: userBindAttempts, BindPause: time.Millisecond,
		Events: leasecli.AdmissionEvents{
			Held:     func(*admission.Admission) { w.Probe("admission-user-held") },
			Running:  func(leasecli.Child) { w.Probe("admission-user-running") },
			Released: func() { w.Probe("admission-user-released") },
		}}
	_, err := leasecli.RunAdmission(context.Background(), config, run, aw.userCommands.Starter(p, userHome))
	var failed *leasecli.RunError
	if errors.As(err, &failed) && failed.Step == leasecli.StepAcquire {
		switch {
		case errors.Is(err, admission.ErrActive):
			w.Probe("admission-user-busy")
		case errors.Is(err, admission.ErrIndeterminate):
			w.Probe("admission-user-indeterminate")
		}
	}
}

// userCommand is a user run's command: it works a drawn while and exits.
func (aw *admissionWorld) userCommand(p *sim.Proc) {
	_ = p.Clock().Sleep(context.Background(), time.Duration(1+aw.world.Decisions().Intn(30))*time.Millisecond)
}
