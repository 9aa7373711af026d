package leasecli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/leasekit/leasekit/dirlease"
)

// The operator glue of `leasereal dirlease inspect` and `dirlease
// quarantine`: each claim's verdict and the command inspect prints for a
// claim only an operator resolves, the state home's verdict, and what
// quarantine does. cmd/leasereal prints these; the dirlease workload's
// operators follow them, so a verdict that sent an operator to move a live
// claim would be found by a campaign.

// ClaimVerdict is the verdict of one claim: an indeterminate claim that
// needs no operator is one whose launching window time resolves (or whose
// directory another claim holds).
func ClaimVerdict(state dirlease.ClaimState) Verdict {
	switch {
	case state.OperatorNeeded:
		return VerdictOperator
	case state.Disposition == dirlease.DispositionIndeterminate:
		return VerdictWaiting
	case state.Disposition == dirlease.DispositionActive:
		return VerdictHeld
	}
	return VerdictFree
}

// ClaimJudgement is one claim as dirlease inspect judges it.
type ClaimJudgement struct {
	Verdict Verdict
	// Waiting says what resolves a claim judged waiting ("" otherwise).
	Waiting string
	// Operator is the action of a claim judged operator-needed (nil
	// otherwise): a quarantine command confirmed by the claim's sha256,
	// or, for an entry that is no regular file, the move by hand.
	Operator *OperatorAction
}

// claimWaiting is what a claim judged waiting waits for.
const claimWaiting = "its owner is gone and its launching window (--recover-after) has not ended: a child it " +
	"started may still be starting; once the window ends, recovery takes it"

// JudgeClaim judges one claim of the state home stateHome (as the user
// typed it: the commands name it so).
func JudgeClaim(state dirlease.ClaimState, stateHome string) ClaimJudgement {
	judged := ClaimJudgement{Verdict: ClaimVerdict(state)}
	switch {
	case judged.Verdict == VerdictWaiting:
		judged.Waiting = claimWaiting
	case judged.Verdict != VerdictOperator:
	case state.ContentSHA256 == "":
		quarantine := filepath.Join(append([]string{stateHome}, dirlease.QuarantineDir...)...)
		judged.Operator = &OperatorAction{Path: state.Path, Why: ClaimWhy(state), Command: fmt.Sprintf("recovery will "+
			"not resolve this entry, and quarantine cannot confirm it: it is not a regular file (a symlink, a directory, "+
			"a device), which leasekit never follows, opens or removes. Look at it (ls -l %s) and move it out of the "+
			"claim directory by hand, as quarantine would: mkdir -p -m 700 %s && mv %s %s/",
			state.Path, quarantine, state.Path, quarantine)}
	default:
		judged.Operator = &OperatorAction{Path: state.Path, Why: ClaimWhy(state), Command: fmt.Sprintf("recovery will "+
			"not resolve this claim: once its owner and child are known gone, run: leasereal dirlease quarantine "+
			"--state-home %s --claim %s --sha256 %s (the leased directory is left to you)",
			stateHome, state.Name, state.ContentSHA256)}
	}
	return judged
}

// ClaimWhy says why a claim needs an operator.
func ClaimWhy(state dirlease.ClaimState) string {
	switch {
	case state.Problem != "":
		return "the claim is corrupt: " + state.Problem + "; every dirlease run of this state home is refused"
	case state.ContentSHA256 == "":
		return "the claim entry is not a regular file"
	}
	return "the claim is indeterminate: its owner or child cannot be judged, and no time resolves it within this boot"
}

// DirleaseJudgement is dirlease inspect's judgement of a state home.
type DirleaseJudgement struct {
	// Verdict is the worst of the claims' (operator-needed when full).
	Verdict Verdict
	// Claims are the claims' judgements, in the order of the states.
	Claims []ClaimJudgement
	// Full is the recovery a claim directory at its bound needs (nil
	// when it is not full).
	Full *OperatorAction
	// Operators are every action, the claims' first.
	Operators []OperatorAction
}

// JudgeDirlease judges one Inspect of a state home (home: its absolute
// path; stateHome: as the user typed it). It is free when every claim is
// recoverable (a run or a recovery takes them over).
func JudgeDirlease(states []dirlease.ClaimState, home, stateHome string) DirleaseJudgement {
	judged := DirleaseJudgement{Verdict: VerdictFree, Claims: make([]ClaimJudgement, 0, len(states))}
	for _, state := range states {
		claim := JudgeClaim(state, stateHome)
		judged.Claims = append(judged.Claims, claim)
		judged.Verdict = Worse(judged.Verdict, claim.Verdict)
		if claim.Operator != nil {
			judged.Operators = append(judged.Operators, *claim.Operator)
		}
	}
	if dirlease.Full(states) {
		judged.Full = &OperatorAction{Path: home, Why: fmt.Sprintf("the claim directory holds %d entries, at its bound "+
			"of %d: every dirlease run is refused (full) until recovery removes the claims of owners that are gone",
			len(states), dirlease.ClaimsMax),
			Command: "leasereal dirlease recover --state-home " + home + " (claims it cannot take are listed with their own command)"}
		judged.Verdict, judged.Operators = VerdictOperator, append(judged.Operators, *judged.Full)
	}
	return judged
}

// DirleaseQuarantineOutcome is what `dirlease quarantine` did.
type DirleaseQuarantineOutcome struct {
	Result QuarantineResult
	Why    string
	// State is the claim as judged before any move.
	State dirlease.ClaimState
	// QuarantinePath is where the claim file went (Quarantined only).
	QuarantinePath string
}

// DirleaseQuarantine is `dirlease quarantine --claim name`: with sha, the
// --sha256 confirmation, it moves the claim file into the quarantine
// (dirlease.Quarantine, which refuses an active claim, one time resolves,
// and bytes other than the judged ones); without it, it is a dry run that
// moves nothing and says what to rerun with, or that there is nothing to
// confirm. A claim that is not there is nothing to do. An error is the
// engine's.
func DirleaseQuarantine(ctx context.Context, config dirlease.Config, name, sha string) (DirleaseQuarantineOutcome, error) {
	if sha != "" {
		moved, err := dirlease.Quarantine(ctx, config, name, sha)
		if err != nil {
			return DirleaseQuarantineOutcome{}, err
		}
		return DirleaseQuarantineOutcome{Result: Quarantined, State: moved.State, QuarantinePath: moved.Path}, nil
	}
	states, err := dirlease.Inspect(ctx, config)
	if err != nil {
		return DirleaseQuarantineOutcome{}, err
	}
	for _, state := range states {
		if state.Name != name {
			continue
		}
		out := DirleaseQuarantineOutcome{Result: QuarantineDryRun, State: state,
			Why: "rerun with --sha256 " + state.ContentSHA256 + " to move the claim file into quarantine"}
		if state.ContentSHA256 == "" {
			out.Why = "the entry is not a readable regular file; nothing to confirm"
		}
		return out, nil
	}
	return DirleaseQuarantineOutcome{Result: QuarantineNothing, Why: "no claim named " + name}, nil
}
