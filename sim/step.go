package sim

import "fmt"

// A step is: choose a process, move the clock, reap zombies, continue the
// stopped processes whose stop ended, draw the global faults, draw the
// chosen process's crash, then its stop, resume it to its next
// scheduling point, then fold the step into the hash, and check the
// invariants. The main loop (runSteps) runs steps one phase after another.
//
// Most steps resume the process that ran the step before (about 80% in a
// lease campaign: PCT keeps the highest-priority process running), and the
// two coroutine switches around such a step cost about a tenth of a
// campaign's CPU. So when a process reaches its next scheduling point, it
// runs the end of its step and the start of the next one itself, on its own
// coroutine (continueInline), and goes on without switching while the next
// step is again its own and quiet: no fault and no crash drawn, no finding.
// Anything else hands the step to the main loop at the phase it reached
// (w.phase), which carries on from there. Either way every draw is made in
// the same order by the same code, so a run is the same step for step; only
// a traced run never goes inline, so its trace lines keep their place, and
// a test holds traced and untraced runs to the same hashes and decisions.

// stepPhase is where the main loop takes up the current step.
type stepPhase uint8

const (
	// phaseStart: the step has not begun; check for the end of the run,
	// then choose its process.
	phaseStart stepPhase = iota
	// phaseChosen: w.stepProc is chosen; move the clock and draw faults.
	phaseChosen
	// phaseFault: the global fault w.faultFired was drawn yes and not fired.
	phaseFault
	// phaseCrash: the chosen process's crash was drawn yes.
	phaseCrash
	// phaseStop: the chosen process's stop was drawn yes.
	phaseStop
	// phaseRan: the chosen process ran its step (or died in it).
	phaseRan
	// phaseEnd: the run ended with w.endOutcome and w.endMessage.
	phaseEnd
)

// runSteps runs steps until the run ends, and returns how it ended.
func (w *World) runSteps() (Outcome, string) {
	w.step, w.phase = 0, phaseStart
	if w.keyer != nil {
		w.keyer.start = w.decisions.Len()
	}
	for {
		switch w.phase {
		case phaseStart:
			if w.runEnded() {
				return w.endOutcome, w.endMessage
			}
			w.stepProc, w.phase = w.choose(), phaseChosen
		case phaseChosen:
			w.moveClockAndReap()
			w.globalFaults()
			w.runChosen()
		case phaseFault:
			w.fireGlobalFault(w.faultFired)
			w.globalFaultsFrom(w.faultFired + 1)
			w.runChosen()
		case phaseCrash:
			w.Crash(w.stepProc)
			w.phase = phaseRan
		case phaseStop:
			w.stop(w.stepProc)
			w.phase = phaseRan
		case phaseRan:
			w.endStep(w.stepProc)
		case phaseEnd:
			return w.endOutcome, w.endMessage
		default:
			panic(fmt.Sprintf("sim: step phase %d", w.phase))
		}
	}
}

// runEnded checks, at the start of a step, whether the run is over: every
// process gone, or the step budget spent.
func (w *World) runEnded() bool {
	switch {
	case len(w.procs) == 0:
		w.endOutcome, w.endMessage = OutcomeOK, ""
	case w.step >= w.config.StepsMax:
		w.endOutcome, w.endMessage = OutcomeLiveness, fmt.Sprintf(
			"step budget %d exhausted with %d processes alive", w.config.StepsMax, len(w.procs))
	default:
		return false
	}
	return true
}

func (w *World) moveClockAndReap() {
	w.now += int64(1+w.stepProc.draws.step.IntnOrLong(stepTimeMax, StepTimeLong)) * 1000
	w.reapZombies()
	w.continueStopped()
}

// runChosen draws the chosen process's crash and resumes it, after the
// global faults. A process a power loss killed this step is hashed as
// killed at its start.
func (w *World) runChosen() {
	p := w.stepProc
	w.stepEvent = p.pending
	w.phase = phaseRan // unless a resumed process hands over another phase
	switch {
	case p.status != procLive:
		w.stepEvent.kind = opStart
	case p.draws.step.Chance(w.plan.probabilities[faultIndexCrash]):
		w.Crash(p)
	case p.draws.step.Chance(w.plan.probabilities[faultIndexStop]):
		w.stop(p)
	default:
		w.resume(p)
	}
}

// endStep folds the step into the hash and checks the run: a process's
// failure or an invariant ends it; otherwise the next step starts.
func (w *World) endStep(p *Proc) {
	w.scheduler.ran(w.step, p)
	w.hashStep(p, w.stepEvent)
	if w.calls != nil {
		w.calls.note(w, p, w.stepEvent)
	}
	if w.keyer != nil {
		w.keyer.stepEnded(w, p)
	}
	w.stepsRun++
	if w.config.HashStream {
		w.stream = append(w.stream, w.hash)
	}
	if w.failure != "" {
		w.endOutcome, w.endMessage, w.phase = OutcomeViolation, w.failure, phaseEnd
		return
	}
	if outcome, message := w.checkInvariants(); outcome != 0 {
		w.endOutcome, w.endMessage, w.phase = outcome, message, phaseEnd
		return
	}
	if w.keyer != nil && w.keyer.halted {
		w.endOutcome, w.endMessage, w.phase = OutcomeOK, HaltedMessage, phaseEnd
		return
	}
	w.step++
	w.phase = phaseStart
}

// continueInline is called by p at a scheduling point, on p's coroutine,
// with its next operation pending. It ends p's step and starts the next,
// and reports true when that step is p's to run with no fault: p then goes
// on without yielding. Otherwise w.phase says where the main loop, which p
// yields to, takes up. It does what runSteps does, in the same order.
func (w *World) continueInline(p *Proc) bool {
	if !w.inline {
		return false
	}
	w.running, w.inlineProc = nil, p
	goOn := w.inlineStep(p)
	w.inlineProc = nil
	return goOn
}

// inlineStep is continueInline's work. A panic in it is the world's, not
// p's: Proc.run hands it to the main loop (see inlinePanic).
func (w *World) inlineStep(p *Proc) bool {
	w.endStep(p)
	if w.phase != phaseStart || w.runEnded() {
		return false
	}
	if w.stepProc = w.choose(); w.stepProc != p {
		w.phase = phaseChosen
		return false
	}
	w.moveClockAndReap()
	if fired, ok := w.drawGlobalFaults(0); ok {
		w.faultFired, w.phase = fired, phaseFault
		return false
	}
	w.stepEvent = p.pending
	if p.draws.step.Chance(w.plan.probabilities[faultIndexCrash]) {
		w.phase = phaseCrash
		return false
	}
	if p.draws.step.Chance(w.plan.probabilities[faultIndexStop]) {
		w.phase = phaseStop
		return false
	}
	w.phase = phaseRan
	p.sleeping = false
	p.result = 0
	w.running = p
	w.inlineSteps++
	return true
}

// inlinePanic is a panic of the world's own code while a process ran it
// inline, caught on the process's coroutine (where Proc.run would have
// taken it for the process's) and raised again on the main loop's side by
// resume, as the same code run there would have panicked.
type inlinePanic struct {
	value any
	stack []byte
}

func (e *inlinePanic) String() string {
	return fmt.Sprintf("%v\n\n(raised in a step run inline on a process's coroutine:)\n%s", e.value, e.stack)
}
