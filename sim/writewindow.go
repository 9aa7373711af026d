package sim

import "github.com/leasekit/leasekit/lease"

// The write window: a power loss aimed at a file written but not yet
// fsynced. The engines write every record to a new
// file (O_CREATE|O_EXCL), fsync it, and only then name it, so what a power
// loss can tear is a temp between its write and its fsync. A power loss
// drawn at a uniform step almost never lands there (about one power loss in
// a hundred found an unsynced temp), so at the step that would run such a
// writer's fsync (or close), on a host whose volume only it mounts, the
// power-loss draw uses writeWindowBoost times the plan's probability and
// cuts that host's power. The draw is the writer's own step draw, as ever
// (only its probability changes), so one process's change does not move
// another's power losses. The plan still rules: a seed whose plan has no
// power loss gets none. The tear itself is simfs's (CRASHMODEL.md, "Torn
// data"), decided at the power loss; the window costs a flag test per step
// and a store per write of a new file.

// ProbePowerLossInWriteWindow fires when a power loss struck a host at the
// step that would have run the fsync of a new file one of its processes
// had written.
const ProbePowerLossInWriteWindow = "powerloss-in-write-window"

// writeWindowBoost multiplies the power-loss probability in the window.
const writeWindowBoost = 32

// createsFile reports whether an open creates a new file (a temp).
func createsFile(flag lease.OpenFlag) bool {
	return flag&(lease.O_CREATE|lease.O_EXCL) == lease.O_CREATE|lease.O_EXCL
}

// noteFreshWrite opens p's window after it wrote a new file, when a power
// loss of p's host can tear it (the volume is p's host's alone).
func (p *Proc) noteFreshWrite(err error) {
	p.inWriteWindow = err == nil && len(p.host.volume.hosts) == 1
}

// powerLossProbability is the plan's, boosted in the window of the step's
// process.
func (w *World) powerLossProbability() float64 {
	p := w.plan.probabilities[faultIndexPowerLoss]
	if w.stepProc.inWriteWindow && w.stepProc.status == procLive {
		return min(1, p*writeWindowBoost)
	}
	return p
}

// powerLossTarget is the host a fired power loss cuts: drawn, or, in the
// window, the writer's (the draw is made either way, so the stream does
// not shift).
func (w *World) powerLossTarget() *Host {
	h := w.hosts[w.firing.Intn(len(w.hosts))]
	if p := w.stepProc; p.inWriteWindow && p.status == procLive {
		h = p.host
		w.Probe(ProbePowerLossInWriteWindow)
	}
	return h
}
