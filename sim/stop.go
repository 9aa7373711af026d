package sim

import (
	"time"

	"github.com/leasekit/leasekit/simproc"
)

// The stop fault: SIGSTOP the chosen process at its scheduling point, and
// SIGCONT it a long virtual time later. While stopped it is alive, only not
// scheduled: simproc shows it in state T, and no engine may judge it stale.
// The stop lasts longer than the engines' guard waits and the workloads'
// timeouts, so that a holder paused inside its fenced work, or holding the
// lease or the guard, meets the world's progress (other acquirers, the
// operator) when it resumes.

// Bounds of one stop's length.
const (
	stopMin  = 50 * time.Millisecond
	stopSpan = 950 // ms beyond stopMin
)

// stop stops p: it does not run again before its stop ends (a sleeper
// keeps its own wake-up if that is later).
func (w *World) stop(p *Proc) {
	until := w.now + int64(stopMin) + int64(p.draws.step.Intn(stopSpan))*int64(time.Millisecond)
	if !p.sleeping || p.wakeAt < until {
		p.wakeAt = until
	}
	p.sleeping = true
	p.stoppedUntil = until
	if p.table.State == simproc.Running { // a zombie leader's threads stop, it shows Z
		p.host.table.Stop(p.table)
	}
	w.stopped = append(w.stopped, p)
	threads := w.stopThreads(p, until)
	w.Probe("stop")
	w.Tracef("fault=stop proc=%s pid=%d until=%d", p.name, p.table.PID, until)
	// The hooks draw from the stop fault's own stream (World.Decisions).
	w.noKills, w.firing = "a stop hook", w.decisions.Stream("fault/"+FaultStop)
	defer func() { w.noKills, w.firing = "", nil }()
	for _, t := range threads {
		for _, f := range w.onStop {
			f(t)
		}
	}
}

// continueStopped continues the stopped processes whose stop has ended
// (SIGCONT); a process killed while stopped is dropped.
func (w *World) continueStopped() {
	if len(w.stopped) == 0 {
		return
	}
	kept := w.stopped[:0]
	for _, p := range w.stopped {
		switch {
		case p.status != procLive:
		case w.now >= p.stoppedUntil:
			if p.table.Stopped { // once for the threads of one process
				p.host.table.Continue(p.table)
			}
			p.stoppedUntil = 0
			w.Probe("stop-continued")
			w.Tracef("fault=continue proc=%s pid=%d", p.name, p.table.PID)
		default:
			kept = append(kept, p)
		}
	}
	clear(w.stopped[len(kept):])
	w.stopped = kept
}

// Stopped reports whether p is stopped now (the stop fault).
func (p *Proc) Stopped() bool { return p.stoppedUntil != 0 && p.status == procLive }

// OnStop registers a function called when the stop fault stops a process,
// outside every process, after the stop: a workload notes what the paused
// process holds, and may spawn (an operator). Like an invariant it must not
// kill. Its draws (World.Decisions) come from the stop fault's stream.
func (w *World) OnStop(f func(p *Proc)) { w.onStop = append(w.onStop, f) }
