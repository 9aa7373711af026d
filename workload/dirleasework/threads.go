package dirleasework

// Threads: in one run of workkit.ThreadedOneIn one
// creator or recoverer process runs one or two more threads: its first
// extra thread takes the other role (a recoverer thread in a creator's
// process, or the reverse), the second the leader's. They share the
// process's identity, so a recovery pass by one thread meets directories
// its own process (another thread) owns alive, and must leave them; two
// creator threads lease directories side by side. A zombie leader whose
// threads run owns its directories alive. The model's Proc is the process
// (sim.Proc.ProcessID); the ground truth's liveness is the process's
// (workkit.LifeLedger).

import (
	"strings"

	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// spawnThreads gives one creator or recoverer process its extra threads.
func (dw *dirWorld) spawnThreads() error {
	threads, err := workkit.SpawnThreads(dw.world, "", func(leader *sim.Proc, i int) func(*sim.Proc) {
		creator := strings.HasPrefix(leader.Name(), "creator-")
		if i == 1 {
			creator = !creator
		}
		if creator {
			return dw.creator
		}
		return dw.recoverer
	})
	dw.creators += len(threads)
	return err
}

// enterCreate fires dirlease-threads-both-create when p begins a Create
// while another thread of its process is in one.
func (dw *dirWorld) enterCreate(p *sim.Proc) func() {
	if dw.threadCreates == nil {
		dw.threadCreates = workkit.ThreadCalls{}
	}
	both, leave := dw.threadCreates.Enter(p)
	if both {
		dw.world.Probe("dirlease-threads-both-create")
	}
	return leave
}

// noteThreadRecover fires the probes of a recovery pass that meets a
// directory another thread of its own process owns (created, still
// claimed): alive, to be left alone; and the same with that process's
// leader a zombie.
func (dw *dirWorld) noteThreadRecover(p *sim.Proc) {
	if len(p.Threads()) == 1 {
		return
	}
	for _, t := range dw.sortedTracks() {
		if !t.claimed || !t.created || t.owner == p || t.owner.ProcessID() != p.ProcessID() {
			continue
		}
		dw.world.Probe("dirlease-recover-meets-own-process")
		if p.ZombieLeader() {
			dw.world.Probe("dirlease-recover-meets-zombie-leader-process")
		}
		return
	}
}

// threadProbes are the dirlease workload's declared thread probes.
var threadProbes = append([]string{"dirlease-threads-both-create", "dirlease-recover-meets-own-process",
	"dirlease-recover-meets-zombie-leader-process"}, workkit.ThreadProbes...)
