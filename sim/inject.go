package sim

import (
	"fmt"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/simproc"
)

// globalFaults draws the per-step faults that are not about the chosen
// process: power loss, PID churn, executable upgrade, clock step, and the
// workload's hooks, in that order (the global fault indices). Each is its own
// draw, and 0 means "no fault".
func (w *World) globalFaults() { w.globalFaultsFrom(0) }

// globalFaultsFrom draws and fires the global faults from index first on.
func (w *World) globalFaultsFrom(first int) {
	for {
		fired, ok := w.drawGlobalFaults(first)
		if !ok {
			return
		}
		w.fireGlobalFault(fired)
		first = fired + 1
	}
}

// drawGlobalFaults draws the global faults from index first on until one
// fires, and returns its index (ok false when none did) without firing it:
// an inline step (step.go) cannot fire a fault on a process's coroutine, so
// it hands the fired one to the main loop, which fires it and draws the rest.
func (w *World) drawGlobalFaults(first int) (fired int, ok bool) {
	return w.stepProc.draws.step.firstChance(w.drawnGlobalFaults(), first)
}

// drawnGlobal is a global fault whose probability is above 0: the others
// draw nothing (Decisions.Chance), so a step need not ask them.
type drawnGlobal struct {
	index       int
	probability float64
}

// drawnGlobalFaults lists the global faults a step draws, in index order:
// kept in w.drawnGlobals, which FaultHook and StopFaults drop (nil: stale),
// since every step draws them all. Only the power loss's probability
// changes from step to step (the write window boosts it for the step's
// writer, writewindow.go), and only when the plan's is above 0, so the list
// is kept and that one entry is refreshed at every step.
func (w *World) drawnGlobalFaults() []drawnGlobal {
	if w.drawnGlobals == nil {
		w.drawnGlobals = make([]drawnGlobal, 0, w.globalFaultCount())
		for i := range w.globalFaultCount() {
			if p := w.globalFaultProbability(i); p > 0 {
				w.drawnGlobals = append(w.drawnGlobals, drawnGlobal{index: i, probability: p})
			}
		}
	}
	if len(w.drawnGlobals) > 0 && w.drawnGlobals[0].index == globalPowerLoss {
		w.drawnGlobals[0].probability = w.powerLossProbability()
	}
	return w.drawnGlobals
}

// The global faults the world itself draws, before the workload's hooks.
const (
	globalPowerLoss = iota
	globalPIDChurn
	globalUpgrade
	globalClockStep
	globalBuiltins
)

// globalFaultName is global fault i's fault name (its firing's stream key).
func (w *World) globalFaultName(i int) string {
	switch i {
	case globalPowerLoss:
		return FaultPowerLoss
	case globalPIDChurn:
		return FaultPIDChurn
	case globalUpgrade:
		return FaultUpgrade
	case globalClockStep:
		return FaultClockStep
	}
	return faultSpecs[w.hooks[i-globalBuiltins].index].name
}

func (w *World) globalFaultCount() int { return globalBuiltins + len(w.hooks) }

func (w *World) globalFaultProbability(i int) float64 {
	switch i {
	case globalPowerLoss:
		return w.powerLossProbability()
	case globalPIDChurn:
		return w.plan.probabilities[faultIndexPIDChurn]
	case globalUpgrade:
		return w.plan.probabilities[faultIndexUpgrade]
	case globalClockStep:
		return w.plan.probabilities[faultIndexClockStep]
	}
	return w.plan.probabilities[w.hooks[i-globalBuiltins].index]
}

// fireGlobalFault applies global fault i, whose draw said yes.
func (w *World) fireGlobalFault(i int) {
	w.firing = w.decisions.Stream("fault/" + w.globalFaultName(i))
	defer func() { w.firing = nil }()
	switch i {
	case globalPowerLoss:
		w.PowerLoss(w.powerLossTarget())
	case globalPIDChurn:
		w.churn(w.hosts[w.firing.Intn(len(w.hosts))])
	case globalUpgrade:
		w.upgrade(w.hosts[w.firing.Intn(len(w.hosts))])
	case globalClockStep:
		w.clockStep(w.hosts[w.firing.Intn(len(w.hosts))])
	default:
		hook := w.hooks[i-globalBuiltins]
		w.Probe(faultSpecs[hook.index].name)
		if w.tracing() {
			w.Tracef("fault=%s", faultSpecs[hook.index].name)
		}
		hook.fire(w)
	}
}

// upgrade replaces one of h's executables on disk (a package upgrade).
func (w *World) upgrade(h *Host) {
	if len(h.exes) == 0 {
		return
	}
	exe := h.exes[w.draws().Intn(len(h.exes))]
	h.table.UpgradeExe(exe)
	w.Probe("upgrade")
	w.Tracef("fault=upgrade host=%s exe=%s", h.Name(), exe)
}

// PowerLoss cuts a host's power and reboots it: every process on it dies
// (its open operations become unknown), the boot id changes, PIDs restart,
// the monotonic clock restarts, and the host's volume is reduced to a crash
// state. A volume shared with other hosts (a network mount) survives: its
// server did not lose power, only this client's processes and open files.
//
// It must be called from outside every simulated process (a fault hook, an
// exit hook), never from a process body.
func (w *World) PowerLoss(h *Host) {
	if w.running != nil {
		panic(fmt.Sprintf("sim: PowerLoss of %s called from inside process %s", h.Name(), w.running.name))
	}
	afters := w.beforePowerLoss(h)
	victims := append([]*Proc(nil), h.procs...)
	for _, p := range victims {
		w.kill(p, ExitPowerLoss)
	}
	for _, z := range w.zombies {
		if z.host == h && z.proc.State == simproc.Zombie {
			w.reaped(h, z.proc) // the reboot ends it; reapZombies drops it later
		}
	}
	h.table.Reboot(w.newBootID())
	h.bootAt = w.now
	mode := "shared-survives"
	if len(h.volume.hosts) == 1 {
		mode = h.volume.fs.PowerLoss(w.draws())
	}
	w.afterPowerLoss(afters)
	w.Probe("powerloss")
	w.Tracef("fault=powerloss host=%s boot=%s fs=%s killed=%d", h.Name(), h.table.BootID(), mode, len(victims))
	for _, p := range victims {
		w.exited(p, ExitPowerLoss)
	}
}

// beforePowerLoss runs the OnPowerLoss hooks for h and returns what they
// want run after the crash.
func (w *World) beforePowerLoss(h *Host) []func() {
	var afters []func()
	w.inPowerLossHook(func() {
		for _, f := range w.onPowerLoss {
			if after := f(h); after != nil {
				afters = append(afters, after)
			}
		}
	})
	return afters
}

// afterPowerLoss runs what the OnPowerLoss hooks returned.
func (w *World) afterPowerLoss(afters []func()) {
	w.inPowerLossHook(func() {
		for _, after := range afters {
			after()
		}
	})
}

// inPowerLossHook runs hooks as observers: a kill from them panics.
func (w *World) inPowerLossHook(hooks func()) {
	saved := w.noKills
	w.noKills = "a power-loss hook"
	defer func() { w.noKills = saved }()
	hooks()
}

// churn spawns and reaps many short processes on h to push the PID cursor
// round, so that the next spawns reuse PIDs of dead owners.
func (w *World) churn(h *Host) {
	ns := w.draws().Intn(h.table.NamespaceCount())
	n := 1 + w.draws().Intn(min(h.table.PIDMax()-1, churnMax))
	if err := h.table.Churn(ns, n); err != nil {
		w.Probe("pid-exhausted")
	}
	w.Probe("pidchurn")
	if w.tracing() {
		w.Tracef("fault=pidchurn host=%s ns=%d n=%d", h.Name(), ns, n)
	}
}

// clockStep steps h's wall clock forward or backward (the monotonic clock is
// untouched, as with an NTP step).
func (w *World) clockStep(h *Host) {
	seconds := int64(1 + w.draws().Intn(clockStepSecondsMax))
	if w.draws().Intn(2) == 1 {
		seconds = -seconds
	}
	h.wallOffset += seconds * int64(time.Second)
	h.clockSteps++
	w.Probe("clockstep")
	w.Probe(clockStepProbe(seconds))
	w.Tracef("fault=clockstep host=%s by=%ds", h.Name(), seconds)
}

// The clock step's direction probes (wall-clock steps both
// ways): engines must neither trust nor be stopped by a wall clock that
// jumps back or ahead of the records they wrote.
const (
	ProbeClockStepForward  = "clockstep-forward"
	ProbeClockStepBackward = "clockstep-backward"
)

func clockStepProbe(seconds int64) string {
	if seconds < 0 {
		return ProbeClockStepBackward
	}
	return ProbeClockStepForward
}

// reapZombies reaps the zombies whose time has come.
func (w *World) reapZombies() {
	if len(w.zombies) == 0 {
		return // the common step
	}
	w.noKills = "a reap hook"
	defer func() { w.noKills = "" }()
	kept := w.zombies[:0]
	for _, z := range w.zombies {
		switch {
		case z.proc.State != simproc.Zombie: // a reboot already removed it
		case w.step >= z.reapAt:
			z.host.table.Reap(z.proc)
			w.reaped(z.host, z.proc)
		default:
			kept = append(kept, z)
		}
	}
	w.zombies = kept
}

// reaped runs the workload's reap hooks.
func (w *World) reaped(h *Host, proc *simproc.Proc) {
	for _, f := range w.onReap {
		f(h, proc)
	}
}

// fsErrnos are the errors the fserror fault injects.
var fsErrnos = []syscall.Errno{syscall.EIO, syscall.ENOSPC}

// injectFSError is the volumes' injector: while a process runs, each FS
// operation fails with the plan's fserror probability (a harness view,
// Volume.Root or Volume.FS, never asks).
func (w *World) injectFSError(kind, path string) error {
	if w.running == nil {
		return nil
	}
	if !w.running.draws.io.Chance(w.plan.probabilities[faultIndexFSError]) {
		return nil
	}
	errno := fsErrnos[w.running.draws.io.Intn(len(fsErrnos))]
	w.running.calls.noteFault(kind, path)
	w.running.fsFaults++
	w.Probe("fserror")
	w.Tracef("fault=fserror proc=%s op=%s path=%s errno=%v", w.running.name, kind, path, errno)
	return errno
}
