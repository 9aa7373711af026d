package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
)

// The three engines' inspect commands share one operator surface, so a
// script or a person reads every state home the same way: the same
// envelope (engine, verdict, operatorNeeded, operators) above each
// engine's own fields, and one exit-code table. inspect exits 3 exactly
// when the engine's run would refuse and an operator must act (or the
// state cannot be read safely), and 0 when time, a holder or the next run
// resolves the state by itself.

// verdict is inspect's one-word answer: what a run started now meets.
type verdict string

const (
	verdictFree     = verdict(leasecli.VerdictFree)     // a run gets the lease (stale records are taken over)
	verdictHeld     = verdict(leasecli.VerdictHeld)     // a live holder has it; a run is busy or waits
	verdictWaiting  = verdict(leasecli.VerdictWaiting)  // time or a process ending resolves it; no operator yet
	verdictOperator = verdict(leasecli.VerdictOperator) // only an operator's command (operators) resolves it
	verdictRefused  = verdict(leasecli.VerdictRefused)  // the engine will not read the state safely
)

// exitCode is inspect's exit code for v: 3 when an operator must act or
// the state cannot be read (run refuses with 3 then too), 0 otherwise.
func (v verdict) exitCode() int {
	if v == verdictOperator || v == verdictRefused {
		return exitRefused
	}
	return exitOK
}

// operatorJSON is one thing an operator resolves: the path it concerns,
// why it blocks, and the command that resolves it.
type operatorJSON = leasecli.OperatorAction

// surfaceJSON is the envelope every inspect output starts with.
type surfaceJSON struct {
	Engine  string  `json:"engine"` // lease | admission | dirlease
	Verdict verdict `json:"verdict"`
	// OperatorNeeded is true exactly when Operators is not empty.
	OperatorNeeded bool           `json:"operatorNeeded"`
	Operators      []operatorJSON `json:"operators"`
}

func newSurface(engine string, v verdict, operators []operatorJSON) surfaceJSON {
	if operators == nil {
		operators = []operatorJSON{}
	}
	if (v == verdictOperator) != (len(operators) > 0) && v != verdictRefused {
		panic(fmt.Sprintf("leasereal: verdict %s with %d operator commands", v, len(operators)))
	}
	return surfaceJSON{Engine: engine, Verdict: v, OperatorNeeded: len(operators) > 0, Operators: operators}
}

// into adds the envelope's keys to an engine's map output.
func (s surfaceJSON) into(out map[string]any) map[string]any {
	out["engine"], out["verdict"], out["operatorNeeded"], out["operators"] = s.Engine, s.Verdict, s.OperatorNeeded, s.Operators
	return out
}

// printInspection prints an inspect output and returns its exit code.
func printInspection(stdout io.Writer, v verdict, value any) error {
	return errors.Join(printJSON(stdout, value), codeOrNil(v.exitCode()))
}

// refusedJSON is the refusal inside a refused inspection of admission or
// dirlease: the engine's kind and message.
type refusedJSON struct {
	Reason     string `json:"reason"`
	Diagnostic string `json:"diagnostic"`
}

// printStateRefusal prints the refused inspection of an admission or
// dirlease state home whose read failed with err, when err is a refusal
// (exit 3); any other error is returned as it is (exit 4).
func printStateRefusal(stdout io.Writer, engine string, code int, err error) error {
	if code != exitRefused {
		return &codeError{code: code, err: err}
	}
	path, reason := refusalPathAndReason(err)
	operators := []operatorJSON{{Path: path, Why: err.Error(), Command: stateRefusalCommand(err, path)}}
	out := newSurface(engine, verdictRefused, operators).into(map[string]any{
		"refusal": refusedJSON{Reason: reason, Diagnostic: err.Error()}})
	return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused, err: err})
}

// refusalPathAndReason reads the kind of an admission or dirlease
// refusal and the path it concerns: the state machinery's own path when
// it names one (the directory that is not private), else the engine's.
func refusalPathAndReason(err error) (path, reason string) {
	var admissionErr *admission.Error
	var dirleaseErr *dirlease.Error
	var stateErr *statecas.Error
	reason = "refused"
	switch {
	case errors.As(err, &admissionErr):
		path, reason = admissionErr.Path, admissionErr.Kind.Error()
	case errors.As(err, &dirleaseErr):
		path, reason = dirleaseErr.Path, dirleaseErr.Kind.Error()
	}
	if errors.As(err, &stateErr) && stateErr.Path != "" {
		path = stateErr.Path
	}
	if missingHome, ok := leasecli.StateHomeMissing(err); ok {
		path, reason = missingHome.Home, "state home missing"
	}
	return path, reason
}

// stateRefusalCommand is what an operator runs for a state home the
// engine will not read: a path that is not private (fixed by hand: leasekit
// never changes what it did not create), or a claim directory over its
// listing bound (the refusal's own text names the move).
func stateRefusalCommand(err error, path string) string {
	if _, ok := leasecli.StateHomeMissing(err); ok {
		return "mkdir -m 700 " + path + " (leasekit never creates a state home: create it private to this user)"
	}
	if errors.Is(err, statecas.ErrUnsafe) || errors.Is(err, admission.ErrUnsafe) || errors.Is(err, dirlease.ErrUnsafe) {
		return "ls -ld " + path + " (then make it a directory or file private to this user: chown it, chmod 700 " +
			"a directory or 600 a file; or move it aside with mv; leasekit changes nothing it did not create)"
	}
	return "follow the diagnostic: it names the entries to move and the command to run after"
}

// leaseRefusalOperators is the operator command of a lease refusal that
// asks for one: the blockers' command, or for an unsafe namespace the
// fix by hand. A refusal that a retry or another --dir resolves has none.
func leaseRefusalOperators(namespace string, refusal lease.Refusal) []operatorJSON {
	switch {
	case refusal.Human == lease.HumanUnsafeNamespace:
		return []operatorJSON{{Path: namespace, Why: refusal.Diagnostic, Command: "ls -ld " + namespace +
			" (then chown it to this user and chmod go-w it, or move it aside with mv)"}}
	case refusal.Reason == refusalNotDirectory && strings.HasPrefix(refusal.Diagnostic, namespace+" exists"):
		return []operatorJSON{{Path: namespace, Why: refusal.Diagnostic,
			Command: "leasereal reclaim --dir " + namespace + " (a dry run; --force moves it aside)"}}
	case refusal.Reason == refusalNotDirectory:
		return []operatorJSON{{Path: namespace, Why: refusal.Diagnostic,
			Command: "mv the ancestor the diagnostic names aside, or choose another --dir"}}
	}
	if command := operatorCommand(namespace, refusal); command != "" {
		return []operatorJSON{{Path: namespace, Why: refusal.Diagnostic, Command: command}}
	}
	return nil
}
