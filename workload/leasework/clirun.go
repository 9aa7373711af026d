package leasework

// Simulated `leasereal run` invocations, beside the
// library clients. Terminals on the first host each start wrappers one
// after the other on a lease of their own (cliNamespace, on the first
// space's volume, never touched by the library clients or the hostile
// hooks): each wrapper is a process that leads its own group and is a
// child subreaper, takes the lease through leasecli.AcquireOnce (the
// command tree of a killed run holds the lease), forks its command with a
// parent-death SIGKILL, and the command forks background jobs, pipelines,
// double forks and setsid escapes. A wrapper that ends its command waits
// for every descendant before it releases. A wrapper dies (kill -9) at a
// drawn step, or when the crash fault strikes it at any step; the
// terminal then reruns it, the ordinary retry. Descendants have no body:
// each ends when its drawn lifetime is over (expire, run after every step
// by the world's invariant check, as time passes).
//
// Ground truth, checked when a wrapper starts its command: no other run
// of the lease still runs its command, neither through its live wrapper
// nor through a descendant of a killed one that stayed in the killed
// wrapper's process group. A setsid escape leaves the group and is not
// covered (docs/LEASEREAL.md says so).

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
)

const (
	cliDir       = "/cli"
	cliNamespace = "/cli/job.lease"
	// cliRunsPerTerminal bounds the runs a terminal starts (the first and
	// its reruns).
	cliRunsPerTerminal = 3
	// cliWait is a run's -w; its pauses double from cliBackoffMin to
	// cliBackoffMax.
	cliWait       = 120 * time.Millisecond
	cliBackoffMin = 2 * time.Millisecond
	cliBackoffMax = 8 * time.Millisecond
	// cliWaitRounds bounds a run's waits for descendants (lifetimes are
	// at most cliLifetimeMax, far below cliWaitRounds * cliPoll).
	cliWaitRounds  = 64
	cliPoll        = 4 * time.Millisecond
	cliLifetimeMax = 60 * time.Millisecond
	cliExe         = "/usr/bin/leasereal"
	// cliNever is the end time of a command's shell: it ends when its
	// wrapper ends it, or by its parent-death signal.
	cliNever = int64(1) << 62
)

// cliSteps are what a command's shell does, one per step.
var cliSteps = []string{"background-job", "pipeline", "double-fork", "setsid-escape"}

// cliProbes are the declared probes of the simulated CLI runs.
var cliProbes = []string{
	"lease-cli-command-started",
	"lease-cli-wrapper-killed",
	"lease-cli-killed-tree-runs",
	"lease-cli-held-by-tree",
	"lease-cli-refusal-waited",
	"lease-cli-acquired-after-tree-exit",
	"lease-cli-double-fork",
	"lease-cli-setsid-escape",
	"lease-cli-waited-descendants",
	"lease-cli-released",
}

// cliRun is one `leasereal run`: its wrapper process and its command's tree.
type cliRun struct {
	proc     *sim.Proc
	terminal int
	index    int
	// commandRuns is true from the command's start until the wrapper has
	// seen every descendant exit (then it releases).
	commandRuns bool
	// descendants are every process the run's command tree forked.
	descendants []cliDescendant
}

// cliDescendant is one process of a command tree with the time it ends.
type cliDescendant struct {
	proc  *simproc.Proc
	endAt int64
}

// cliRuns is the CLI part of a lease world.
type cliRuns struct {
	lw        *leaseWorld
	terminals int
	host      *sim.Host
	runs      []*cliRun
	byProc    map[*sim.Proc]*cliRun
	// quietUntil is the earliest end time of a descendant after the last
	// expire walk (math.MaxInt64 when none): before it, no walk can end a
	// process, since a descendant walked past (ended, gone, or its PID
	// reused) never runs again. The walk after every step was 2% of a lease
	// campaign's instructions.
	quietUntil int64
	started    int
	// operator is the second terminal's operator (clioperator.go), nil
	// when the run has none or it has exited.
	operator *sim.Proc
}

// start starts the terminals' first runs (none when opts.CLITerminals is -1).
func (c *cliRuns) start(lw *leaseWorld) error {
	c.lw, c.terminals = lw, max(lw.opts.CLITerminals, 0)
	if c.terminals == 0 {
		return nil
	}
	c.byProc = make(map[*sim.Proc]*cliRun)
	c.host = lw.world.Hosts()[0]
	c.host.Volume().FS().MkdirAll(cliDir, 0o777, 0)
	for t := 0; t < c.terminals; t++ {
		if err := c.spawn(t, 0); err != nil {
			return err
		}
	}
	return c.startOperator()
}

// spawn starts run index of terminal t. A run leads its own group and
// session as it starts (simproc: a spawned process does), so its group's
// number is its PID, the PID the lease records.
func (c *cliRuns) spawn(t, index int) error {
	run := &cliRun{terminal: t, index: index}
	p, err := c.lw.world.Spawn(c.host, sim.ProcSpec{Name: fmt.Sprintf("cli-%d-%d", t, index), UID: leaseUID, Exe: cliExe},
		func(p *sim.Proc) { c.body(p, run) })
	if err != nil {
		return err
	}
	run.proc = p
	c.runs = append(c.runs, run)
	c.byProc[p] = run
	return nil
}

// exited handles the end of a CLI wrapper (false for any other process):
// the descendants it leaves, and the terminal's rerun.
func (c *cliRuns) exited(p *sim.Proc) bool {
	if p == c.operator && p != nil {
		c.operator = nil
		return true
	}
	run := c.byProc[p]
	if run == nil {
		return false
	}
	delete(c.byProc, p)
	c.expire()
	if run.commandRuns && len(c.covered(run)) > 0 {
		c.lw.world.Probe("lease-cli-killed-tree-runs")
	}
	if run.index+1 < cliRunsPerTerminal {
		if err := c.spawn(run.terminal, run.index+1); err != nil {
			c.lw.world.Tracef("cli rerun: %v", err)
		}
	}
	return true
}

// body is one wrapper: acquire, run the command tree, wait for it, release;
// or die (return without releasing) at its drawn kill point.
func (c *cliRuns) body(p *sim.Proc, run *cliRun) {
	d := c.lw.world.Decisions().Stream("cli")
	steps := make([]string, 1+d.Intn(3))
	for i := range steps {
		steps[i] = cliSteps[d.Intn(len(cliSteps))]
	}
	killAt := -1 // 0: before the command; i: after step i; len+1: while waiting
	if d.Intn(2) == 0 {
		killAt = d.Intn(len(steps) + 2)
	}
	table := c.host.Table()
	table.SetChildSubreaper(p.Table(), true)
	m, env, ok := c.manager(p)
	if !ok {
		return
	}
	owner, ok := c.acquire(p, m, env)
	if !ok {
		return
	}
	if killAt == 0 {
		c.lw.world.Probe("lease-cli-wrapper-killed")
		return
	}
	c.commandStarts(run)
	command, err := table.Fork(p.Table(), simproc.ForkSpec{Exe: "/bin/sh"})
	if err != nil {
		_, _ = m.Release(context.Background(), owner.Generation)
		return
	}
	table.SetPdeathsig(command, 9)
	c.addDescendant(run, cliDescendant{proc: command, endAt: cliNever})
	for i, step := range steps {
		c.playStep(run, command, step, d)
		c.sleep(p, time.Duration(1+d.Intn(3))*time.Millisecond)
		if killAt == i+1 {
			c.lw.world.Probe("lease-cli-wrapper-killed")
			return
		}
	}
	if command.State == simproc.Running {
		table.Exit(command) // the command's shell ends; its jobs are reparented to the wrapper
	}
	if !c.waitDescendants(p, run, killAt == len(steps)+1) {
		return
	}
	run.commandRuns = false
	if res, err := m.Release(context.Background(), owner.Generation); err == nil && res.Kind == lease.Released {
		c.lw.world.Probe("lease-cli-released")
	}
}

// manager is the wrapper's Manager and leasecli environment.
func (c *cliRuns) manager(p *sim.Proc) (*lease.Manager, leasecli.Env, bool) {
	m, err := lease.NewManager(lease.Config{Namespace: cliNamespace, RootID: leaseRootID, FS: p.FS(),
		Clock: p.Clock(), Inspector: p.Inspector(), IDs: p.IDs(), GuardWait: c.lw.opts.GuardWait})
	if err != nil {
		panic(err)
	}
	self, err := p.Inspector().Current()
	if err != nil {
		return nil, leasecli.Env{}, false
	}
	return m, leasecli.Env{Self: self, Inspector: p.Inspector(), Groups: c.host.Table().Groups(p.Table()), FS: p.FS()}, true
}

// acquire is run's acquire, by the code `leasereal run` runs
// (leasecli.AcquireRun) on the wrapper's clock: it waits while the lease is
// held (by a live wrapper or a killed one's tree) or a retry may resolve a
// refusal, up to cliWait, and holds an acquired lease while a reclaimed
// run's tree still runs.
func (c *cliRuns) acquire(p *sim.Proc, m *lease.Manager, env leasecli.Env) (lease.Owner, bool) {
	w := c.lw.world
	heldByTree := false
	c.expire()
	start := p.Clock().Monotonic()
	result, _, err := leasecli.AcquireRun(context.Background(), m, lease.AcquireRequest{}, env, leasecli.RunWait{
		Timeout: cliWait, BackoffMin: cliBackoffMin, BackoffMax: cliBackoffMax, Clock: cliClock{p.Clock(), c},
		TreePoll: cliPoll, TreePollsMax: cliWaitRounds,
		Waiting: func(result lease.AcquireResult, tree leasecli.TreeVerdict) {
			if tree.Runs {
				heldByTree = true
				w.Probe("lease-cli-held-by-tree")
			}
			if result.Kind == lease.Refused {
				w.Probe("lease-cli-refusal-waited")
			}
		},
		Holding: func(leasecli.TreeVerdict) { w.Probe("lease-cli-reclaimed-tree-wait") }})
	switch {
	case err != nil:
		if result.Kind == lease.Acquired {
			_, _ = m.Release(context.Background(), result.Owner.Generation)
		}
		return lease.Owner{}, false
	case result.Kind != lease.Acquired:
		if p.Clock().Monotonic()-start < cliWait {
			c.gaveUp(p, result)
		}
		return lease.Owner{}, false
	}
	if heldByTree {
		w.Probe("lease-cli-acquired-after-tree-exit")
	}
	return result.Owner, true
}

// gaveUp judges a run that stopped waiting before its wait was over: only
// a refusal that asks for an operator may end a wait; one that a retry may
// resolve (an owner whose liveness could not be decided for now, a busy
// guard) must be waited out, as a held lease is.
func (c *cliRuns) gaveUp(p *sim.Proc, result lease.AcquireResult) {
	if result.Kind == lease.Refused && result.Refusal.Human == lease.HumanNone {
		c.lw.fail(fmt.Errorf("cli: %s (run -w) gave up before its wait was over on a refusal no operator must resolve: %s: %s",
			p.Name(), result.Refusal.Reason, result.Refusal.Diagnostic), true)
	}
}

// cliClock is a wrapper's clock: the descendants whose lifetime ran out
// during a pause have ended when it returns.
type cliClock struct {
	lease.Clock
	c *cliRuns
}

func (k cliClock) Sleep(ctx context.Context, d time.Duration) error {
	err := k.Clock.Sleep(ctx, d)
	k.c.expire()
	return err
}

// playStep forks one step of the command's shell.
func (c *cliRuns) playStep(run *cliRun, command *simproc.Proc, step string, d *sim.Decisions) {
	if command.State != simproc.Running {
		return
	}
	table, w := c.host.Table(), c.lw.world
	fork := func(parent *simproc.Proc, exe string) *simproc.Proc {
		child, err := table.Fork(parent, simproc.ForkSpec{Exe: exe})
		if err != nil {
			return nil // PIDs exhausted: the shell's fork fails
		}
		lifetime := time.Duration(1+d.Intn(int(cliLifetimeMax/time.Millisecond))) * time.Millisecond
		c.addDescendant(run, cliDescendant{proc: child, endAt: w.Now() + int64(lifetime)})
		return child
	}
	job := fork(command, "/usr/bin/job")
	if job == nil {
		return
	}
	switch step {
	case "pipeline":
		fork(command, "/usr/bin/filter")
	case "double-fork":
		if fork(job, "/usr/bin/daemon") != nil {
			table.Exit(job)
			w.Probe("lease-cli-double-fork")
		}
	case "setsid-escape":
		if table.Setsid(job) == nil {
			w.Probe("lease-cli-setsid-escape")
		}
	}
}

// waitDescendants is the subreaper's wait after the command: until every
// descendant (setsid escapes included) has exited. killed ends the
// wrapper during the wait (false: it never releases).
func (c *cliRuns) waitDescendants(p *sim.Proc, run *cliRun, killed bool) bool {
	waited := false
	for round := range cliWaitRounds {
		c.expire()
		if len(c.running(run, false)) == 0 {
			if waited {
				c.lw.world.Probe("lease-cli-waited-descendants")
			}
			return true
		}
		if killed && round == 0 {
			c.lw.world.Probe("lease-cli-wrapper-killed")
			return false
		}
		waited = true
		c.sleep(p, cliPoll)
	}
	panic(fmt.Sprintf("leasework: %s's descendants outlived their lifetimes", p.Name()))
}

// commandStarts checks the ground truth as run starts its command: no other
// run's command still runs (through a live wrapper holding the lease, or a
// covered descendant of a killed one).
func (c *cliRuns) commandStarts(run *cliRun) {
	for _, other := range c.runs {
		if other == run || !other.commandRuns {
			continue
		}
		if other.proc.Alive() {
			c.lw.fail(fmt.Errorf("cli: %s started its command while %s, alive, still runs its command under the lease",
				run.proc.Name(), other.proc.Name()), false)
			return
		}
		if live := c.covered(other); len(live) > 0 {
			c.lw.fail(fmt.Errorf("cli: %s got the lease and started its command while %d descendant(s) of the killed %s still run in its process group (pids %v)",
				run.proc.Name(), len(live), other.proc.Name(), live), false)
			return
		}
	}
	run.commandRuns = true
	c.started++
	c.lw.world.Probe("lease-cli-command-started")
}

// covered are the running descendants of run still in its wrapper's group.
func (c *cliRuns) covered(run *cliRun) []int { return c.running(run, true) }

// running are the PIDs of run's running descendants (inGroup: only those
// in the wrapper's process group).
func (c *cliRuns) running(run *cliRun, inGroup bool) []int {
	table := c.host.Table()
	group := run.proc.Table().PID
	var pids []int
	for _, desc := range run.descendants {
		q := desc.proc
		if q.State != simproc.Running || table.Lookup(q.NS, q.PID) != q {
			continue
		}
		if !inGroup || q.ProcessGroup() == group {
			pids = append(pids, q.PID)
		}
	}
	return pids
}

// expire ends every descendant whose lifetime is over: the passing of
// time for processes that have no body.
func (c *cliRuns) expire() {
	now := c.lw.world.Now()
	if len(c.runs) == 0 || now < c.quietUntil {
		return
	}
	table := c.host.Table()
	c.quietUntil = math.MaxInt64
	for _, run := range c.runs {
		for _, desc := range run.descendants {
			q := desc.proc
			if desc.endAt > now {
				c.quietUntil = min(c.quietUntil, desc.endAt)
			} else if q.State == simproc.Running && table.Lookup(q.NS, q.PID) == q {
				table.Exit(q)
			}
		}
	}
}

// addDescendant adds a process of run's command tree, for expire.
func (c *cliRuns) addDescendant(run *cliRun, desc cliDescendant) {
	run.descendants = append(run.descendants, desc)
	c.quietUntil = min(c.quietUntil, desc.endAt)
}

func (c *cliRuns) sleep(p *sim.Proc, d time.Duration) { _ = p.Clock().Sleep(context.Background(), d) }

// key folds the CLI runs' state into the world's state key.
func (c *cliRuns) key(k *keyHash) {
	k.ints(len(c.runs), c.started)
	for _, run := range c.runs {
		k.ints(boolInt(run.commandRuns), len(run.descendants), len(c.running(run, false)), len(c.covered(run)))
	}
}
