package leasework

// Threads (issue 16 item 4). In some runs (drawn from the "threads" stream,
// so runs without threads keep their draws) one worker process runs one or
// two more worker threads: each its own caller with its own Manager, all
// sharing the process's PID and identity. The engine's rule for a second
// acquire by the same process identity is the seed's: the owner is live,
// so the answer is Held, never a second grant; the model (whose Proc is
// the process, sim.Proc.ProcessID) and the ground truth (epoch-increase,
// fenced-exclusive) catch a double hold. When the leader thread returns
// first, the process is a zombie leader with live threads (state Z,
// Threads > 1): alive, so its lease is never reclaimed, and its running
// threads' calls go on (Current works for them).

import (
	"fmt"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
)

// threadsStream keys the draws that decide a run's threads.
const threadsStream = "threads"

// threadedOneIn: one run in threadedOneIn has threads.
const threadedOneIn = 3

// spawnThreads gives one worker process of the run its extra threads.
func (lw *leaseWorld) spawnThreads() error {
	w := lw.world
	d := w.Decisions().Stream(threadsStream)
	if d.Intn(threadedOneIn) != threadedOneIn-1 { // 0, the boring answer (and a replay's), is none
		return nil
	}
	var workers []*sim.Proc
	for _, p := range w.Procs() {
		if len(p.Name()) > 7 && p.Name()[:7] == "worker-" {
			workers = append(workers, p)
		}
	}
	if len(workers) == 0 {
		return nil
	}
	leader := workers[d.Intn(len(workers))]
	for i := range 1 + d.Intn(2) {
		if _, err := w.SpawnThread(leader, fmt.Sprintf("%s-t%d", leader.Name(), i+1), lw.worker); err != nil {
			return err
		}
		lw.workers++
	}
	return nil
}

// noteThreadAcquire fires the thread probes when p begins an acquire, and
// returns the count to restore when it ends.
func (lw *leaseWorld) noteThreadAcquire(p *sim.Proc) func() {
	if len(p.Threads()) == 1 {
		return func() {}
	}
	if lw.acquiring == nil {
		lw.acquiring = map[int]int{}
	}
	if lw.acquiring[p.ProcessID()] > 0 {
		lw.world.Probe("lease-threads-both-acquire")
	}
	lw.acquiring[p.ProcessID()]++
	return func() { lw.acquiring[p.ProcessID()]-- }
}

// noteThreadHeld fires the probes of a Held answer that threads explain:
// the holder is another thread of the caller's process (a second acquire by
// the same identity), or a thread of a zombie leader.
func (lw *leaseWorld) noteThreadHeld(p *sim.Proc, owner lease.Owner) {
	holder := lw.acquirer[owner.Generation]
	if holder == nil || len(holder.Threads()) == 1 {
		return
	}
	if holder != p && holder.ProcessID() == p.ProcessID() {
		lw.world.Probe("lease-threads-held-by-own-process")
	}
	if t := holder.Table(); t.State == simproc.Zombie && t.Threads > 1 {
		lw.world.Probe("lease-held-by-zombie-leader-process")
	}
}
