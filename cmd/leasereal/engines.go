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
	return admission.Config{StateHome: home, FS: osenv.NewFS(), Clock: osenv.NewClock(),
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
// symlink, another owner, a loose mode) is a refusal an operator resolves,
// as in the lease commands, not an I/O error.
func admissionCode(err error) int {
	switch {
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
// state, and for a state only an operator resolves, the command that does.
func admissionStateJSON(state admission.State, stateHome string) map[string]any {
	var operators []operatorJSON
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
	if state.OperatorNeeded {
		command := fmt.Sprintf("leasereal admission quarantine --state-home %s --sha256 %s", stateHome, state.ContentSHA256)
		out["operator"] = "only a reboot or an operator frees this admission: once the export and " +
			"every process its helper started are gone, run: " + command
		operators = append(operators, operatorJSON{Path: state.Path, Why: admissionWhy(state), Command: command})
	}
	return newSurface("admission", admissionVerdict(state), operators).into(out)
}

// admissionVerdict is the verdict of an admission state: a recoverable
// record is free (the next run takes it over), an indeterminate one whose
// helper still runs is waiting for it to end.
func admissionVerdict(state admission.State) verdict {
	switch {
	case state.OperatorNeeded:
		return verdictOperator
	case state.Waiting != "":
		return verdictWaiting
	case state.Present && state.Disposition == admission.DispositionActive:
		return verdictHeld
	}
	return verdictFree
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

// admissionWhy says why an admission needs an operator.
func admissionWhy(state admission.State) string {
	if state.Problem != "" {
		return "the admission file is corrupt: " + state.Problem + "; every admission run is refused"
	}
	return "the admission is indeterminate: its owner is gone but processes it started may still run, " +
		"and every admission run is refused until a reboot or an operator"
}

// admissionQuarantine moves the admission file into quarantine/ (never
// deleting it) when --sha256 confirms the bytes the operator judged;
// without it, it prints the state and exits 3.
func admissionQuarantine(config admission.Config, stateHome, sha string, stdout io.Writer) error {
	state, err := admission.InspectState(context.Background(), config)
	if err != nil {
		return &codeError{code: admissionCode(err), err: err}
	}
	out := map[string]any{"state": admissionStateJSON(state, stateHome)}
	switch {
	case !state.Present:
		out["result"], out["why"] = "nothing", "no admission file"
		return errors.Join(printJSON(stdout, out), &codeError{code: exitConflict})
	case state.Disposition == admission.DispositionActive:
		out["result"], out["why"] = "refused", "the admission is active: its holder must release it"
		return errors.Join(printJSON(stdout, out), &codeError{code: exitConflict})
	case sha == "":
		out["result"], out["why"] = "dry-run", "rerun with --sha256 "+state.ContentSHA256+" to move the admission into quarantine/"
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	moved, err := admission.Quarantine(context.Background(), config, sha)
	if err != nil {
		return &codeError{code: admissionCode(err), err: err}
	}
	out["result"], out["quarantinePath"] = "quarantined", moved.Path
	return printJSON(stdout, out)
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
	return dirlease.Config{StateHome: home, FS: osenv.NewFS(), Clock: osenv.NewClock(), BootClock: osenv.NewBootClock(),
		Inspector: osenv.NewInspector(), IDs: osenv.NewIDSource()}, err
}

func dirleaseCode(err error) int {
	switch {
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
		if *sha == "" {
			return dirleaseQuarantineDryRun(config, *stateHome, *claimName, stdout)
		}
		moved, err := dirlease.Quarantine(context.Background(), config, *claimName, *sha)
		if err != nil {
			return &codeError{code: dirleaseCode(err), err: err}
		}
		return printJSON(stdout, map[string]any{"result": "quarantined", "quarantinePath": moved.Path,
			"state": claimStateJSON(moved.State, *stateHome)})
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

// dirleaseQuarantineDryRun is quarantine without --sha256, as admission's:
// it moves nothing, prints the claim's state and the confirmation to rerun
// with, and exits 3 (1 when the claim is absent).
func dirleaseQuarantineDryRun(config dirlease.Config, stateHome, claimName string, stdout io.Writer) error {
	states, err := dirlease.Inspect(context.Background(), config)
	if err != nil {
		return &codeError{code: dirleaseCode(err), err: err}
	}
	for _, state := range states {
		if state.Name != claimName {
			continue
		}
		out := map[string]any{"state": claimStateJSON(state, stateHome), "result": "dry-run",
			"why": "rerun with --sha256 " + state.ContentSHA256 + " to move the claim file into quarantine"}
		if state.ContentSHA256 == "" {
			out["why"] = "the entry is not a readable regular file; nothing to confirm"
		}
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	out := map[string]any{"result": "nothing", "why": "no claim named " + claimName}
	return errors.Join(printJSON(stdout, out), &codeError{code: exitConflict})
}

// dirleaseInspection is dirlease inspect's output and verdict: every claim,
// the state home's fullness, and the envelope. A state home is free when
// every claim is recoverable (a run or a recovery takes them over).
func dirleaseInspection(states []dirlease.ClaimState, home, stateHome string) (map[string]any, verdict) {
	claims := make([]map[string]any, 0, len(states))
	var operators []operatorJSON
	v := verdictFree
	for _, state := range states {
		claims = append(claims, claimStateJSON(state, stateHome))
		v = worse(v, claimVerdict(state))
		if command, ok := claims[len(claims)-1]["operator"].(string); ok {
			operators = append(operators, operatorJSON{Path: state.Path, Why: claimWhy(state), Command: command})
		}
	}
	out := map[string]any{"claims": claims}
	if dirlease.Full(states) {
		full := fullJSON(len(states), home)
		out["full"], v = full, verdictOperator
		operators = append(operators, operatorJSON{Path: home, Why: full["why"].(string), Command: full["operator"].(string)})
	}
	return newSurface("dirlease", v, operators).into(out), v
}

// verdictRank orders verdicts by what an operator must look at first.
var verdictRank = map[verdict]int{verdictFree: 0, verdictHeld: 1, verdictWaiting: 2, verdictOperator: 3, verdictRefused: 4}

// worse is the verdict of a state home holding states judged a and b.
func worse(a, b verdict) verdict {
	if verdictRank[b] > verdictRank[a] {
		return b
	}
	return a
}

// claimVerdict is the verdict of one claim: an indeterminate claim that
// needs no operator is one whose launching window time resolves.
func claimVerdict(state dirlease.ClaimState) verdict {
	switch {
	case state.OperatorNeeded:
		return verdictOperator
	case state.Disposition == dirlease.DispositionIndeterminate:
		return verdictWaiting
	case state.Disposition == dirlease.DispositionActive:
		return verdictHeld
	}
	return verdictFree
}

// claimWhy says why a claim needs an operator.
func claimWhy(state dirlease.ClaimState) string {
	switch {
	case state.Problem != "":
		return "the claim is corrupt: " + state.Problem + "; every dirlease run of this state home is refused"
	case state.ContentSHA256 == "":
		return "the claim entry is not a regular file"
	}
	return "the claim is indeterminate: its owner or child cannot be judged, and no time resolves it within this boot"
}

// fullJSON is dirlease inspect's report of a claim directory at its bound,
// where every dirlease run is refused (full, exit 3) until recovery makes
// room.
func fullJSON(claims int, stateHome string) map[string]any {
	return map[string]any{"claims": claims, "claimsMax": dirlease.ClaimsMax,
		"why": fmt.Sprintf("the claim directory holds %d entries, at its bound of %d: every dirlease run is refused (full) "+
			"until recovery removes the claims of owners that are gone", claims, dirlease.ClaimsMax),
		"operator": "leasereal dirlease recover --state-home " + stateHome + " (claims it cannot take are listed with their own command)"}
}

// claimStateJSON is one claim in dirlease inspect's output, with the
// operator command when only an operator resolves it.
func claimStateJSON(state dirlease.ClaimState, stateHome string) map[string]any {
	out := map[string]any{"name": state.Name, "path": state.Path, "contentSHA256": state.ContentSHA256,
		"disposition": string(state.Disposition), "operatorNeeded": state.OperatorNeeded}
	if state.Claim != nil {
		out["phase"], out["claim"] = string(state.Claim.Phase), json.RawMessage(state.Claim.Bytes())
	}
	if state.Problem != "" {
		out["problem"] = state.Problem
	}
	if !state.OperatorNeeded && state.Disposition == dirlease.DispositionIndeterminate {
		out["waiting"] = "its owner is gone and its launching window (--recover-after) has not ended: a child it " +
			"started may still be starting; once the window ends, recovery takes it"
	}
	if state.OperatorNeeded && state.ContentSHA256 == "" {
		quarantine := filepath.Join(append([]string{stateHome}, dirlease.QuarantineDir...)...)
		out["operator"] = fmt.Sprintf("recovery will not resolve this entry, and quarantine cannot confirm it: it is not a "+
			"regular file (a symlink, a directory, a device), which leasekit never follows, opens or removes. Look at it "+
			"(ls -l %s) and move it out of the claim directory by hand, as quarantine would: "+
			"mkdir -p -m 700 %s && mv %s %s/",
			state.Path, quarantine, state.Path, quarantine)
	}
	if state.OperatorNeeded && state.ContentSHA256 != "" {
		out["operator"] = fmt.Sprintf("recovery will not resolve this claim: once its owner and child are known gone, run: "+
			"leasereal dirlease quarantine --state-home %s --claim %s --sha256 %s (the leased directory is left to you)",
			stateHome, state.Name, state.ContentSHA256)
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
