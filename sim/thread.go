package sim

import (
	"fmt"

	"github.com/leasekit/leasekit/simproc"
)

// Threads. A simulated process can run several concurrent callers: each
// thread is a Proc of its own (its own coroutine, scheduling points, lane,
// and decision streams keyed by its name), and all of them share the
// process's simproc entry (PID, start time, executable, boot: one
// ProcessIdentity) and its open files. The scheduler runs them one at a
// time like any processes, so two threads can be inside engine calls at
// once. What is the process's is the whole group's:
//   - a crash (SIGKILL) kills every thread; a power loss kills them all too;
//   - the stop fault (SIGSTOP) stops every thread;
//   - a thread that returns leaves the others running; when the leader (the
//     thread the process was spawned with) returns first, the process
//     becomes a zombie leader with live threads (state Z, Threads > 1 in
//     /proc), alive, whose threads go on calling the engines;
//   - the process exits when its last thread does: its files close, and its
//     table entry ends (a zombie leader is reaped then).
//
// Probes: ProbeThreadsTwoCallers when a thread begins an operation while
// another thread of its process has one open; ProbeZombieLeaderThreads
// when a thread begins one while its leader is a zombie.
const (
	ProbeThread              = "thread"
	ProbeThreadsTwoCallers   = "threads-two-callers"
	ProbeThreadLeaderExited  = "thread-leader-exited"
	ProbeZombieLeaderThreads = "zombie-leader-threads-running"
)

// threadGroup is a process's threads.
type threadGroup struct {
	leader *Proc
	// live lists the threads not yet ended, in spawn order.
	live []*Proc
	// all lists every thread the process ran.
	all []*Proc
	// lastExit is the world step at which a thread last left live (-1:
	// none yet): Call.SiblingsDuring asks whether one ended mid-call.
	lastExit int
}

// SpawnThread starts another thread of p's process running body. Like
// Spawn it is called from setup or a hook, outside every process; the
// thread first runs at a later step chosen by the scheduler. Its name must
// be unique in the world (it keys the thread's decision streams).
func (w *World) SpawnThread(p *Proc, name string, body func(t *Proc)) (*Proc, error) {
	if w.running != nil {
		panic(fmt.Sprintf("sim: SpawnThread of %s called from inside process %s", p.name, w.running.name))
	}
	if p.status != procLive || p.table.State != simproc.Running {
		return nil, fmt.Errorf("sim: thread %s of %s: the process is not running", name, p.name)
	}
	if p.group == nil {
		p.group = &threadGroup{leader: p, live: []*Proc{p}, all: []*Proc{p}, lastExit: -1}
	}
	h := p.host
	h.table.AddThread(p.table)
	w.procsTotal++
	w.lanesTotal++
	t := &Proc{world: w, id: w.procsTotal, lane: w.lanesTotal, name: name, host: h, table: p.table,
		view: p.view, body: body, status: procLive, pending: event{kind: opStart}, group: p.group}
	t.draws = w.newProcDraws(t.name)
	t.fsWrapper.p = t
	t.clockWrapper.p = t
	t.inspectorWrapper.p = t
	t.idsWrapper.p = t
	t.inspector = h.table.Inspector(t.table)
	p.group.live = append(p.group.live, t)
	p.group.all = append(p.group.all, t)
	w.procs = append(w.procs, t)
	h.procs = append(h.procs, t)
	w.scheduler.admit(t)
	w.Probe(ProbeThread)
	w.Tracef("spawn-thread proc=%s of=%s pid=%d lane=%d", t.name, p.name, p.table.PID, t.lane)
	return t, nil
}

// Leader returns the thread the process was spawned with (p itself for a
// process without threads).
func (p *Proc) Leader() *Proc {
	if p.group == nil {
		return p
	}
	return p.group.leader
}

// ProcessID returns the world-unique number of p's process: its leader's
// ID. A workload names the process (not the thread) by it wherever the
// engines' identity rules do (an owner, a death).
func (p *Proc) ProcessID() int { return p.Leader().id }

// Threads returns every thread p's process ran, leader first (p alone for
// a process without threads). The caller must not modify the slice.
func (p *Proc) Threads() []*Proc {
	if p.group == nil {
		return []*Proc{p}
	}
	return p.group.all
}

// SiblingsLive reports whether another thread of p's process is alive:
// the threads share its identity, so what one of them leaves on disk
// names the others too.
func (p *Proc) SiblingsLive() bool {
	if p.group == nil {
		return false
	}
	for _, t := range p.group.live {
		if t != p {
			return true
		}
	}
	return false
}

// siblingEndedSince reports whether a thread of p's process ended at or
// after step (p itself is running, so it was another thread).
func (p *Proc) siblingEndedSince(step int) bool {
	return p.group != nil && p.group.lastExit >= step
}

// ProcessEnded reports whether every thread of p's process has ended: a
// thread that returned while others run has not ended its process.
func (p *Proc) ProcessEnded() bool {
	if p.group == nil {
		return p.status != procLive
	}
	return len(p.group.live) == 0
}

// threadsOf returns the live threads of p's process, p first.
func (w *World) threadsOf(p *Proc) []*Proc {
	if p.group == nil || len(p.group.live) <= 1 {
		return []*Proc{p}
	}
	threads := []*Proc{p}
	for _, t := range p.group.live {
		if t != p {
			threads = append(threads, t)
		}
	}
	return threads
}

// exitProcess ends what p's death ends of its process: for the last thread
// (or a process without threads) its files and its table entry; for a
// thread that returned while others run, its count in the table (a leader
// returning first leaves a zombie leader). A thread killed while others
// live ends nothing: the kill of the group goes on to them (Crash,
// PowerLoss).
func (w *World) exitProcess(p *Proc, reason ExitReason) {
	if g := p.group; g != nil {
		g.live = removeProc(g.live, p)
		g.lastExit = w.step
		if len(g.live) > 0 {
			if reason == ExitFinished {
				w.threadReturned(p)
			}
			return
		}
	}
	p.host.volume.fs.CloseAll(p.view)
	switch {
	case reason == ExitPowerLoss:
	case p.table.State == simproc.Zombie: // its leader returned first
		p.host.table.Reap(p.table)
		w.Tracef("exit-thread-group proc=%s pid=%d reaped", p.name, p.table.PID)
	default:
		w.exitTable(p)
	}
}

// threadReturned counts a thread's return while others of its process run.
func (w *World) threadReturned(p *Proc) {
	h := p.host
	if p == p.group.leader {
		h.table.ExitZombie(p.table, p.table.Threads)
		w.Probe(ProbeThreadLeaderExited)
		w.Tracef("thread-leader-exited proc=%s pid=%d threads=%d", p.name, p.table.PID, p.table.Threads)
		return
	}
	h.table.ThreadExit(p.table)
}

// noteThreadCall fires the thread probes when p begins an operation.
func (w *World) noteThreadCall(p *Proc) {
	if p.group == nil {
		return
	}
	if p.table.State == simproc.Zombie && p != p.group.leader {
		w.Probe(ProbeZombieLeaderThreads)
	}
	for _, t := range p.group.live {
		if t != p && len(t.openOps) > 0 {
			w.Probe(ProbeThreadsTwoCallers)
			return
		}
	}
}

// stopThreads stops p's other live threads with p (SIGSTOP stops a whole
// process) until the same time, and lists them for continueStopped.
func (w *World) stopThreads(p *Proc, until int64) []*Proc {
	threads := w.threadsOf(p)
	for _, t := range threads[1:] {
		if !t.sleeping || t.wakeAt < until {
			t.wakeAt = until
		}
		t.sleeping = true
		t.stoppedUntil = until
		w.stopped = append(w.stopped, t)
	}
	return threads
}

// Keyed reports whether d's source is split into streams by site. A
// single-stream source (a list recorded before the streams were keyed, an
// exhaustive enumeration) hands every site the next answer of one list, so
// a new draw there would shift every later one: a feature drawn from its
// own stream (threads) is left out of such runs.
func (d *Decisions) Keyed() bool { return !d.log.single }

// ZombieLeader reports whether p's process is a zombie leader with live
// threads: its leader returned while other threads run.
func (p *Proc) ZombieLeader() bool { return p.table.State == simproc.Zombie && p.table.Threads > 1 }
