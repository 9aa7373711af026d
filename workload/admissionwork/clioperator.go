package admissionwork

// CLI operators: in some runs an operator process is a person at a
// terminal who types `leasereal admission inspect` and does what it
// advises, through leasereal's own glue (package leasecli): for a state
// judged operator-needed, the quarantine command inspect printed, with the
// --sha256 it printed, sometimes after its dry run (no --sha256), and
// sometimes on advice several steps old. The other operators call the
// engine's InspectState and Quarantine directly, on their own judgement
// (operators.go).
//
// The ground truth at the advice (judgeAdvice): inspect never advises an
// operator command for a record whose owner or helper is alive at the
// operator's own place (host and PID namespace) where its inspection could
// read it; at the move (judgeOperatorMove), as for every operator, plus:
// a dry run moves nothing. The quarantine is an operation of the history
// (models.AdmissionQuarantine), as the API's is: a glue refusal (active)
// or nothing to do moves nothing.
//
// The draw comes from a decision stream of its own (key cli-<name>) whose
// answer 0 is the API operator, so a run replayed from decisions recorded
// before CLI operators existed still runs the API operator.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// cliOperatorProbes are the declared probes of the CLI operators.
var cliOperatorProbes = []string{
	"admission-cli-operator-advised",
	"admission-cli-live-not-advised", // judgeAdvice saw a live owner or helper here, and no advice
	"admission-cli-quarantine-dry-run",
	"admission-cli-quarantine-refused",
	"admission-cli-quarantined",
	"admission-cli-state-home-missing-refused", // a mistyped --state-home (cliMissingHome)
}

// drawsCLIOperator draws whether operator p works through leasereal.
func (aw *admissionWorld) drawsCLIOperator(p *sim.Proc) bool {
	return aw.world.Decisions().Stream("cli-"+p.Name()).Intn(2) == 1
}

// cliOperator runs inspect, and the quarantine it advises, a few times.
func (aw *admissionWorld) cliOperator(p *sim.Proc) {
	d := aw.world.Decisions().Stream("cli-" + p.Name())
	cfg := aw.config(p)
	inspector := &workkit.UnknownInspector{Inspector: cfg.Inspector}
	cfg.FS.(*admissionFS).operator, cfg.Inspector = inspector, inspector
	if aw.world.Decisions().Stream("home-"+p.Name()).Intn(4) == 0 {
		aw.cliMissingHome(p)
	}
	advised := "" // the operator command inspect printed last
	for i := 1 + d.Intn(operatorOpsMax); i > 0; i-- {
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(8))*time.Millisecond)
		if advised == "" || d.Intn(3) == 0 {
			inspector.Forget()
			state := aw.operatorInspect(p, cfg)
			aw.judgeOperatorNeeded(p, inspector, state)
			advised = aw.cliAdvice(p, inspector, state)
		}
		if advised == "" {
			continue
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(operatorStaleMax))*time.Millisecond)
		if d.Intn(3) == 0 {
			aw.cliDryRun(p, cfg)
		}
		inspector.Forget()
		aw.noteCLIQuarantine(aw.quarantine(p, cfg, workkit.CommandFlag(advised, "--sha256"), cliQuarantine))
	}
}

// cliAdvice is the operator command inspect prints for state ("" for
// none; state nil when inspect was refused), judged by judgeAdvice.
func (aw *admissionWorld) cliAdvice(p *sim.Proc, inspector *workkit.UnknownInspector, state *admission.State) string {
	if state == nil {
		return ""
	}
	operators := leasecli.AdmissionOperators(*state, admissionHome)
	aw.judgeAdvice(p, inspector, state, len(operators) > 0)
	if len(operators) == 0 {
		return ""
	}
	aw.world.Probe("admission-cli-operator-advised")
	command := operators[0].Command
	if home := workkit.CommandFlag(command, "--state-home"); home != admissionHome {
		aw.fail(fmt.Errorf("%s's inspect of %s advises %q, on state home %q", p.Name(), admissionHome, command, home), false)
	}
	return command
}

// judgeAdvice is the ground truth when inspect judged state: it advises
// an operator command (advised) only when no process the record names
// (owner, helper) is alive at the operator's own place with a /proc entry
// its inspection could read. Such a process makes the record active, or
// waiting for its helper, and a quarantine would take the slot from it.
func (aw *admissionWorld) judgeAdvice(p *sim.Proc, inspector *workkit.UnknownInspector, state *admission.State, advised bool) {
	claim := state.Claim
	if claim == nil || claim.Owner.Legacy {
		return
	}
	aw.judgeAdvisedProc(p, inspector, state, advised, "owner", aw.owners[claim.ID], claim.Owner.PID)
	if claim.HelperOwner != nil {
		aw.judgeAdvisedProc(p, inspector, state, advised, "helper", aw.helperNamed(claim.ID, claim.HelperOwner),
			claim.HelperOwner.PID)
	}
}

// judgeAdvisedProc judges one process the record names (q: nil when the
// workload does not know it; pid: the PID the record gives it).
func (aw *admissionWorld) judgeAdvisedProc(p *sim.Proc, inspector *workkit.UnknownInspector, state *admission.State, advised bool,
	role string, q *sim.Proc, pid int) {
	if q == nil || q.Table().PID != pid || !aw.Alive(q) || !placeOf(q).Same(p) || inspector.Unknown[pid] {
		return
	}
	if !advised {
		aw.world.Probe("admission-cli-live-not-advised")
		return
	}
	aw.fail(fmt.Errorf("%s's leasereal admission inspect advises quarantining admission %s (%s, verdict %s), whose %s %s "+
		"(PID %d) is alive in the operator's own host and PID namespace", p.Name(), state.Claim.ID, state.Claim.Phase,
		leasecli.AdmissionVerdict(*state), role, q.Name(), pid), false)
}

// cliDryRun is `leasereal admission quarantine` without --sha256: it must
// move nothing (judgeOperatorMove fails a move made during it).
func (aw *admissionWorld) cliDryRun(p *sim.Proc, cfg admission.Config) {
	fsys := cfg.FS.(*admissionFS)
	fsys.dryRun = true
	outcome, err := leasecli.AdmissionQuarantine(context.Background(), cfg, "")
	fsys.dryRun = false
	switch {
	case err != nil:
	case outcome.Result == leasecli.QuarantineDryRun:
		aw.world.Probe("admission-cli-quarantine-dry-run")
	case outcome.Result == leasecli.Quarantined:
		aw.fail(fmt.Errorf("%s's dry run of leasereal admission quarantine reports a move to %s",
			p.Name(), outcome.QuarantinePath), false)
	}
}

// cliQuarantine is `leasereal admission quarantine --sha256 SHA`.
func cliQuarantine(ctx context.Context, cfg admission.Config, sha string) (string, leasecli.QuarantineResult, error) {
	outcome, err := leasecli.AdmissionQuarantine(ctx, cfg, sha)
	return outcome.QuarantinePath, outcome.Result, err
}

// noteCLIQuarantine fires the probes of a quarantine made through the glue.
func (aw *admissionWorld) noteCLIQuarantine(result leasecli.QuarantineResult, err error) {
	switch {
	case err != nil:
	case result == leasecli.QuarantineRefused:
		aw.world.Probe("admission-cli-quarantine-refused")
	case result == leasecli.Quarantined:
		aw.world.Probe("admission-cli-quarantined")
	}
}

// admissionMistypedHome is a state home the workload never makes: an
// operator's typo of admissionHome.
const admissionMistypedHome = admissionHome + "-typo"

// cliMissingHome is `leasereal admission inspect` and `quarantine` on a
// mistyped --state-home: each must refuse it as a missing state home
// (leasecli.StateHomeMissing, leasereal's exit 3 with the mkdir that
// creates it), never as an I/O error, and create nothing there.
func (aw *admissionWorld) cliMissingHome(p *sim.Proc) {
	cfg := admission.Config{StateHome: admissionMistypedHome, FS: leasecli.StateHomeFS(p.FS(), admissionMistypedHome, notExist),
		Clock: p.Clock(), Inspector: p.Inspector(), IDs: p.IDs()}
	_, inspectErr := admission.InspectState(context.Background(), cfg)
	_, quarantineErr := leasecli.AdmissionQuarantine(context.Background(), cfg, "")
	refused := 0
	for _, err := range []error{inspectErr, quarantineErr} {
		switch _, ok := leasecli.StateHomeMissing(err); {
		case ok:
			refused++
		case !aw.cliMissingHomeFaulted(err):
			aw.fail(fmt.Errorf("%s's leasereal admission on the missing state home %s was not refused as missing: %v",
				p.Name(), admissionMistypedHome, err), false)
			return
		}
	}
	if _, err := aw.volume.Root().Lstat(admissionMistypedHome); err == nil {
		aw.fail(fmt.Errorf("%s's leasereal admission created the missing state home %s", p.Name(), admissionMistypedHome), false)
		return
	}
	if refused > 0 {
		aw.world.Probe("admission-cli-state-home-missing-refused")
	}
}

// notExist is StateHomeFS's test of a missing path in simfs.
func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// cliMissingHomeFaulted reports an error a fault injected into the lstat
// of the missing home (EIO, EACCES...): the refusal cannot be judged.
func (aw *admissionWorld) cliMissingHomeFaulted(err error) bool {
	return err != nil && !notExist(err)
}
