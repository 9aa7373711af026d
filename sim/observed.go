package sim

import (
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simproc"
)

// Observed is what a process learned through its env wrappers about its
// host's wall clock and process table: an oracle names the hazard behind a
// finding only when the process under test could have seen it (a clock step
// it read, a reused PID it inspected). Keeping the record draws nothing,
// folds nothing into state keys and adds no scheduling point: no run
// changes.
type Observed struct {
	// Calls counts the process's recorded observations (clock reads and
	// PID inspections) so far; an oracle notes it before a call and
	// compares afterwards to tell the observations made during the call.
	Calls int
	// WallReads counts the process's Clock().Now calls.
	WallReads int
	// WallStepsSeen is its host's clock-step count (Host.ClockSteps) at
	// the process's last Clock().Now call: the steps the process has read
	// the clock after.
	WallStepsSeen int
	// LastInspection is the process's latest liveness check of a PID.
	LastInspection Inspected
}

// Inspected is one liveness check of a PID (Inspector.Inspect), with the
// answer the process got and the ground truth at that moment.
type Inspected struct {
	// Call is Observed.Calls after this check; 0 means no check.
	Call int
	PID  int
	Kind lease.InspectionKind
	// Diagnostic is the reason of an unknown answer (EACCES on ...).
	Diagnostic string
	// Entry is a copy of the process-table entry the PID named in the
	// inspecting process's namespace when it was inspected; Found is
	// false when no process had the PID.
	Entry simproc.Proc
	Found bool
	// At is the simulated time of the check.
	At int64
}

// Observed returns the process's record of what it observed.
func (p *Proc) Observed() Observed { return p.observed }

// Inspection returns the process's latest liveness check of pid.
func (p *Proc) Inspection(pid int) (Inspected, bool) {
	in, ok := p.inspected[pid]
	return in, ok
}

// ClockSteps returns how many times the host's wall clock has stepped.
func (h *Host) ClockSteps() int { return h.clockSteps }

// noteWallRead records a Clock().Now call.
func (p *Proc) noteWallRead() {
	p.observed.Calls++
	p.observed.WallReads++
	p.observed.WallStepsSeen = p.host.clockSteps
}

// noteInspected records a liveness check of pid and its answer. Every
// wrapper through which a process probes another PID's liveness (today
// Inspector.Inspect; a kill(pid, 0) in env would be another) records here,
// so that oracles see the check.
func (p *Proc) noteInspected(pid int, answer lease.Inspection) {
	p.observed.Calls++
	in := Inspected{Call: p.observed.Calls, PID: pid, Kind: answer.Kind, Diagnostic: answer.Diagnostic, At: p.world.now}
	if entry := p.host.table.Lookup(p.table.NS, pid); entry != nil {
		in.Entry, in.Found = *entry, true
	}
	if p.inspected == nil {
		p.inspected = make(map[int]Inspected)
	}
	p.inspected[pid] = in
	p.observed.LastInspection = in
}
