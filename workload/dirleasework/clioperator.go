package dirleasework

// CLI operators: in some runs an operator process is a person at a
// terminal who types `leasereal dirlease inspect` and does what it
// advises, through leasereal's own glue (package leasecli): for a claim
// judged operator-needed, the quarantine command inspect printed, with the
// --claim and --sha256 it printed, sometimes after its dry run (no
// --sha256), and sometimes on advice several steps old. The other
// operators call the engine's Inspect and Quarantine directly, on their own
// judgement (operators.go).
//
// The ground truth at the advice (judgeAdvice): inspect never advises a
// quarantine of a claim whose owner, or the running child it records, is
// alive at the operator's own place (host and PID namespace) where its
// inspection could read it; at the move, as for every operator
// (noteQuarantined), plus: a dry run moves nothing.
//
// The draw comes from a decision stream of its own (key cli-<name>) whose
// answer 0 is the API operator, so a run replayed from decisions recorded
// before CLI operators existed still runs the API operator.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// cliOperatorProbes are the declared probes of the CLI operators.
var cliOperatorProbes = []string{
	"dirlease-cli-operator-advised",
	"dirlease-cli-live-not-advised", // judgeAdvice saw a live owner or child here, and no advice
	"dirlease-cli-quarantine-dry-run",
	"dirlease-cli-quarantine-refused",
	"dirlease-cli-quarantined",
}

// drawsCLIOperator draws whether operator p works through leasereal.
func (dw *dirWorld) drawsCLIOperator(p *sim.Proc) bool {
	return dw.world.Decisions().Stream("cli-"+p.Name()).Intn(2) == 1
}

// cliOperator runs inspect, and one of the quarantines it advises, each
// round.
func (dw *dirWorld) cliOperator(p *sim.Proc) {
	d := dw.world.Decisions().Stream("cli-" + p.Name())
	cfg, fsys := dw.config(p, p.Clock())
	fsys.operator = true
	inspector := &workkit.UnknownInspector{Inspector: cfg.Inspector}
	cfg.Inspector = inspector
	var advised []string // the quarantine commands inspect printed last
	for i := 0; i < dw.opts.OpsPerProc; i++ {
		if advised == nil || d.Intn(3) == 0 {
			advised = dw.cliAdvice(p, cfg, inspector)
		}
		if len(advised) > 0 {
			command := advised[d.Intn(len(advised))]
			_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(operatorStaleMax))*time.Millisecond)
			name := workkit.CommandFlag(command, "--claim")
			if d.Intn(3) == 0 {
				dw.cliDryRun(p, cfg, fsys, name)
			}
			dw.noteCLIQuarantine(dw.quarantine(p, cfg, fsys, name, workkit.CommandFlag(command, "--sha256"), cliQuarantine))
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(8))*time.Millisecond)
	}
}

// cliAdvice is inspect: the quarantine commands it prints (nil when it
// was refused), each claim's advice judged by judgeAdvice.
func (dw *dirWorld) cliAdvice(p *sim.Proc, cfg dirlease.Config, inspector *workkit.UnknownInspector) []string {
	inspector.Forget()
	watch := dw.loose.Watch(dw.world)
	states, err := dirlease.Inspect(context.Background(), cfg)
	dw.judgeLoose(p, "Inspect", watch, err)
	if err != nil {
		dw.world.Probe("dirlease-operator-inspect-refused")
		return nil
	}
	dw.world.Probe("dirlease-operator-inspected")
	judged := leasecli.JudgeDirlease(states, dirleaseHome, dirleaseHome)
	advised := []string{}
	for i, state := range states {
		operator := judged.Claims[i].Operator
		dw.judgeAdvice(p, inspector, state, operator != nil)
		if operator != nil && workkit.CommandFlag(operator.Command, "--sha256") != "" {
			dw.checkCommand(p, state, operator.Command)
			advised = append(advised, operator.Command)
		}
	}
	if len(advised) > 0 {
		dw.world.Probe("dirlease-cli-operator-advised")
	}
	return advised
}

// checkCommand fails the run when a claim's quarantine command names
// another state home or claim than the one inspect judged.
func (dw *dirWorld) checkCommand(p *sim.Proc, state dirlease.ClaimState, command string) {
	if workkit.CommandFlag(command, "--state-home") != dirleaseHome || workkit.CommandFlag(command, "--claim") != state.Name {
		dw.fail(fmt.Errorf("%s's inspect of claim %s in %s advises %q", p.Name(), state.Name, dirleaseHome, command), false)
	}
}

// judgeAdvice is the ground truth when inspect judged a claim: it advises
// an operator command (advised) only when neither the claim's owner nor
// the running child it surely records is alive at the operator's own place
// with a /proc entry its inspection could read: either makes the claim
// active, and a quarantine would take the directory from under it.
func (dw *dirWorld) judgeAdvice(p *sim.Proc, inspector *workkit.UnknownInspector, state dirlease.ClaimState, advised bool) {
	claim := state.Claim
	if claim == nil {
		return
	}
	t := dw.tracks[claim.Path]
	if t == nil || !t.claimed || t.claimID != claim.ID {
		return
	}
	dw.judgeAdvisedProc(p, inspector, state, advised, "owner", t.owner, claim.Owner.PID)
	if t.child != nil && claim.ChildOwner != nil {
		dw.judgeAdvisedProc(p, inspector, state, advised, "running child", t.child, claim.ChildOwner.PID)
	}
}

// judgeAdvisedProc judges one process a claim names (pid: the PID the
// claim gives it).
func (dw *dirWorld) judgeAdvisedProc(p *sim.Proc, inspector *workkit.UnknownInspector, state dirlease.ClaimState, advised bool,
	role string, q *sim.Proc, pid int) {
	if q == nil || q.Table().PID != pid || !dw.Alive(q) || placeOf(q) != placeOf(p) || inspector.Unknown[pid] {
		return
	}
	if !advised {
		dw.world.Probe("dirlease-cli-live-not-advised")
		return
	}
	dw.fail(fmt.Errorf("%s's leasereal dirlease inspect advises an operator command for claim %s of %s (%s, verdict %s), "+
		"whose %s %s (PID %d) is alive in the operator's own host and PID namespace", p.Name(), state.Name,
		state.Claim.Path, state.Disposition, leasecli.ClaimVerdict(state), role, q.Name(), pid), false)
}

// cliDryRun is `leasereal dirlease quarantine --claim NAME` without
// --sha256: it must move nothing (operatorMove fails a move made during it).
func (dw *dirWorld) cliDryRun(p *sim.Proc, cfg dirlease.Config, fsys *dirFS, name string) {
	fsys.dryRun = true
	outcome, err := leasecli.DirleaseQuarantine(context.Background(), cfg, name, "")
	fsys.dryRun = false
	switch {
	case err != nil:
	case outcome.Result == leasecli.QuarantineDryRun:
		dw.world.Probe("dirlease-cli-quarantine-dry-run")
	case outcome.Result == leasecli.Quarantined:
		dw.fail(fmt.Errorf("%s's dry run of leasereal dirlease quarantine reports %s moved to %s",
			p.Name(), name, outcome.QuarantinePath), false)
	}
}

// cliQuarantine is `leasereal dirlease quarantine --claim NAME --sha256 SHA`.
func cliQuarantine(ctx context.Context, cfg dirlease.Config, name, sha string) (dirlease.Quarantined, error) {
	outcome, err := leasecli.DirleaseQuarantine(ctx, cfg, name, sha)
	if err == nil && outcome.Result != leasecli.Quarantined {
		panic(fmt.Sprintf("leasecli: dirlease quarantine with --sha256 %s ended %s", sha, outcome.Result))
	}
	return dirlease.Quarantined{Path: outcome.QuarantinePath, State: outcome.State}, err
}

// noteCLIQuarantine fires the probes of a quarantine made through the
// glue: a move, or the engine's refusal of stale advice (the claim active
// again, inside its window, or its bytes changed).
func (dw *dirWorld) noteCLIQuarantine(err error) {
	switch {
	case err == nil:
		dw.world.Probe("dirlease-cli-quarantined")
	case errors.Is(err, dirlease.ErrChanged), errors.Is(err, dirlease.ErrActive), errors.Is(err, dirlease.ErrWaiting):
		dw.world.Probe("dirlease-cli-quarantine-refused")
	}
}
