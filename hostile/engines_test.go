package hostile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// outcome is what an engine operation decided, flattened so that a
// manifest's expect line can name it: class (the result kind, or "error"),
// reason (the refusal reason or error kind), detail (the human state, or the
// kind of the statecas cause), and the full message.
type outcome struct {
	class, reason, detail string
	message               string
	// typed is false for an error none of the engines' types explain.
	typed bool
}

func (o outcome) String() string {
	return fmt.Sprintf("%s %s %s: %s", o.class, o.reason, o.detail, o.message)
}

// engineFS is the FS the engine gets: the backend's, with the state's hooks
// (leasetest.HookFS runs them before the engine's renames).
func (w *world) engineFS() lease.FS {
	if w.wrap != nil {
		return w.wrap(w.b.engine)
	}
	if len(w.s.hooks) == 0 {
		return w.b.engine
	}
	fired := make([]bool, len(w.s.hooks))
	hooked := leasetest.NewHookFS(w.b.engine)
	hooked.Before(func(op leasetest.Op) error {
		if op.Name != "Rename" && op.Name != "RenameNoReplace" {
			return nil
		}
		for i, hook := range w.s.hooks {
			if !fired[i] && w.hookMatches(hook, op.Paths[0], op.Paths[1]) {
				fired[i] = true
				w.runHook(hook)
			}
		}
		return nil
	})
	return hooked
}

// hookMatches: "hook swap-dir P" and "hook swap-symlink P" fire before the
// engine renames P into its removal quarantine.
func (w *world) hookMatches(hook step, oldpath, newpath string) bool {
	return oldpath == w.b.abs(hook.args[1]) && strings.HasPrefix(path.Base(newpath), ".leasekit-removing-")
}

func (w *world) runHook(hook step) {
	b, target := w.b, w.b.abs(hook.args[1])
	must(w.t, b.admin.Rename(target, target+".swapped"))
	switch hook.args[0] {
	case "swap-dir":
		must(w.t, b.engine.Mkdir(target, 0o700))
	case "swap-symlink":
		must(w.t, b.engine.Symlink(b.abs("$OUT/dir"), target))
	default:
		w.t.Fatalf("unknown hook %q", hook.args[0])
	}
}

// run performs the state's operation on the backend. A panic is an
// outcome too (class "panic", untyped): bad input must never cause one.
func (w *world) run() (result outcome) {
	defer func() {
		if recovered := recover(); recovered != nil {
			result = outcome{class: "panic", message: fmt.Sprint(recovered)}
		}
	}()
	switch w.s.engine {
	case "lease":
		return w.runLease()
	case "admission":
		return w.runAdmission()
	case "dirlease":
		return w.runDirlease()
	}
	w.t.Fatalf("unknown engine %q", w.s.engine)
	return outcome{}
}

// createdDirs are the directories an engine makes on its own.
func createdDirs(engine string) []string {
	switch engine {
	case "lease":
		return []string{"ns", "ns/quarantine", "ns/lifecycle-reclaims"}
	case "admission":
		return []string{"home/recovery", "$ADM"}
	case "dirlease":
		return []string{"home/recovery", "$DL"}
	}
	return nil
}

func (w *world) leaseConfig(namespace string) lease.Config {
	return lease.Config{
		Namespace: namespace, RootID: "root-1", FS: w.engineFS(), Clock: leasetest.NewClock(),
		Inspector: w.inspect, IDs: leasetest.NewIDsWithPrefix(0xfeed), GuardWait: 50 * time.Millisecond,
	}
}

func (w *world) runLease() outcome {
	op := w.s.op
	namespace := w.b.abs("ns")
	if op[0] == "new-manager" {
		namespace = op[1]
	}
	manager, err := lease.NewManager(w.leaseConfig(namespace))
	if err != nil {
		return leaseError(err)
	}
	ctx := context.Background()
	switch op[0] {
	case "acquire":
		result, err := manager.Acquire(ctx, lease.AcquireRequest{SessionID: "session-1", SessionFile: "/sessions/1.json"})
		if err != nil {
			return leaseError(err)
		}
		return outcome{class: result.Kind.String(), reason: string(result.Refusal.Reason),
			detail: string(result.Refusal.Human), message: result.Refusal.String(), typed: true}
	case "release":
		result, err := manager.Release(ctx, op[1])
		if err != nil {
			return leaseError(err)
		}
		return outcome{class: result.Kind.String(), reason: string(result.Refusal.Reason),
			detail: string(result.Refusal.Human), message: result.Refusal.String() + result.Why, typed: true}
	case "inspect":
		projection, err := manager.Inspect(ctx)
		if err != nil {
			return leaseError(err)
		}
		return outcome{class: projection.Kind.String(), detail: string(projection.Human),
			message: projection.Diagnostic, typed: true}
	case "with-current":
		ran := false
		err := manager.WithCurrentLease(ctx, op[1], func(context.Context, lease.Owner) error {
			ran = true
			return nil
		})
		if ran {
			return outcome{class: "ran", typed: true}
		}
		return leaseError(err)
	}
	w.t.Fatalf("unknown lease op %q", op[0])
	return outcome{}
}

// leaseError classifies an error of package lease by its type.
func leaseError(err error) outcome {
	o := outcome{class: "error", message: err.Error(), typed: true}
	var config *lease.ConfigError
	var request *lease.RequestError
	var fence *lease.FenceError
	var busy *lease.BusyError
	var unverifiable *lease.UnverifiableError
	var lost *lease.GuardLostError
	var pathError *fs.PathError
	var refused *lease.RefusalError
	switch {
	case errors.As(err, &refused):
		o.class, o.reason, o.detail = "refused", string(refused.Refusal.Reason), string(refused.Refusal.Human)
	case errors.As(err, &config):
		o.reason = "config"
	case errors.As(err, &request):
		o.reason = "request"
	case errors.As(err, &fence):
		o.reason = "fence"
	case errors.As(err, &busy):
		o.reason, o.detail = "busy", string(busy.Refusal.Human)
	case errors.As(err, &unverifiable):
		o.reason, o.detail = "unverifiable", string(unverifiable.Refusal.Human)
	case errors.As(err, &lost):
		o.reason = "guard-lost"
	case errors.As(err, &pathError):
		o.reason = "path-error"
	default:
		o.reason, o.typed = "untyped", false
	}
	return o
}

func (w *world) admissionConfig() admission.Config {
	return admission.Config{StateHome: w.stateHome(), FS: w.engineFS(), Clock: leasetest.NewClock(),
		Inspector: w.inspect, IDs: leasetest.NewIDsWithPrefix(0xfeed)}
}

// stateHome is "home" in the state, or the literal of an "op ... home=X".
func (w *world) stateHome() string {
	for _, arg := range w.s.op[1:] {
		if literal, ok := strings.CutPrefix(arg, "home="); ok {
			return literal
		}
	}
	return w.b.abs("home")
}

func (w *world) runAdmission() outcome {
	config := w.admissionConfig()
	switch w.s.op[0] {
	case "acquire":
		handle, err := admission.Acquire(context.Background(), config)
		if err != nil {
			return admissionError(err)
		}
		return outcome{class: "acquired", message: handle.Path(), typed: true}
	case "inspect":
		claim, disposition, err := admission.Inspect(context.Background(), config)
		if err != nil {
			return admissionError(err)
		}
		if claim == nil {
			return outcome{class: "empty", typed: true}
		}
		return outcome{class: "inspected", reason: string(disposition), typed: true}
	}
	w.t.Fatalf("unknown admission op %q", w.s.op[0])
	return outcome{}
}

func admissionError(err error) outcome {
	o := outcome{class: "error", message: err.Error(), reason: "untyped"}
	var own *admission.Error
	if errors.As(err, &own) {
		o.reason, o.typed = own.Kind.String(), true
		o.detail = causeKind(own.Err)
	}
	return o
}

// causeKind names the statecas kind of a cause, if it has one.
func causeKind(err error) string {
	var cas *statecas.Error
	if errors.As(err, &cas) {
		return cas.Kind.String()
	}
	return ""
}

func (w *world) dirleaseConfig() dirlease.Config {
	return dirlease.Config{StateHome: w.stateHome(), FS: w.engineFS(), Clock: leasetest.NewClock(),
		Inspector: w.inspect, IDs: leasetest.NewIDsWithPrefix(0xfeed)}
}

func (w *world) runDirlease() outcome {
	config := w.dirleaseConfig()
	switch w.s.op[0] {
	case "recover":
		report, err := dirlease.Recover(context.Background(), config)
		if err != nil {
			return dirleaseError(err)
		}
		return outcome{class: "recovered", message: fmt.Sprintf("%+v", report), typed: true}
	case "create":
		// "rel:P" is the relative path P as is, "raw:P" is base + "/" + P
		// without cleaning (so ".." survives), anything else a state path.
		target := w.s.op[1]
		if literal, ok := strings.CutPrefix(target, "rel:"); ok {
			target = literal
		} else if raw, ok := strings.CutPrefix(target, "raw:"); ok {
			target = w.b.base + "/" + raw
		} else {
			target = w.b.abs(target)
		}
		now := leasetest.Epoch.UnixMilli()
		handle, err := dirlease.Create(context.Background(), config, dirlease.CreateRequest{
			Role: dirlease.RoleRawWorking, Path: target, RecoverAfterMs: now + 60_000})
		if err != nil {
			return dirleaseError(err)
		}
		return outcome{class: "created", message: handle.ClaimPath(), typed: true}
	}
	w.t.Fatalf("unknown dirlease op %q", w.s.op[0])
	return outcome{}
}

func dirleaseError(err error) outcome {
	o := outcome{class: "error", message: err.Error(), reason: "untyped"}
	var own *dirlease.Error
	if errors.As(err, &own) {
		o.reason, o.typed = own.Kind.String(), true
		o.detail = causeKind(own.Err)
	}
	return o
}
