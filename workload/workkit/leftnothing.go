package workkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// LeftNothing is the oracle "a cancelled or failed call leaves nothing of
// its own behind". A workload wraps each engine call in
// sim.Proc.BeginCall and hands the watched call to After with its outcome.
// After a call that failed (an error, a refusal):
//
//   - no file the call opened is still open (checked at once);
//   - no machinery the call created is still on disk: a temporary, a
//     prepare or released entry, a reclaim intent (unique names: existing
//     is the leak), and no lifecycle guard or mutation claim at a fixed
//     name that names the caller;
//   - no product the call created (a lease, an admission record, a
//     dirlease claim) names the caller, unless the outcome is
//     indeterminate: the histories record an errored call as unknown, so a
//     record committed before an injected I/O error may stay; a cancelled
//     call and a call that met no injected fault are determinate.
//
// A machinery leftover the call's error names is reported, not left
// behind (a release that kept a swapped directory for an operator). A
// machinery leftover is excused when an injected fault struck the
// cleanup of that very name (a remove, rename, open or read of it or of
// something inside it): the engine tried and the filesystem refused; and
// unique-named machinery (which a later call sweeps) also when the fault
// struck the fsync of its directory. The
// disk checks run in the world invariant that follows the call's step,
// before any other process has run and before the caller's next FS
// operation executes, so the disk is as the call left it.
type LeftNothing struct {
	world    *sim.World
	engine   string
	classify func(name string) Residue
	pending  []leftCall
	failure  error
	// swapped is the last step at which a hostile hook replaced each name
	// (Swapped).
	swapped map[string]int
	// OwnedLeft, if set, hears of each fixed-name record naming the caller
	// that a failed call left and the oracle accepted (its error names it,
	// or a fault struck its cleanup): a workload can then hold the
	// caller's later calls to what the engine promises about it.
	OwnedLeft func(p *sim.Proc, name string)
}

// Residue is how the oracle judges a name a failed call created that still
// exists.
type Residue uint8

const (
	// ResidueNone may stay (directories of the layout, quarantine
	// evidence, the caller's own files).
	ResidueNone Residue = iota
	// ResidueMachinery has a unique name: it must be gone.
	ResidueMachinery
	// ResidueOwned has a fixed name (a guard, a mutation claim): it must
	// not name the caller.
	ResidueOwned
	// ResidueProduct is what a successful call would have made: after a
	// determinate failure it must not name the caller.
	ResidueProduct
)

// Outcome is what a watched call returned.
type Outcome struct {
	// Op names the call for probes and messages ("acquire").
	Op  string
	Err error
	// Failed is true for an error or a refusal.
	Failed bool
	// Products says the call makes a product (an acquire, a create):
	// only then are products judged.
	Products bool
	// Session, when set, is the acquire's session: a product names the
	// caller only if it carries it (lease owner.json's piSessionId).
	Session string
}

type leftCall struct {
	p       *sim.Proc
	out     Outcome
	ctx     bool
	created []string
	faulted []sim.FaultedOp
	pid     int
	start   string
	host    string
	ns      string
	// siblings: another thread of the caller's process was alive during
	// the call (sim.Call.SiblingsDuring); a record naming the process may
	// be that thread's own, though the thread returned first.
	siblings bool
	began    int
}

// Swapped tells the oracle that a hostile hook replaced name (a
// byte-identical copy on a new inode): a call in flight that then meets a
// different inode than it created refuses to remove it, and that
// record naming the caller is the co-tenant's doing, not the call's leak.
func (l *LeftNothing) Swapped(name string) {
	if l.swapped == nil {
		l.swapped = map[string]int{}
	}
	l.swapped[name] = l.world.Step()
}

// NewLeftNothing registers the oracle's invariant on w. engine prefixes its
// probes ("lease": lease-acquire-cancelled, lease-cancelled-left-nothing);
// classify judges a created name.
func NewLeftNothing(w *sim.World, engine string, classify func(name string) Residue) *LeftNothing {
	l := &LeftNothing{world: w, engine: engine, classify: classify}
	w.Invariant(engine+"-left-nothing", l.check)
	return l
}

// After ends the watch on call c and judges its outcome. Call it right
// after the engine call returns, on the calling process.
func (l *LeftNothing) After(c *sim.Call, out Outcome) {
	c.End()
	p := c.Proc()
	cancelled := errors.Is(out.Err, context.Canceled)
	deadline := errors.Is(out.Err, context.DeadlineExceeded)
	switch {
	case cancelled:
		l.world.Probe(l.engine + "-" + out.Op + "-cancelled")
	case deadline:
		l.world.Probe(l.engine + "-" + out.Op + "-deadline")
	}
	if (cancelled || deadline) && c.MidCall() {
		l.world.Probe(l.engine + "-" + out.Op + "-cancelled-mid-call") // not only at the entry check
	}
	if c.Fired() != sim.CtxLive && out.Err == nil {
		l.world.Probe(l.engine + "-cancel-ignored-done") // the engine had no check left to make
	}
	if !out.Failed {
		return
	}
	if open := c.OpenLeft(); len(open) > 0 {
		l.fail(fmt.Errorf("%s: %s returned %v and left %d file(s) open: %s", p.Name(), out.Op, out.Err, len(open),
			strings.Join(open, ", ")))
		return
	}
	l.pending = append(l.pending, leftCall{p: p, out: out, ctx: cancelled || deadline,
		created: append([]string(nil), c.Created()...), faulted: append([]sim.FaultedOp(nil), c.Faulted()...),
		pid: p.Table().PID, start: strconv.FormatUint(p.Table().StartTicks, 10), host: p.Host().Name(),
		ns: p.Host().Table().NamespaceID(p.Table().NS), siblings: c.SiblingsDuring(), began: c.Began()})
}

func (l *LeftNothing) ownedLeft(call leftCall, name string, residue Residue) {
	if residue == ResidueOwned && l.OwnedLeft != nil {
		l.OwnedLeft(call.p, name)
	}
}

func (l *LeftNothing) fail(err error) {
	if l.failure == nil {
		l.failure = fmt.Errorf("left-nothing: %w", err)
	}
}

// check is the invariant: it judges the failed calls of this step.
func (l *LeftNothing) check() error {
	for _, call := range l.pending {
		l.judge(call)
	}
	clear(l.pending)
	l.pending = l.pending[:0]
	return l.failure
}

func (l *LeftNothing) judge(call leftCall) {
	root := call.p.Host().Volume().Root()
	determinate := call.determinate()
	clean, excused, reported := true, false, false
	for i, name := range call.created {
		if slices.Contains(call.created[:i], name) {
			continue // judged already (a call's created list is short)
		}
		residue := l.classify(name)
		if residue == ResidueNone || (residue == ResidueProduct && (!determinate || !call.out.Products)) {
			continue
		}
		if _, err := root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if residue == ResidueMachinery && l.world.CreatedInFlight(name, call.p) {
			// The call's entry moved away (a prepare directory published
			// as receiver.lock) and another call in flight made one of the
			// same unique name since: that one is not the call's leak.
			l.world.Probe(l.engine + "-left-name-reused")
			continue
		}
		if residue != ResidueMachinery && (call.siblings || !namesCaller(root, name, call)) {
			continue // a thread of the same process may have made it since
		}
		if residue != ResidueProduct && call.out.Err != nil && strings.Contains(call.out.Err.Error(), name) {
			reported = true // the error names it: "left for an operator", "a later call retries"
			l.ownedLeft(call, name, residue)
			continue
		}
		if residue != ResidueProduct && faultedCleanup(call.faulted, name, residue == ResidueMachinery) {
			excused = true
			l.ownedLeft(call, name, residue)
			continue
		}
		if at, ok := l.swapped[name]; ok && residue == ResidueOwned && at >= call.began {
			excused = true // the co-tenant swapped it under the call
			continue
		}
		clean = false
		l.fail(fmt.Errorf("%s: %s returned %v and left %s behind (%s)", call.p.Name(), call.out.Op, call.out.Err,
			name, residueNames[residue]))
	}
	switch {
	case reported:
		l.world.Probe(l.engine + "-left-reported")
	case excused:
		l.world.Probe(l.engine + "-left-excused-by-fault")
	case clean && call.ctx:
		l.world.Probe(l.engine + "-cancelled-left-nothing")
	case clean:
		l.world.Probe(l.engine + "-failed-left-nothing")
	}
}

// determinate reports whether the call's failure is a known outcome: a
// cancelled call (it ran its cleanup), or a failure no injected fault
// caused (a refusal). Only an injected fault can leave a product committed
// before the error, which the histories record as unknown.
func (call leftCall) determinate() bool {
	return call.ctx || len(call.faulted) == 0
}

var residueNames = [...]string{"", "machinery", "a record naming the caller", "a product naming the caller"}

// faultedCleanup reports whether an injected fault struck an operation
// that would remove name or something inside it, or read or stat it to
// verify it.
// For unique-named machinery (garbage that a later call sweeps, blocking
// nobody) a fault on the fsync or the listing of its directory, or on
// the removal of a sibling in it, counts too (a cleanup lists it to find
// what to remove, and may remove in an order): an engine
// stops at a failed fsync rather than act on state it cannot make durable.
// So does a failed remove of a sibling: a cleanup removes in an order (a
// dead claimant's data temps before its orphaned claim, so a later
// recovery still finds them) and stops at the first refusal.
func faultedCleanup(faulted []sim.FaultedOp, name string, sweepable bool) bool {
	for _, op := range faulted {
		if sweepable && (op.Kind == "open" || op.Kind == "sync" || op.Kind == "readdir") && op.Path == path.Dir(name) {
			return true
		}
		if sweepable && (op.Kind == "remove" || op.Kind == "rename") && path.Dir(op.Path) == path.Dir(name) {
			return true // a sibling's removal failed: statecas removes an orphan's data temps before the orphan
		}
		switch op.Kind {
		case "remove", "rename", "open", "read", "readdir", "stat":
		default:
			continue
		}
		// name itself, something inside it, or a name derived from it (a
		// mutation claim moved aside as "<name>.<id>.orphan" while its
		// recovery runs, then put back when a fault stops the recovery)
		if op.Path == name || strings.HasPrefix(op.Path, name+"/") || strings.HasPrefix(op.Path, name+".") {
			return true
		}
	}
	return false
}

// namesCaller reports whether the record at name (a directory: its
// owner.json) names the calling process: its PID, and its start time,
// host and PID namespace where the record carries them, at the top level or under "owner";
// and the call's session where one is given. An unreadable or garbled
// record names nobody.
func namesCaller(root lease.FS, name string, call leftCall) bool {
	data, err := ReadRoot(root, name)
	if err != nil {
		data, err = ReadRoot(root, fspath.Join(name, "owner.json"))
	}
	if err != nil {
		return false
	}
	var record map[string]any
	if json.Unmarshal(data, &record) != nil {
		return false
	}
	if call.out.Session != "" {
		if session, ok := record["piSessionId"]; ok && session != call.out.Session {
			return false
		}
	}
	owner := record
	if nested, ok := record["owner"].(map[string]any); ok {
		owner = nested
	}
	if pid, ok := owner["pid"].(float64); !ok || int(pid) != call.pid {
		return false
	}
	for _, key := range []string{"processStartIdentity", "startTime"} {
		if v, ok := owner[key]; ok && v != call.start {
			return false
		}
	}
	if v, ok := owner["hostname"]; ok && v != call.host {
		return false
	}
	if v, ok := owner["pidNamespace"]; ok && v != nil && v != call.ns {
		return false // a container's twin: the same PID and start in another namespace
	}
	return true
}

// StatecasResidue is the classifier of the engines built on
// internal/statecas (admission, dirlease): its temps (".tmp-...") and
// orphaned-claim names (".<target>.mutation.<id>.orphan") and RemoveTree's
// ".leasekit-removing-*" directories have unique names; a mutation claim
// (".<target>.mutation") must not name the caller; product says which
// names are the engine's records (an admission, a dirlease claim).
func StatecasResidue(product func(name string) bool) func(name string) Residue {
	return func(name string) Residue {
		base := path.Base(name)
		switch {
		case strings.HasPrefix(base, ".tmp-"), strings.HasPrefix(base, ".leasekit-removing-"),
			strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".orphan"):
			return ResidueMachinery
		case strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".mutation"):
			return ResidueOwned
		case product(name):
			return ResidueProduct
		}
		return ResidueNone
	}
}
