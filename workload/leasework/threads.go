package leasework

// Threads. In some runs (drawn from the "threads" stream,
// so runs without threads keep their draws) one worker process runs one or
// two more worker threads: each its own caller with its own Manager, all
// sharing the process's PID and identity. The engine's rule for a second
// acquire by the same process identity is the original implementation's: the owner is live,
// so the answer is Held, never a second grant; the model (whose Proc is
// the process, sim.Proc.ProcessID) and the ground truth (epoch-increase,
// fenced-exclusive) catch a double hold. When the leader thread returns
// first, the process is a zombie leader with live threads (state Z,
// Threads > 1): alive, so its lease is never reclaimed, and its running
// threads' calls go on (Current works for them).

import (
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// spawnThreads gives one worker process of the run its extra threads.
func (lw *leaseWorld) spawnThreads() error {
	threads, err := workkit.SpawnThreads(lw.world, "worker-", func(*sim.Proc, int) func(*sim.Proc) { return lw.worker })
	lw.workers += len(threads)
	return err
}

// noteThreadAcquire fires lease-threads-both-acquire when p begins an
// acquire while another thread of its process is in one; the returned func
// notes its end.
func (lw *leaseWorld) noteThreadAcquire(p *sim.Proc) func() {
	if lw.acquiring == nil {
		lw.acquiring = workkit.ThreadCalls{}
	}
	both, leave := lw.acquiring.Enter(p)
	if both {
		lw.world.Probe("lease-threads-both-acquire")
	}
	return leave
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
	if holder.ZombieLeader() {
		lw.world.Probe("lease-held-by-zombie-leader-process")
	}
}

// threadProbes are the lease workload's declared thread probes.
var threadProbes = append([]string{"lease-threads-both-acquire", "lease-threads-held-by-own-process",
	"lease-held-by-zombie-leader-process"}, workkit.ThreadProbes...)
