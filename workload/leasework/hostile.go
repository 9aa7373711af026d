package leasework

// Hostile callers. A hostile caller process calls package lease's exported
// functions with arguments no caller should pass: strings no record can
// carry (invalid UTF-8, a NUL byte, over the 4,096-byte bound), relative
// and unclean paths, `..`, an unknown blocker kind, zero and negative
// durations, and contexts cancelled or past their deadline before the
// call. The oracle: every such call returns a typed error (a
// *lease.RequestError, a *lease.ConfigError, or the context's error),
// never panics (a panic in a process is a finding of the harness), never
// enters a WithCurrentLease fn, and creates nothing and keeps nothing open:
// the engine refuses before its first write, so no guard, intent or lease
// is left behind. A hostile call changes nothing, so it is not in the
// history.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// hostileCallsPerProc is how many hostile calls one hostile caller makes.
const hostileCallsPerProc = 6

// hostileText are strings no record can carry as written.
var hostileText = []string{"\xff", "s\x00", "/sessions/\xfe.json", strings.Repeat("x", 4097)}

// hostileSessionFiles are session files Acquire must refuse: relative, or
// not text.
var hostileSessionFiles = []string{"sessions/s.json", "../sessions/s.json", "..", "/sessions/\x00", "/s/\xff"}

// hostileNamespaces are Config.Namespace values NewManager must refuse.
var hostileNamespaces = []string{"state/lease", "/state/../state/lease", leaseNamespace + "/", "/", "", "/state/le\xffase",
	"/state/\x00", "/" + strings.Repeat("n", 4097)}

// hostileGeneration is a well-formed generation no lease has: a call with
// it and a done context must answer with the context's error.
const hostileGeneration = "00000000-0000-4000-8000-00000000dead"

// hostileCall is one hostile call: what it names in messages and probes,
// and the call itself.
type hostileCall struct {
	name  string
	class string // the probe: request, config, duration, cancelled
	call  func(ctx context.Context, m *lease.Manager, entered *bool) error
}

// spawnHostileCallers starts the run's hostile callers, each on a drawn
// host. They are no workers: the liveness phase does not wait for them.
func (lw *leaseWorld) spawnHostileCallers() error {
	w := lw.world
	lw.hostileCallers = map[*sim.Proc]bool{}
	for i := 0; i < lw.opts.HostileCallers; i++ {
		h := w.Hosts()[w.Decisions().Intn(len(w.Hosts()))]
		p, err := w.Spawn(h, sim.ProcSpec{Name: fmt.Sprintf("hostile-%d", i), UID: leaseUID,
			Exe: "/usr/bin/leasekit-hostile", Namespace: 0}, lw.hostileCaller)
		if err != nil {
			return err
		}
		lw.hostileCallers[p] = true
	}
	return nil
}

// hostileCaller is the hostile caller's body.
func (lw *leaseWorld) hostileCaller(p *sim.Proc) {
	d := lw.world.Decisions()
	m := lw.manager(p)
	for i := 0; i < hostileCallsPerProc && lw.liveness == nil; i++ {
		lw.hostileCallJudged(p, m, lw.hostileCall(p, d))
		lw.pause(p, d)
	}
}

// hostileCallJudged makes one hostile call and judges it.
func (lw *leaseWorld) hostileCallJudged(p *sim.Proc, m *lease.Manager, hc hostileCall) {
	w := lw.world
	ctx := context.Background()
	if hc.class == "cancelled" {
		ctx = doneContext(w.Decisions().Intn(2) == 0)
	}
	entered := false
	call := p.BeginCall()
	err := hc.call(ctx, m, &entered)
	created, open := call.Created(), call.OpenLeft()
	call.End()
	w.Tracef("lease-hostile proc=%s %s: %v", p.Name(), hc.name, err)
	switch {
	case entered:
		lw.fail(fmt.Errorf("%s: hostile %s entered the WithCurrentLease fn", p.Name(), hc.name), false)
	case !hostileRefusal(err, hc.class):
		lw.fail(fmt.Errorf("%s: hostile %s answered %v (%T), not a typed refusal", p.Name(), hc.name, err, err), false)
	case len(created) > 0 || len(open) > 0:
		lw.fail(fmt.Errorf("%s: hostile %s was refused (%v) but created %s and left %d file(s) open", p.Name(),
			hc.name, err, strings.Join(created, ", "), len(open)), false)
	default:
		w.Probe("lease-hostile-" + hc.class + "-refused")
	}
}

// hostileRefusal reports whether err is the typed refusal a hostile call
// of class must get.
func hostileRefusal(err error, class string) bool {
	var request *lease.RequestError
	var config *lease.ConfigError
	switch class {
	case "config":
		return errors.As(err, &config)
	case "cancelled":
		return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	}
	return errors.As(err, &request)
}

// hostileArgs are the arguments of one hostile call, drawn before the call
// is chosen.
type hostileArgs struct {
	text, file string
	negative   time.Duration
	valid      lease.AcquireRequest
	config     hostileCall
}

// hostileKind is one entry of hostileKinds: its message name and its call,
// given the drawn arguments.
type hostileKind struct {
	name  func(a *hostileArgs) string
	class string
	call  func(ctx context.Context, m *lease.Manager, entered *bool, a *hostileArgs) error
}

// hostileCall draws the arguments of a hostile call of p from d, then which
// call it is, and builds only that one: the draws of choosing from the
// whole list built anew, which cost a lease campaign 4% of its
// allocations, most of them names no message used.
func (lw *leaseWorld) hostileCall(p *sim.Proc, d *sim.Decisions) hostileCall {
	a := &hostileArgs{text: hostileText[d.Intn(len(hostileText))], file: hostileSessionFiles[d.Intn(len(hostileSessionFiles))]}
	a.negative = -time.Duration(1+d.Intn(1000)) * time.Millisecond
	a.valid = lease.AcquireRequest{SessionID: fmt.Sprintf("hostile-%d", p.ID())}
	a.config = lw.hostileConfig(p, d)
	kind := hostileKinds[d.Intn(len(hostileKinds))]
	return hostileCall{kind.name(a), kind.class, func(ctx context.Context, m *lease.Manager, entered *bool) error {
		return kind.call(ctx, m, entered, a)
	}}
}

// named is a hostileKind name that depends on no argument.
func named(name string) func(*hostileArgs) string { return func(*hostileArgs) string { return name } }

// hostileKinds are the hostile calls a hostile caller may make.
var hostileKinds = []hostileKind{
	{func(a *hostileArgs) string { return "Acquire(SessionID " + quoted(a.text) + ")" }, "request",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.Acquire(ctx, lease.AcquireRequest{SessionID: a.text})
			return err
		}},
	{func(a *hostileArgs) string { return "Acquire(SessionFile " + quoted(a.file) + ")" }, "request",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.Acquire(ctx, lease.AcquireRequest{SessionFile: a.file})
			return err
		}},
	{func(a *hostileArgs) string { return "AcquireWait(SessionID " + quoted(a.text) + ", Timeout 0)" }, "request",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.AcquireWait(ctx, lease.AcquireRequest{SessionID: a.text}, lease.WaitOptions{})
			return err
		}},
	{func(a *hostileArgs) string { return fmt.Sprintf("AcquireWait(Timeout %v)", a.negative) }, "duration",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.AcquireWait(ctx, a.valid, lease.WaitOptions{Timeout: a.negative})
			return err
		}},
	{func(a *hostileArgs) string { return fmt.Sprintf("AcquireWait(BackoffMin %v)", a.negative) }, "duration",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.AcquireWait(ctx, a.valid, lease.WaitOptions{Timeout: time.Second, BackoffMin: a.negative})
			return err
		}},
	{func(a *hostileArgs) string { return "Release(" + quoted(a.text) + ")" }, "request",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.Release(ctx, a.text)
			return err
		}},
	{named(`Release("")`), "request", func(ctx context.Context, m *lease.Manager, _ *bool, _ *hostileArgs) error {
		_, err := m.Release(ctx, "")
		return err
	}},
	{func(a *hostileArgs) string { return "WithCurrentLease(" + quoted(a.text) + ")" }, "request",
		func(ctx context.Context, m *lease.Manager, entered *bool, a *hostileArgs) error {
			return m.WithCurrentLease(ctx, a.text, func(context.Context, lease.Owner) error { *entered = true; return nil })
		}},
	{func(a *hostileArgs) string { return "ForceReclaim(receiver, Generation " + quoted(a.text) + ")" }, "request",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerReceiver, Generation: a.text})
			return err
		}},
	{func(a *hostileArgs) string { return "ForceReclaim(Kind " + quoted(a.text) + ")" }, "request",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerKind(a.text)})
			return err
		}},
	{func(a *hostileArgs) string { return "ForceReclaim(intent " + quoted(a.file) + ")" }, "request",
		func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
			_, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerIntent, Path: leaseNamespace + "/lifecycle-reclaims/" + a.file})
			return err
		}},
	{named("ForceReclaim(epoch, EpochFloor 0)"), "request", func(ctx context.Context, m *lease.Manager, _ *bool, _ *hostileArgs) error {
		_, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerEpoch})
		return err
	}},
	{func(a *hostileArgs) string { return a.config.name }, "config",
		func(ctx context.Context, m *lease.Manager, entered *bool, a *hostileArgs) error {
			return a.config.call(ctx, m, entered)
		}},
	{named("Acquire (context done)"), "cancelled", func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
		_, err := m.Acquire(ctx, a.valid)
		return err
	}},
	{named("AcquireWait (context done)"), "cancelled", func(ctx context.Context, m *lease.Manager, _ *bool, a *hostileArgs) error {
		_, err := m.AcquireWait(ctx, a.valid, lease.WaitOptions{Timeout: 50 * time.Millisecond})
		return err
	}},
	{named("Release (context done)"), "cancelled", func(ctx context.Context, m *lease.Manager, _ *bool, _ *hostileArgs) error {
		_, err := m.Release(ctx, hostileGeneration)
		return err
	}},
	{named("WithCurrentLease (context done)"), "cancelled", func(ctx context.Context, m *lease.Manager, entered *bool, _ *hostileArgs) error {
		return m.WithCurrentLease(ctx, hostileGeneration, func(context.Context, lease.Owner) error { *entered = true; return nil })
	}},
	{named("Inspect (context done)"), "cancelled", func(ctx context.Context, m *lease.Manager, _ *bool, _ *hostileArgs) error {
		_, err := m.Inspect(ctx)
		return err
	}},
	{named("ForceReclaim (context done)"), "cancelled", func(ctx context.Context, m *lease.Manager, _ *bool, _ *hostileArgs) error {
		_, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerGuard})
		return err
	}},
}

// hostileConfig is a NewManager call with one hostile Config field.
func (lw *leaseWorld) hostileConfig(p *sim.Proc, d *sim.Decisions) hostileCall {
	cfg := lease.Config{Namespace: leaseNamespace, RootID: lw.rootFor(p.Name()), FS: p.FS(), Clock: p.Clock(),
		Inspector: p.Inspector(), IDs: p.IDs(), GuardWait: lw.opts.GuardWait}
	var name string
	switch d.Intn(3) {
	case 0:
		cfg.Namespace = hostileNamespaces[d.Intn(len(hostileNamespaces))]
		name = "Namespace " + quoted(cfg.Namespace)
	case 1:
		cfg.RootID = []string{"", "\xff", "r\x00", strings.Repeat("r", 1025)}[d.Intn(4)]
		name = "RootID " + quoted(cfg.RootID)
	default:
		cfg.GuardWait = -time.Duration(1+d.Intn(1000)) * time.Millisecond
		name = fmt.Sprintf("GuardWait %v", cfg.GuardWait)
	}
	return hostileCall{"NewManager(" + name + ")", "config", func(context.Context, *lease.Manager, *bool) error {
		m, err := lease.NewManager(cfg)
		if err == nil {
			_, err = m.Inspect(context.Background()) // a Manager made of it must not be used
			return fmt.Errorf("NewManager accepted it (Inspect: %v)", err)
		}
		return err
	}}
}

// quoted quotes at most 24 bytes of s: a 4,097-byte argument stays one
// short line in a trace.
func quoted(s string) string {
	if len(s) > 24 {
		return fmt.Sprintf("%q... (%d bytes)", s[:24], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// doneContext is a context already cancelled, or past its deadline
// (deadline true), before the call begins.
func doneContext(deadline bool) context.Context {
	if deadline {
		return expiredContext{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// expiredContext is a context whose deadline has passed: no wall clock.
type expiredContext struct{ context.Context }

var closedDone = func() chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}()

func (expiredContext) Deadline() (time.Time, bool) { return time.Unix(0, 0), true }
func (expiredContext) Done() <-chan struct{}       { return closedDone }
func (expiredContext) Err() error                  { return context.DeadlineExceeded }
func (expiredContext) Value(any) any               { return nil }
