package leasecli

import (
	"context"
	"fmt"

	"github.com/leasekit/leasekit/admission"
)

// The operator glue of `leasereal admission inspect` and `admission
// quarantine`: the verdict of an admission state, the command inspect
// prints for a state only an operator resolves, and what quarantine does
// with it. cmd/leasereal prints these; the admission workload's operators
// follow them, so a verdict that sent an operator to move a live export
// would be found by a campaign.

// AdmissionVerdict is the verdict of an admission state: a recoverable
// record is free (the next run takes it over), an indeterminate one whose
// helper still runs is waiting for it to end.
func AdmissionVerdict(state admission.State) Verdict {
	switch {
	case state.OperatorNeeded:
		return VerdictOperator
	case state.Waiting != "":
		return VerdictWaiting
	case state.Present && state.Disposition == admission.DispositionActive:
		return VerdictHeld
	}
	return VerdictFree
}

// AdmissionOperators are the operator actions inspect prints for an
// admission state: for a state judged operator-needed, the quarantine
// command with the bytes' sha256 as its confirmation (stateHome as the
// user typed it); none otherwise.
func AdmissionOperators(state admission.State, stateHome string) []OperatorAction {
	if AdmissionVerdict(state) != VerdictOperator {
		return nil
	}
	command := fmt.Sprintf("leasereal admission quarantine --state-home %s --sha256 %s", stateHome, state.ContentSHA256)
	return []OperatorAction{{Path: state.Path, Why: AdmissionWhy(state), Command: command}}
}

// AdmissionWhy says why an admission needs an operator.
func AdmissionWhy(state admission.State) string {
	if state.Problem != "" {
		return "the admission file is corrupt: " + state.Problem + "; every admission run is refused"
	}
	return "the admission is indeterminate: its owner is gone but processes it started may still run, " +
		"and every admission run is refused until a reboot or an operator"
}

// QuarantineResult is what an operator's quarantine command did.
type QuarantineResult string

// The results of `admission quarantine` and `dirlease quarantine`, as
// leasereal prints them.
const (
	// QuarantineNothing: nothing to move (exit 1).
	QuarantineNothing QuarantineResult = "nothing"
	// QuarantineRefused: the state is active: its holder must release it
	// (exit 1). Nothing moved.
	QuarantineRefused QuarantineResult = "refused"
	// QuarantineDryRun: no confirmation was given; the state and the
	// confirmation to rerun with (exit 3). Nothing moved.
	QuarantineDryRun QuarantineResult = "dry-run"
	// Quarantined: the file moved into the quarantine (exit 0).
	Quarantined QuarantineResult = "quarantined"
)

// AdmissionQuarantineOutcome is what `admission quarantine` did.
type AdmissionQuarantineOutcome struct {
	Result QuarantineResult
	Why    string
	// State is the admission as the command inspected it, before any move.
	State admission.State
	// QuarantinePath is where the file went (Quarantined only).
	QuarantinePath string
}

// AdmissionQuarantine is `admission quarantine`: it moves the admission
// file into quarantine/ (admission.Quarantine, never deleting it) when sha,
// the --sha256 confirmation, names the bytes the operator judged. Without
// sha it is a dry run that moves nothing and says what to rerun with. An
// absent file is nothing to do, and an active one is refused before any
// confirmation is looked at: its holder must release it. An error is the
// engine's (its refusals: ErrActive, ErrChanged, ErrMismatch...).
func AdmissionQuarantine(ctx context.Context, config admission.Config, sha string) (AdmissionQuarantineOutcome, error) {
	state, err := admission.InspectState(ctx, config)
	if err != nil {
		return AdmissionQuarantineOutcome{}, err
	}
	out := AdmissionQuarantineOutcome{State: state}
	switch {
	case !state.Present:
		out.Result, out.Why = QuarantineNothing, "no admission file"
		return out, nil
	case state.Disposition == admission.DispositionActive:
		out.Result, out.Why = QuarantineRefused, "the admission is active: its holder must release it"
		return out, nil
	case sha == "":
		out.Result, out.Why = QuarantineDryRun, "rerun with --sha256 "+state.ContentSHA256+" to move the admission into quarantine/"
		return out, nil
	}
	moved, err := admission.Quarantine(ctx, config, sha)
	if err != nil {
		return AdmissionQuarantineOutcome{}, err
	}
	out.Result, out.QuarantinePath = Quarantined, moved.Path
	return out, nil
}
