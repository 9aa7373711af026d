package sim

import "github.com/leasekit/leasekit/lease"

// The write window: a power loss aimed at a file written but not yet
// fsynced (issue 16, torn records). The engines write every record to a new
// file (O_CREATE|O_EXCL), fsync it, and only then name it, so what a power
// loss can tear is a temp in the few steps between its write and its fsync.
// A power loss drawn at a uniform step almost never lands there (about one
// power loss in a hundred found an unsynced temp), so while a process on a
// host whose volume only it mounts has such a write outstanding, the
// power-loss draw uses writeWindowBoost times the plan's probability and
// cuts that host's power. The plan still rules: a seed whose plan has no
// power loss gets none. The tear itself is simfs's (CRASHMODEL.md, "Torn
// data"), decided at the power loss; the window only costs a compare per
// step and a store per write of a new file.

// ProbePowerLossInWriteWindow fires when a power loss struck a host while
// one of its processes had written a new file and not yet fsynced it.
const ProbePowerLossInWriteWindow = "powerloss-in-write-window"

// writeWindowBoost multiplies the power-loss probability inside the window;
// writeWindowSteps bounds the window (a writer that crashed or stopped
// before its fsync leaves its file unsynced, but the aim stops there).
const (
	writeWindowBoost = 16
	writeWindowSteps = 8
)

// writeWindow is the host of the last write of a new file not yet fsynced
// or closed, and the step the aim ends.
type writeWindow struct {
	host  *Host
	until int
}

// createsFile reports whether an open creates a new file (a temp).
func createsFile(flag lease.OpenFlag) bool {
	return flag&(lease.O_CREATE|lease.O_EXCL) == lease.O_CREATE|lease.O_EXCL
}

// noteFreshWrite opens the window after p wrote a new file, when a power
// loss of p's host can tear it (its volume is p's host's alone).
func (w *World) noteFreshWrite(p *Proc, err error) {
	if err != nil || len(p.host.volume.hosts) != 1 {
		return
	}
	w.window = writeWindow{host: p.host, until: w.step + writeWindowSteps}
}

// closeWriteWindow ends the window of p's host (its fsync or close ran).
func (w *World) closeWriteWindow(p *Proc) {
	if w.window.host == p.host {
		w.window = writeWindow{}
	}
}

// powerLossProbability is the plan's, boosted inside the write window.
func (w *World) powerLossProbability() float64 {
	p := w.plan.probabilities[faultIndexPowerLoss]
	if w.window.host != nil && w.step < w.window.until {
		return min(1, p*writeWindowBoost)
	}
	return p
}

// powerLossTarget is the host a fired power loss cuts: drawn, or the
// window's while it is open (the draw is made either way, so the stream
// does not shift).
func (w *World) powerLossTarget() *Host {
	h := w.hosts[w.firing.Intn(len(w.hosts))]
	if w.window.host != nil && w.step < w.window.until {
		h = w.window.host
		w.Probe(ProbePowerLossInWriteWindow)
	}
	w.window = writeWindow{}
	return h
}
