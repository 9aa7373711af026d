package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/lease/osenv"
)

// The admission and dirlease handles belong to the process that acquired
// them (the engines keep the compare-and-swap token in memory), so the CLI
// exposes them as `inspect`/`recover` plus `run`, which holds the handle
// for the whole life of a child command.

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

// admissionCode maps an admission error to an exit code.
func admissionCode(err error) int {
	switch {
	case errors.Is(err, admission.ErrActive):
		return exitConflict
	case errors.Is(err, admission.ErrIndeterminate), errors.Is(err, admission.ErrCorrupt),
		errors.Is(err, admission.ErrLegacy), errors.Is(err, admission.ErrContention):
		return exitRefused
	}
	return exitError
}

func cmdAdmission(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("admission needs inspect or run")
	}
	flags := newFlagSet("admission " + args[0])
	stateHome := flags.String("state-home", "", "the state home directory (existing, private)")
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
		claim, disposition, err := admission.Inspect(config)
		if err != nil {
			return &codeError{code: admissionCode(err), err: err}
		}
		out := map[string]any{"present": claim != nil}
		if claim != nil {
			out["disposition"], out["phase"], out["claim"] = string(disposition), string(claim.Phase), json.RawMessage(claim.Bytes())
		}
		return printJSON(stdout, out)
	case "run":
		return admissionRun(config, trimDashes(flags.Args()), stderr)
	}
	return usagef("unknown admission subcommand %q", args[0])
}

func trimDashes(args []string) []string {
	if len(args) > 0 && args[0] == "--" {
		return args[1:]
	}
	return args
}

// admissionRun holds the admission while a helper child runs: acquire,
// helper-launching, start, helper-active (the child's identity), wait,
// parent-owned, release. It exits with the child's code.
func admissionRun(config admission.Config, command []string, stderr io.Writer) error {
	if len(command) == 0 {
		return usagef("admission run needs a command")
	}
	held, err := admission.Acquire(config)
	if err != nil {
		return &codeError{code: admissionCode(err), err: err}
	}
	if err := held.BeginHelperLaunch(); err != nil {
		return errors.Join(err, held.Release())
	}
	code, runErr := runBound(command, held.Claim().ID, func(pid int) error { return held.BindHelper(pid) })
	if err := held.Settle(); err != nil {
		fmt.Fprintf(stderr, "leasereal: settling the admission failed; marking cleanup unsafe: %v\n", err)
		return &codeError{code: exitError, err: errors.Join(err, held.MarkCleanupUnsafe())}
	}
	if err := held.Release(); err != nil {
		return &codeError{code: exitError, err: err}
	}
	if runErr != nil {
		return &codeError{code: code, err: runErr}
	}
	return codeOrNil(code)
}

// runBound starts the command, calls bind with its PID, and waits for it.
// A failed bind kills the child: the record must never claim less than
// what runs.
func runBound(command []string, id string, bind func(pid int) error) (int, error) {
	child := exec.Command(command[0], command[1:]...)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	child.SysProcAttr = childAttributes()
	child.Env = append(os.Environ(), "LEASEKIT_CLAIM_ID="+id)
	if err := child.Start(); err != nil {
		return exitNoCommand, err
	}
	if err := bind(child.Process.Pid); err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		return exitError, err
	}
	err := child.Wait()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exitErr):
		if exitErr.ExitCode() < 0 {
			return 128 + signalOf(exitErr), nil
		}
		return exitErr.ExitCode(), nil
	}
	return exitError, err
}

func dirleaseConfig(stateHome string) (dirlease.Config, error) {
	home, err := absoluteDir(stateHome, "--state-home")
	return dirlease.Config{StateHome: home, FS: osenv.NewFS(), Clock: osenv.NewClock(),
		Inspector: osenv.NewInspector(), IDs: osenv.NewIDSource()}, err
}

func dirleaseCode(err error) int {
	switch {
	case errors.Is(err, dirlease.ErrDuplicate), errors.Is(err, dirlease.ErrChanged):
		return exitConflict
	case errors.Is(err, dirlease.ErrInvalidRequest), errors.Is(err, dirlease.ErrNotOwnedDirectory):
		return exitUsage
	case errors.Is(err, dirlease.ErrCorrupt), errors.Is(err, dirlease.ErrBound):
		return exitRefused
	}
	return exitError
}

func cmdDirlease(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("dirlease needs recover or run")
	}
	flags := newFlagSet("dirlease " + args[0])
	stateHome := flags.String("state-home", "", "the state home directory (existing, private)")
	dir := flags.String("path", "", "run: the leased working directory (existing, mode 0700, yours)")
	recoverAfter := flags.Duration("recover-after", time.Minute, "run: how long a launching lease of a dead owner is protected")
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
		report, err := dirlease.Recover(config)
		if err != nil {
			return &codeError{code: dirleaseCode(err), err: err}
		}
		return printJSON(stdout, map[string]int{"recovered": report.Recovered, "published": report.Published,
			"active": report.Active, "indeterminate": report.Indeterminate})
	case "run":
		path, err := absoluteDir(*dir, "--path")
		if err != nil {
			return err
		}
		return dirleaseRun(config, path, *recoverAfter, trimDashes(flags.Args()))
	}
	return usagef("unknown dirlease subcommand %q", args[0])
}

// dirleaseRun holds a raw-working lease on path while a child runs in it:
// create, launching, start, running (the child's identity), wait, settled,
// release. It exits with the child's code.
func dirleaseRun(config dirlease.Config, path string, recoverAfter time.Duration, command []string) error {
	if len(command) == 0 {
		return usagef("dirlease run needs a command")
	}
	held, err := dirlease.Create(config, dirlease.CreateRequest{Role: dirlease.RoleRawWorking, Path: path,
		RecoverAfterMs: time.Now().Add(recoverAfter).UnixMilli()})
	if err != nil {
		return &codeError{code: dirleaseCode(err), err: err}
	}
	if err := held.Update(dirlease.PhaseLaunching, 0); err != nil {
		return errors.Join(err, held.Release())
	}
	code, runErr := runBound(command, held.Claim().ID, func(pid int) error {
		return held.Update(dirlease.PhaseRunning, pid)
	})
	if err := held.Update(dirlease.PhaseSettled, 0); err != nil {
		return &codeError{code: exitError, err: err}
	}
	if err := held.Release(); err != nil {
		return &codeError{code: exitError, err: err}
	}
	if runErr != nil {
		return &codeError{code: code, err: runErr}
	}
	return codeOrNil(code)
}
