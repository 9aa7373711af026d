package admissionwork

// Threads: in one run of workkit.ThreadedOneIn one
// controller process runs one or two more controller threads, each with
// its own handles, all sharing the process's identity. A thread's Acquire
// while another thread of its process holds the slot meets a live owner
// (its own process) and must answer active, never a second admission; the
// model's Proc is the process (sim.Proc.ProcessID), so a double hold is a
// linearizability failure. A zombie leader whose threads run holds its slot
// alive: active, never recovered.

import (
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// spawnThreads gives one controller process its extra threads.
func (aw *admissionWorld) spawnThreads() error {
	threads, err := workkit.SpawnThreads(aw.world, "controller-", func(*sim.Proc, int) func(*sim.Proc) { return aw.controller })
	aw.controllers += len(threads)
	return err
}

// noteHolding records whether thread p holds a handle now.
func (aw *admissionWorld) noteHolding(p *sim.Proc, mine *handle) {
	if len(p.Threads()) == 1 {
		return
	}
	if aw.holding == nil {
		aw.holding = map[*sim.Proc]bool{}
	}
	aw.holding[p] = mine != nil
}

// enterAcquire fires admission-threads-both-acquire when p begins an
// Acquire while another thread of its process is in one.
func (aw *admissionWorld) enterAcquire(p *sim.Proc) func() {
	if aw.acquiring == nil {
		aw.acquiring = workkit.ThreadCalls{}
	}
	both, leave := aw.acquiring.Enter(p)
	if both {
		aw.world.Probe("admission-threads-both-acquire")
	}
	return leave
}

// noteThreadAcquired fires the probes of an active answer that threads
// explain: another thread of p's own process holds the slot, or the holder
// (of any process) is a thread of a zombie leader, alive.
func (aw *admissionWorld) noteThreadAcquired(p *sim.Proc, kind models.AdmissionAcquireKind) {
	if kind != models.AdmissionActive || len(aw.holding) == 0 {
		return
	}
	for _, t := range aw.holders() {
		if t != p && t.ProcessID() == p.ProcessID() {
			aw.world.Probe("admission-threads-active-own-process")
		}
		if t.ZombieLeader() {
			aw.world.Probe("admission-active-zombie-leader-process")
		}
	}
}

// holders returns the live threads holding a handle, in spawn order.
func (aw *admissionWorld) holders() []*sim.Proc {
	var holders []*sim.Proc
	for _, p := range aw.world.Procs() {
		if aw.holding[p] {
			holders = append(holders, p)
		}
	}
	return holders
}

// threadProbes are the admission workload's declared thread probes.
var threadProbes = append([]string{"admission-threads-both-acquire", "admission-threads-active-own-process",
	"admission-active-zombie-leader-process"}, workkit.ThreadProbes...)
