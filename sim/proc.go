package sim

import (
	"fmt"
	"runtime/debug"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simproc"
)

// ProcSpec describes a simulated process to spawn.
type ProcSpec struct {
	// Name labels the process in traces and history (e.g. "client-2").
	Name string
	// Exe is the executable path; empty means /usr/bin/leasekit.
	Exe string
	UID uint32
	// Namespace is the PID namespace index on the host.
	Namespace int
	// Threads is the thread count; zero means one.
	Threads int
	// StartTicks, when set, is an earlier start tick of this boot (a
	// boot-time daemon): see simproc.SpawnSpec.StartTicks.
	StartTicks *uint64
	// PID, when not zero, is the free PID to take (simproc.SpawnSpec.PID):
	// a PID-reuse impostor on a dead process's PID.
	PID int
}

// procStatus is where a process is in its life.
type procStatus uint8

const (
	procLive procStatus = iota + 1
	procDead
)

// crashSignal is the panic value that unwinds a killed process's body. A
// SIGKILL runs no code; the unwinding runs the engine's defers, but every
// wrapper refuses to act for a dead process, so they cannot touch the world.
type crashSignal struct{}

var crashSentinel any = &crashSignal{}

// Proc is a simulated process: a body running in a coroutine on a host.
type Proc struct {
	world *World
	id    int
	lane  int
	name  string
	// draws are the process's decision streams (procDraws).
	draws  procDraws
	host   *Host
	table  *simproc.Proc
	view   lease.FS
	body   func(p *Proc)
	status procStatus

	// co is the coroutine the body runs on, from its first resume until it
	// ends; ended says the body returned or unwound; unwinding says a kill
	// is resuming it only to unwind it.
	co        *coroutine
	ended     bool
	unwinding bool
	yield     func(struct{}) bool

	// pending is the operation the process waits to perform.
	pending event
	// sleeping is true while the process waits for wakeAt.
	sleeping bool
	wakeAt   int64
	// stoppedUntil is the end of the process's stop (the stop fault), 0
	// when it is not stopped.
	stoppedUntil int64
	// result is the outcome code of the last operation (0 = success).
	result uint64
	// fsFaults counts the FS errors injected into this process's calls.
	fsFaults int
	// resultText, when set, is the trace's rendering of the last
	// operation's outcome in place of result's errno name (an inspection:
	// "live pid=7 state=Z threads=2"); set only while tracing.
	resultText string
	// traceExtra, when set, is the trace's second path of the last
	// operation (" to=NEW" of a rename or link), printed after its path;
	// set only while tracing. The run hash folds the first path only.
	traceExtra string
	priority   int
	// openOps indexes the process's history operations not yet returned.
	openOps []int
	// panicked holds a non-crash panic of the body, with its stack.
	panicked   any
	panicStack []byte

	// inWriteWindow: the process wrote a new file and its next call is that
	// file's fsync or close (writewindow.go).
	inWriteWindow bool
	// renamedInto lists the directories this process renamed into that no
	// process has fsynced since (the crash-between-rename-and-dir-fsync probe).
	renamedInto []string

	// group is the process's threads (thread.go), nil without threads.
	group *threadGroup

	fsWrapper        procFS
	clockWrapper     procClock
	inspectorWrapper procInspector
	idsWrapper       procIDs
	inspector        lease.Inspector
	// calls is the watched engine call and its cancel stream (cancel.go).
	calls procCalls
	// observed and inspected record the clock reads and PID inspections
	// the process made (observed.go), for oracles only.
	observed  Observed
	inspected map[int]Inspected
}

// Name returns the process's label.
func (p *Proc) Name() string { return p.name }

// FSFaults returns how many FS errors the fserror fault has injected into
// the process's calls so far. An oracle compares two readings to tell
// whether a call's view of the disk was blinded by an injected error
// between them (a decision the engine took without the facts is then its
// documented fallback, not a finding).
func (p *Proc) FSFaults() int { return p.fsFaults }

// ID returns the process's world-unique number (spawn order).
func (p *Proc) ID() int { return p.id }

// Lane returns the process's history lane (client id).
func (p *Proc) Lane() int { return p.lane }

// Host returns the process's host.
func (p *Proc) Host() *Host { return p.host }

// Table returns the process's simproc entry (PID, start ticks, ...).
func (p *Proc) Table() *simproc.Proc { return p.table }

// World returns the process's world.
func (p *Proc) World() *World { return p.world }

// Alive reports whether the process has not ended.
func (p *Proc) Alive() bool { return p.status == procLive }

// FS returns the process's filesystem; every call is a scheduling point.
func (p *Proc) FS() lease.FS { return &p.fsWrapper }

// Clock returns the process's host clock; every call is a scheduling point.
func (p *Proc) Clock() lease.Clock { return &p.clockWrapper }

// Inspector returns the process's view of its host's process table; every
// call is a scheduling point.
func (p *Proc) Inspector() lease.Inspector { return &p.inspectorWrapper }

// IDs returns the process's ID source; every call is a scheduling point.
func (p *Proc) IDs() lease.IDSource { return &p.idsWrapper }

// Spawn starts a process running body on host h. The process first runs at
// a later step chosen by the scheduler.
func (w *World) Spawn(h *Host, spec ProcSpec, body func(p *Proc)) (*Proc, error) {
	if spec.Exe == "" {
		spec.Exe = "/usr/bin/leasekit"
	}
	table, err := h.table.Spawn(simproc.SpawnSpec{Exe: spec.Exe, UID: spec.UID, Namespace: spec.Namespace,
		Threads: spec.Threads, StartTicks: spec.StartTicks, PID: spec.PID})
	if err != nil {
		return nil, fmt.Errorf("sim: spawn %s on %s: %w", spec.Name, h.Name(), err)
	}
	h.noteExe(spec.Exe)
	w.notePID(h, table)
	w.procsTotal++
	w.lanesTotal++
	p := &Proc{world: w, id: w.procsTotal, lane: w.lanesTotal, name: spec.Name, host: h, table: table,
		view: h.volume.fs.View(spec.UID), body: body, status: procLive, pending: event{kind: opStart}}
	if p.name == "" {
		p.name = fmt.Sprintf("p%d", p.id)
	}
	p.draws = w.newProcDraws(p.name)
	p.fsWrapper.p = p
	p.clockWrapper.p = p
	p.inspectorWrapper.p = p
	p.idsWrapper.p = p
	p.inspector = h.table.Inspector(table)
	p.noteLockPID()
	w.procs = append(w.procs, p)
	h.procs = append(h.procs, p)
	w.scheduler.admit(p)
	if w.tracing() {
		w.Tracef("spawn proc=%s host=%s pid=%d ticks=%d lane=%d", p.name, h.Name(), table.PID, table.StartTicks, p.lane)
	}
	return p, nil
}

// pidUse is the last incarnation that used a PID on a host.
type pidUse struct {
	startTicks uint64
	boot       int
}

// notePID fires the PID-reuse probes: a PID used before in this run, in the
// same start tick (indistinguishable by start time), or in an earlier boot.
func (w *World) notePID(h *Host, table *simproc.Proc) {
	key := [2]int{table.NS, table.PID}
	if h.pids == nil {
		h.pids = make(map[[2]int]pidUse)
	}
	if previous, ok := h.pids[key]; ok {
		w.Probe("pid-reused")
		if previous.startTicks == table.StartTicks {
			w.Probe("pid-reused-same-tick")
		}
		if previous.boot != table.Boot {
			w.Probe("pid-reused-across-boot")
		}
	}
	h.pids[key] = pidUse{startTicks: table.StartTicks, boot: table.Boot}
}

func (h *Host) noteExe(exe string) {
	for _, known := range h.exes {
		if known == exe {
			return
		}
	}
	h.exes = append(h.exes, exe)
}

// run is the coroutine body. It returns when the body returns, or when a
// crash unwinds it.
func (p *Proc) run(yield func(struct{}) bool) {
	p.yield = yield
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if p.world.inlineProc == p {
			p.world.inlinePanic = &inlinePanic{value: r, stack: debug.Stack()}
			return
		}
		if r == crashSentinel {
			return
		}
		if p.status != procLive {
			return // a panic while unwinding a kill is the kill's artefact
		}
		p.panicked = r
		p.panicStack = stableStack(debug.Stack())
	}()
	p.body(p)
}

// point is the scheduling point every wrapped call passes first: the process
// announces kind/path and yields; it continues only when the scheduler
// resumes it, and unwinds if it was killed instead.
func (p *Proc) point(kind opKind, path string) {
	if p.status != procLive {
		panic(crashSentinel)
	}
	p.assertRunning()
	if p.calls.active != nil {
		p.calls.active.point()
	}
	p.pending = event{kind: kind, path: path}
	if p.world.continueInline(p) {
		return
	}
	if !p.yield(struct{}{}) {
		panic(crashSentinel)
	}
	if p.status != procLive {
		if p.unwinding {
			panic(crashSentinel) // killed while suspended here
		}
		panic(fmt.Sprintf("sim: dead process %s resumed", p.name))
	}
}

// assertRunning checks that p's own body is the caller: a hook or another
// process using p's environment would break the one-at-a-time discipline.
func (p *Proc) assertRunning() {
	if p.world.running != p {
		panic(fmt.Sprintf("sim: %s's environment used from outside its body", p.name))
	}
}

// Begin records the call of a workload operation on the process's lane and
// returns its handle for End. It is not a scheduling point.
func (p *Proc) Begin(op string, input any) int {
	if p.status != procLive {
		panic(crashSentinel)
	}
	p.assertRunning()
	w := p.world
	w.noteThreadCall(p)
	w.history = append(w.history, Operation{Lane: p.lane, Proc: p.name, Op: op, Input: input, Call: w.now, Return: -1,
		CallOrder: w.nextOrder()})
	index := len(w.history) - 1
	p.openOps = append(p.openOps, index)
	return index
}

// End records the return of the operation Begin returned.
func (p *Proc) End(handle int, output any) {
	if p.status != procLive {
		panic(crashSentinel)
	}
	p.assertRunning()
	w := p.world
	op := &w.history[handle]
	if op.Lane != p.lane || op.Return != -1 {
		panic(fmt.Sprintf("sim: End of operation %d (%s) by %s: not open on this lane", handle, op.Op, p.name))
	}
	op.Output = output
	op.Return = w.now
	op.ReturnOrder = w.nextOrder()
	w.noteCoverage(op)
	if op.Return < op.Call {
		panic(fmt.Sprintf("sim: operation %s returns at %d before its call at %d", op.Op, op.Return, op.Call))
	}
	p.closeOpen(handle)
}

func (p *Proc) closeOpen(handle int) {
	for i, open := range p.openOps {
		if open == handle {
			p.openOps = append(p.openOps[:i], p.openOps[i+1:]...)
			return
		}
	}
	panic(fmt.Sprintf("sim: operation %d is not open", handle))
}

// kill stops a live process's coroutine without letting it act again: its
// open operations become unknown at the current time, its files are closed
// and its timer dropped. The caller runs the exit hooks (w.exited) once the
// world is consistent again.
func (w *World) kill(p *Proc, reason ExitReason) {
	if p.status != procLive {
		panic(fmt.Sprintf("sim: kill of dead process %s", p.name))
	}
	if w.noKills != "" {
		// Invariants and reap hooks may run on a process's own coroutine
		// (step.go), which cannot unwind itself: they observe, and faults,
		// exit hooks and setup kill.
		panic(fmt.Sprintf("sim: %s killed %s; kill from a fault hook, an exit hook or setup", w.noKills, p.name))
	}
	w.noteRenameCrash(p)
	p.status = procDead
	w.unwind(p)
	w.retire(p, reason)
}

// unwind runs a dead process's body to its end: resumed at the point it is
// suspended, it panics with crashSentinel there, which runs the engine's
// defers (every wrapper refuses to act for a dead process). A process that
// never ran has nothing to unwind.
func (w *World) unwind(p *Proc) {
	if p.co == nil {
		return
	}
	p.unwinding = true
	p.co.next()
	w.coroutines.release(p.co)
	p.co = nil
}

// retire removes an ended process from the world.
func (w *World) retire(p *Proc, reason ExitReason) {
	p.status = procDead
	p.sleeping = false
	for _, handle := range p.openOps {
		op := &w.history[handle]
		op.Unknown = true
		op.Return = w.now
		op.ReturnOrder = w.nextOrder()
	}
	p.openOps = p.openOps[:0]
	w.exitProcess(p, reason)
	w.procs = removeProc(w.procs, p)
	p.host.procs = removeProc(p.host.procs, p)
	if w.tracing() {
		w.Tracef("exit proc=%s reason=%v", p.name, reason)
	}
}

// exitTable ends the process in its host's table, leaving a zombie when the
// zombie fault fires.
func (w *World) exitTable(p *Proc) {
	h := p.host
	if !p.draws.exit.Chance(w.plan.probabilities[faultIndexZombie]) {
		h.table.Exit(p.table)
		return
	}
	threads := 1 + p.draws.exit.Intn(3)
	h.table.ExitZombie(p.table, threads)
	w.zombies = append(w.zombies, zombie{host: h, proc: p.table, reapAt: w.step + 1 + p.draws.exit.Intn(zombieStepsMax)})
	w.Probe("zombie")
	if threads > 1 {
		w.Probe("zombie-threads")
	}
	w.Tracef("fault=zombie proc=%s pid=%d threads=%d", p.name, p.table.PID, threads)
}

// zombieStepsMax bounds how long a zombie stays unreaped.
const zombieStepsMax = 1000

func removeProc(procs []*Proc, p *Proc) []*Proc {
	for i, q := range procs {
		if q == p {
			copy(procs[i:], procs[i+1:])
			procs[len(procs)-1] = nil
			return procs[:len(procs)-1]
		}
	}
	panic(fmt.Sprintf("sim: process %s not listed", p.name))
}
