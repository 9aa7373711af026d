package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/leasecli"
)

// The admission and dirlease handles belong to the process that acquired
// them (the engines keep the compare-and-swap token in memory), so the CLI
// exposes them as `inspect`/`recover` plus `run`, which holds the handle
// for the whole life of a child command, and `admission quarantine`, the
// operator's resolution of an admission that only a reboot would free.

func admissionConfig(stateHome string) (admission.Config, error) {
	home, err := absoluteDir(stateHome, "--state-home")
	return admission.Config{StateHome: home, FS: leasecli.StateHomeFS(osenv.NewFS(), home, missing), Clock: osenv.NewClock(),
		Inspector: osenv.NewInspector(), IDs: osenv.NewIDSource()}, err
}

func absoluteDir(dir, flagName string) (string, error) {
	if dir == "" {
		return "", usagef("%s is required", flagName)
	}
	abs, err := filepath.Abs(dir)
	return filepath.Clean(abs), err
}

// admissionCode maps an admission error to an exit code. A state home or
// state file that is not private to this user (statecas.ErrUnsafe: a
// symlink, another owner, a loose mode), or a state home that does not
// exist, is a refusal an operator resolves, as in the lease commands, not
// an I/O error.
func admissionCode(err error) int {
	_, homeMissing := leasecli.StateHomeMissing(err)
	switch {
	case homeMissing:
		return exitRefused
	case errors.Is(err, admission.ErrActive), errors.Is(err, admission.ErrChanged):
		return exitConflict
	case errors.Is(err, admission.ErrIndeterminate), errors.Is(err, admission.ErrCorrupt),
		errors.Is(err, admission.ErrLegacy), errors.Is(err, admission.ErrContention),
		errors.Is(err, statecas.ErrUnsafe):
		return exitRefused
	}
	return exitError
}

func cmdAdmission(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("admission needs inspect, run or quarantine")
	}
	flags := newFlagSet("admission " + args[0])
	stateHome := flags.String("state-home", "", "the state home directory (existing, private)")
	sha := flags.String("sha256", "", "quarantine: the contentSHA256 that inspect printed, as a confirmation")
	if err := parseFlags(flags, args[1:]); err != nil {
		return err
	}
	config, err := admissionConfig(*stateHome)
	if err != nil {
		return err
	}
	switch args[0] {
	case "inspect":
		if flags.NArg() != 0 {
			return usagef("admission inspect takes no arguments")
		}
		state, err := admission.InspectState(context.Background(), config)
		if err != nil {
			return printStateRefusal(stdout, "admission", admissionCode(err), err)
		}
		return errors.Join(printJSON(stdout, admissionStateJSON(state, *stateHome)), codeOrNil(admissionInspectCode(state)))
	case "run":
		return admissionRun(config, trimDashes(flags.Args()), stderr)
	case "quarantine":
		if flags.NArg() != 0 {
			return usagef("admission quarantine takes no arguments")
		}
		return admissionQuarantine(config, *stateHome, *sha, stdout)
	}
	return usagef("unknown admission subcommand %q", args[0])
}

// admissionStateJSON is inspect's output: the envelope (surfaceJSON), the
// state, and for a state only an operator resolves, the command that does
// (leasecli.AdmissionOperators).
func admissionStateJSON(state admission.State, stateHome string) map[string]any {
	out := map[string]any{"present": state.Present}
	if state.Present {
		out["path"], out["contentSHA256"], out["disposition"] = state.Path, state.ContentSHA256, string(state.Disposition)
	}
	if state.Claim != nil {
		out["phase"], out["claim"] = string(state.Claim.Phase), json.RawMessage(state.Claim.Bytes())
	}
	if state.Problem != "" {
		out["problem"] = state.Problem
	}
	if state.Waiting != "" {
		out["waiting"] = state.Waiting
	}
	operators := leasecli.AdmissionOperators(state, stateHome)
	for _, operator := range operators {
		out["operator"] = "only a reboot or an operator frees this admission: once the export and " +
			"every process its helper started are gone, run: " + operator.Command
	}
	return newSurface("admission", admissionVerdict(state), operators).into(out)
}

// admissionVerdict is leasecli.AdmissionVerdict as inspect prints it.
func admissionVerdict(state admission.State) verdict {
	return verdict(leasecli.AdmissionVerdict(state))
}

// admissionInspectCode is admission inspect's exit code: the verdict's,
// except that a record waiting for its helper exits 3 too, because
// admission run refuses it (ErrIndeterminate) until the helper has ended
// and an operator has acted: inspect exits 3 whenever run would.
func admissionInspectCode(state admission.State) int {
	if state.Waiting != "" {
		return exitRefused
	}
	return admissionVerdict(state).exitCode()
}

// admissionQuarantine prints leasecli.AdmissionQuarantine's outcome: the
// admission file moved into quarantine/ (never deleted) when --sha256
// confirms the bytes the operator judged; without it, the state (exit 3).
func admissionQuarantine(config admission.Config, stateHome, sha string, stdout io.Writer) error {
	outcome, err := leasecli.AdmissionQuarantine(context.Background(), config, sha)
	if err != nil {
		return &codeError{code: admissionCode(err), err: err}
	}
	out := map[string]any{"state": admissionStateJSON(outcome.State, stateHome), "result": string(outcome.Result)}
	switch outcome.Result {
	case leasecli.Quarantined:
		out["quarantinePath"] = outcome.QuarantinePath
		return printJSON(stdout, out)
	case leasecli.QuarantineDryRun:
		out["why"] = outcome.Why
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	out["why"] = outcome.Why
	return errors.Join(printJSON(stdout, out), &codeError{code: exitConflict})
}

func trimDashes(args []string) []string {
	if len(args) > 0 && args[0] == "--" {
		return args[1:]
	}
	return args
}

// admissionRun holds the admission while a helper child runs
// (leasecli.RunAdmission: acquire, helper-launching, start, helper-active
// with the child's identity, wait, parent-owned, release). It exits with
// the child's code. Signals are handled as `run` handles them
// (watchSignals): a Ctrl-C reaches the child from the process group,
// nothing is forwarded, and leasereal outlives the child to settle and
// release.
func admissionRun(config admission.Config, command []string, stderr io.Writer) error {
	if len(command) == 0 {
		return usagef("admission run needs a command")
	}
	signals, stopSignals := watchSignals()
	defer stopSignals()
	code, err := leasecli.RunAdmission(context.Background(), config, leasecli.AdmissionRun{
		Command: command, BindAttempts: bindAttemptsMax, BindPause: bindRetryPause,
		Events: leasecli.AdmissionEvents{SettleFailed: func(err error) {
			fmt.Fprintf(stderr, "leasereal: settling the admission failed; marking cleanup unsafe: %v\n", err)
		}},
	}, osStarter{signals: signals})
	return engineRunExit(code, err, admissionCode)
}

// bindAttemptsMax and bindRetryPause bound how long a run retries a
// capture of its child that failed while the child was neither capturable
// nor exited (it was exiting: its memory released, not yet a zombie).
const (
	bindAttemptsMax = 50
	bindRetryPause  = 2 * time.Millisecond
)

func dirleaseConfig(stateHome string) (dirlease.Config, error) {
	home, err := absoluteDir(stateHome, "--state-home")
	return dirlease.Config{StateHome: home, FS: leasecli.StateHomeFS(osenv.NewFS(), home, missing), Clock: osenv.NewClock(), BootClock: osenv.NewBootClock(),
		Inspector: osenv.NewInspector(), IDs: osenv.NewIDSource()}, err
}

func dirleaseCode(err error) int {
	_, homeMissing := leasecli.StateHomeMissing(err)
	switch {
	case homeMissing:
		return exitRefused
	case errors.Is(err, dirlease.ErrDuplicate), errors.Is(err, dirlease.ErrChanged), errors.Is(err, dirlease.ErrActive),
		errors.Is(err, dirlease.ErrBusy):
		return exitConflict
	case errors.Is(err, dirlease.ErrInvalidRequest), errors.Is(err, dirlease.ErrNotOwnedDirectory):
		return exitUsage
	case errors.Is(err, dirlease.ErrCorrupt), errors.Is(err, dirlease.ErrBound), errors.Is(err, dirlease.ErrFull),
		errors.Is(err, statecas.ErrUnsafe):
		return exitRefused
	}
	return exitError
}

func cmdDirlease(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("dirlease needs recover, run, inspect or quarantine")
	}
	flags := newFlagSet("dirlease " + args[0])
	stateHome := flags.String("state-home", "", "the state home directory (existing, private)")
	claimName := flags.String("claim", "", "quarantine: the claim file's name, as inspect printed it")
	sha := flags.String("sha256", "", "quarantine: the contentSHA256 that inspect printed, as a confirmation")
	dir := flags.String("path", "", "run: the leased working directory (existing, mode 0700, yours)")
	recoverAfter := flags.Duration("recover-after", time.Minute, "run: how long a launching lease of a dead owner is protected")
	var wait time.Duration
	waitFlag := func(value string) (err error) { wait, err = parseWait(value); return err }
	flags.Func("w", "run: wait up to SECS seconds (or a duration: 300ms) for a held path (default: busy at once, exit 1)", waitFlag)
	flags.Func("wait", "run: as -w", waitFlag)
	if err := parseFlags(flags, args[1:]); err != nil {
		return err
	}
	config, err := dirleaseConfig(*stateHome)
	if err != nil {
		return err
	}
	switch args[0] {
	case "recover":
		if flags.NArg() != 0 {
			return usagef("dirlease recover takes no arguments")
		}
		report, err := dirlease.Recover(context.Background(), config)
		if err != nil {
			return &codeError{code: dirleaseCode(err), err: err}
		}
		return printJSON(stdout, map[string]int{"recovered": report.Recovered, "published": report.Published,
			"active": report.Active, "indeterminate": report.Indeterminate, "replaced": report.Replaced})
	case "inspect":
		if flags.NArg() != 0 {
			return usagef("dirlease inspect takes no arguments")
		}
		states, err := dirlease.Inspect(context.Background(), config)
		if err != nil {
			return printStateRefusal(stdout, "dirlease", dirleaseCode(err), err)
		}
		out, v := dirleaseInspection(states, config.StateHome, *stateHome)
		return printInspection(stdout, v, out)
	case "quarantine":
		if flags.NArg() != 0 || *claimName == "" {
			return usagef("dirlease quarantine needs --claim (from dirlease inspect), and no arguments")
		}
		return dirleaseQuarantine(config, *stateHome, *claimName, *sha, stdout)
	case "run":
		path, err := absoluteDir(*dir, "--path")
		if err != nil {
			return err
		}
		if *recoverAfter < 0 || *recoverAfter > waitSecondsMax*time.Second {
			return usagef("invalid --recover-after %v: 0 to %d seconds (e.g. 90s, 10m)", *recoverAfter, waitSecondsMax)
		}
		return dirleaseRun(config, path, *recoverAfter, wait, trimDashes(flags.Args()))
	}
	return usagef("unknown dirlease subcommand %q", args[0])
}

// dirleaseQuarantine prints leasecli.DirleaseQuarantine's outcome: the
// claim file moved with --sha256; without it a dry run, as admission's,
// that prints the claim's state and the confirmation to rerun with, and
// exits 3 (1 when the claim is absent).
func dirleaseQuarantine(config dirlease.Config, stateHome, claimName, sha string, stdout io.Writer) error {
	outcome, err := leasecli.DirleaseQuarantine(context.Background(), config, claimName, sha)
	if err != nil {
		return &codeError{code: dirleaseCode(err), err: err}
	}
	switch outcome.Result {
	case leasecli.Quarantined:
		return printJSON(stdout, map[string]any{"result": string(outcome.Result), "quarantinePath": outcome.QuarantinePath,
			"state": claimStateJSON(outcome.State, stateHome)})
	case leasecli.QuarantineDryRun:
		out := map[string]any{"state": claimStateJSON(outcome.State, stateHome), "result": string(outcome.Result),
			"why": outcome.Why}
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	out := map[string]any{"result": string(outcome.Result), "why": outcome.Why}
	return errors.Join(printJSON(stdout, out), &codeError{code: exitConflict})
}

// dirleaseInspection is dirlease inspect's output and verdict: every claim,
// the state home's fullness, and the envelope (leasecli.JudgeDirlease).
func dirleaseInspection(states []dirlease.ClaimState, home, stateHome string) (map[string]any, verdict) {
	judged := leasecli.JudgeDirlease(states, home, stateHome)
	claims := make([]map[string]any, 0, len(states))
	for i, state := range states {
		claims = append(claims, claimJSON(state, judged.Claims[i]))
	}
	out := map[string]any{"claims": claims}
	if judged.Full != nil {
		out["full"] = map[string]any{"claims": len(states), "claimsMax": dirlease.ClaimsMax,
			"why": judged.Full.Why, "operator": judged.Full.Command}
	}
	v := verdict(judged.Verdict)
	return newSurface("dirlease", v, judged.Operators).into(out), v
}

// claimStateJSON is one claim in dirlease inspect's output, with the
// operator command when only an operator resolves it.
func claimStateJSON(state dirlease.ClaimState, stateHome string) map[string]any {
	return claimJSON(state, leasecli.JudgeClaim(state, stateHome))
}

// claimJSON is a claim as judged.
func claimJSON(state dirlease.ClaimState, judged leasecli.ClaimJudgement) map[string]any {
	out := map[string]any{"name": state.Name, "path": state.Path, "contentSHA256": state.ContentSHA256,
		"disposition": string(state.Disposition), "operatorNeeded": state.OperatorNeeded}
	if state.Claim != nil {
		out["phase"], out["claim"] = string(state.Claim.Phase), json.RawMessage(state.Claim.Bytes())
	}
	if state.Problem != "" {
		out["problem"] = state.Problem
	}
	if judged.Waiting != "" {
		out["waiting"] = judged.Waiting
	}
	if judged.Operator != nil {
		out["operator"] = judged.Operator.Command
	}
	return out
}

// dirleaseRun holds a raw-working lease on path while a child runs in it
// (leasecli.RunDirlease: create, launching, start, running with the
// child's identity, wait, settled, release). It exits with the child's
// code. A path another run holds is busy: exit 1 at once, as flock -n, or
// after waiting up to wait for it. Signals as in admissionRun.
func dirleaseRun(config dirlease.Config, path string, recoverAfter, wait time.Duration, command []string) error {
	if len(command) == 0 {
		return usagef("dirlease run needs a command")
	}
	signals, stopSignals := watchSignals()
	defer stopSignals()
	code, err := leasecli.RunDirlease(context.Background(), config, leasecli.DirleaseRun{
		Path: path, RecoverAfter: recoverAfter, Wait: wait, BusyPoll: busyPoll, Command: command,
		BindAttempts: bindAttemptsMax, BindPause: bindRetryPause,
	}, osStarter{signals: signals})
	return engineRunExit(code, err, dirleaseCode)
}

// busyPoll is how often a waiting dirlease run tries a busy path again.
const busyPoll = 50 * time.Millisecond
