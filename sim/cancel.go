package sim

import (
	"context"
	"slices"
	"time"
)

// Cancellation and the watch on one engine call.
//
// A workload wraps each engine call in BeginCall/End. BeginCall draws,
// from the process's own stream "cancel/<name>", whether the call's
// context is cancelled, or reaches its deadline, and at which later
// scheduling point of the calling process; the world fires it there
// (Proc.point), so a cancellation meets the engine at any of its FS,
// clock or inspection calls, or before the call begins (point 0). The
// run's cancellation rate is swarm-drawn once per run from the stream
// "cancel" (rate 0, the boring answer, is off), so the draws of every
// other stream stay where they were.
//
// While a call is watched the process's FS wrapper notes every name the
// call creates (opened with O_CREATE, made, or renamed or linked into
// place) and the world notes every FS fault injected into it: the
// "a failed call leaves nothing of its own behind" oracle
// (workkit.LeftNothing) reads both, and the files the call left open.

// cancelRates are the swarm levels of the per-call cancellation chance.
var cancelRates = [...]float64{0, 0.03, 0.08, 0.15, 0.3, 0.5}

// cancelPointsMax bounds how many scheduling points after BeginCall a
// drawn cancellation fires: a lease Acquire passes about 30 to 80.
const cancelPointsMax = 64

// cancelState is the world's per-run cancellation rate, drawn on first use.
type cancelState struct {
	drawn bool
	rate  float64
}

// procCalls is a process's watched call, if any, and its cancel stream.
type procCalls struct {
	active *Call
	stream *Decisions
	// open lists the files this thread opened and has not closed: threads
	// share their process's open files, so a call is judged by its own
	// thread's opens, not by the view's count.
	open []*procFile
}

// opened and closed follow the thread's open files.
func (pc *procCalls) opened(f *procFile) { pc.open = append(pc.open, f) }

func (pc *procCalls) closed(f *procFile) {
	for i, g := range pc.open {
		if g == f {
			pc.open = append(pc.open[:i], pc.open[i+1:]...)
			return
		}
	}
}

// CtxKind says how a watched call's context ended.
type CtxKind uint8

const (
	// CtxLive: the context was never cancelled.
	CtxLive CtxKind = iota
	// CtxCancelled: the world cancelled it (context.Canceled).
	CtxCancelled
	// CtxDeadline: its deadline passed (context.DeadlineExceeded).
	CtxDeadline
)

// Call is one watched engine call of a process (BeginCall).
type Call struct {
	p    *Proc
	prev *Call
	ctx  *callContext
	// openBefore is how many files the process had open at BeginCall.
	openBefore int
	created    []string
	faulted    []FaultedOp
	ended      bool
	// began is the world step at BeginCall (an oracle asks what a hostile
	// hook did during the call).
	began int
}

// FaultedOp is an FS operation of a watched call that an injected fault
// struck: its simfs kind ("remove", "rename", ...) and first path.
type FaultedOp struct{ Kind, Path string }

// BeginCall starts watching one engine call of p and draws its context's
// fate. It is not a scheduling point. Calls nest (the inner one is watched
// until its End).
func (p *Proc) BeginCall() *Call {
	p.assertRunning()
	w := p.world
	c := &Call{p: p, prev: p.calls.active, openBefore: len(p.calls.open), began: w.step}
	p.calls.active = c
	rate := w.cancelRate()
	if rate <= 0 {
		return c
	}
	if p.calls.stream == nil {
		p.calls.stream = w.decisions.Stream("cancel/" + p.name)
	}
	d := p.calls.stream
	if !d.Chance(rate) {
		return c
	}
	kind := CtxCancelled
	if d.Intn(2) == 1 {
		kind = CtxDeadline
	}
	// A quarter of the drawn contexts are done before the call begins (the
	// answer 0, what a shrunk run keeps): most entry points check ctx only
	// there. The rest fire at one of the call's next cancelPointsMax points.
	at := 0
	if d.Intn(4) != 0 {
		at = 1 + d.Intn(cancelPointsMax)
	}
	c.ctx = &callContext{kind: kind, remaining: at, early: at == 0, deadline: p.host.Wall().Add(time.Duration(at) * time.Millisecond)}
	if at == 0 {
		c.fire()
	}
	return c
}

// cancelRate is the run's per-call cancellation chance (drawn once). A
// zero fault plan (a plan of no faults, or StopFaults before a liveness
// phase) cancels nothing: a cancellation is a fault of the caller.
func (w *World) cancelRate() float64 {
	if w.plan == (FaultPlan{}) {
		return 0
	}
	if !w.cancel.drawn {
		w.cancel.drawn = true
		w.cancel.rate = cancelRates[w.decisions.Stream("cancel").Intn(len(cancelRates))]
	}
	return w.cancel.rate
}

// Context is the call's context: one the world cancels at the drawn point,
// or context.Background when none was drawn.
func (c *Call) Context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// Drawn reports how the call's context was drawn to end (CtxLive when it
// was not), whether or not it has fired yet.
func (c *Call) Drawn() CtxKind {
	if c.ctx == nil {
		return CtxLive
	}
	return c.ctx.kind
}

// Began is the world step at which the call began.
func (c *Call) Began() int { return c.began }

// SiblingsDuring reports whether another thread of the caller's process
// was alive at some point during the call: live now, or ended since the
// call began. What such a thread left on disk names the caller too, even
// if the thread has returned before the call did.
func (c *Call) SiblingsDuring() bool {
	return c.p.SiblingsLive() || c.p.siblingEndedSince(c.began)
}

// Fired reports how the call's context has ended so far (CtxLive: not).
func (c *Call) Fired() CtxKind {
	if c.ctx == nil || !c.ctx.fired {
		return CtxLive
	}
	return c.ctx.kind
}

// MidCall reports that the call's context fired during the call, at one
// of its scheduling points, rather than before it began.
func (c *Call) MidCall() bool { return c.ctx != nil && c.ctx.fired && !c.ctx.early }

// End stops watching the call. It is not a scheduling point; a second End
// does nothing.
func (c *Call) End() {
	if c.ended {
		return
	}
	c.ended = true
	if c.p.calls.active == c {
		c.p.calls.active = c.prev
	}
}

// Proc returns the calling process.
func (c *Call) Proc() *Proc { return c.p }

// Created returns the names the call created, in order (a name may repeat).
func (c *Call) Created() []string { return c.created }

// Faulted returns the call's FS operations an injected fault struck.
func (c *Call) Faulted() []FaultedOp { return c.faulted }

// OpenLeft returns the names of the files the process has open beyond
// those it had open at BeginCall (nil when none): a call must close what
// it opens. Call it right after the call returns.
func (c *Call) OpenLeft() []string {
	open := c.p.calls.open
	if len(open) <= c.openBefore {
		return nil
	}
	names := make([]string, 0, len(open)-c.openBefore)
	for _, f := range open[c.openBefore:] {
		names = append(names, f.inner.Name())
	}
	return names
}

// point counts one scheduling point of the watched call; the drawn one
// fires the context.
func (c *Call) point() {
	x := c.ctx
	if x == nil || x.fired {
		return
	}
	x.remaining--
	if x.remaining <= 0 {
		c.fire()
	}
}

func (c *Call) fire() {
	x := c.ctx
	x.fired = true
	if x.done != nil {
		close(x.done)
	}
	w := c.p.world
	if x.kind == CtxDeadline {
		w.Probe("call-deadline")
	} else {
		w.Probe("call-cancelled")
	}
	if w.tracing() {
		w.Tracef("cancel proc=%s kind=%d at=%v path=%s", c.p.name, x.kind, c.p.pending.kind, c.p.pending.path)
	}
}

// CreatedInFlight reports whether a watched call of a process other than
// except, still under way, created name. A unique-named entry (a
// MkdirTemp or temp-file name) that a finished call created and then
// renamed away may already be another call's: simfs draws such names from
// a small space, as a kernel may hand out a freed name again.
func (w *World) CreatedInFlight(name string, except *Proc) bool {
	for _, p := range w.procs {
		if p != except && p.calls.active != nil && slices.Contains(p.calls.active.created, name) {
			return true
		}
	}
	return false
}

// noteCreated records a name a watched call created (err == nil).
func (pc *procCalls) noteCreated(name string, err error) {
	if c := pc.active; c != nil && err == nil {
		c.created = append(c.created, name)
	}
}

// noteFault records an injected FS fault on a watched call.
func (pc *procCalls) noteFault(kind, path string) {
	if c := pc.active; c != nil {
		c.faulted = append(c.faulted, FaultedOp{Kind: kind, Path: path})
	}
}

// callContext is a watched call's context. It starts no goroutine and no
// timer: the world fires it at a scheduling point of the calling process.
// An engine that derived a context from it (context.WithCancel) would get
// a watching goroutine: the engines only call Err, and archtest forbids
// them goroutines.
type callContext struct {
	kind      CtxKind
	remaining int
	// early: done before the call began.
	early    bool
	fired    bool
	deadline time.Time
	done     chan struct{}
}

// Deadline is the drawn deadline for a deadline context; a cancelled one
// has none.
func (x *callContext) Deadline() (time.Time, bool) {
	if x.kind == CtxDeadline {
		return x.deadline, true
	}
	return time.Time{}, false
}

// Done is closed once the context fired.
func (x *callContext) Done() <-chan struct{} {
	if x.done == nil {
		x.done = make(chan struct{})
		if x.fired {
			close(x.done)
		}
	}
	return x.done
}

// Err is nil until the context fired.
func (x *callContext) Err() error {
	switch {
	case !x.fired:
		return nil
	case x.kind == CtxDeadline:
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// Value carries nothing.
func (x *callContext) Value(any) any { return nil }

// InCall reports whether p is inside a watched engine call (between
// BeginCall and End): a hostile hook that must not strike mid-call asks.
func (p *Proc) InCall() bool { return p.calls.active != nil }
