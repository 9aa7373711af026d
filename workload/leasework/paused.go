package leasework

// Paused holders. The stop fault SIGSTOPs a process for
// longer than every guard wait; /proc shows it in state T, alive. When it
// stops a lease holder (possibly inside its fenced work), an operator who
// sees the namespace blocked runs ForceReclaim on the holder's record:
//   - on the holder's own host the engine must refuse (the owner is live on
//     this host, only stopped): a move is a ground-truth violation;
//   - on another host of a shared volume the owner is remote, and the
//     operator's confirmed move is legal: it is recorded as the
//     models.LeaseClear event at the step of the move, and the holder,
//     resumed, must then be fenced (the model checks its calls; probes count
//     them). A holder paused inside its fenced work holds the guard, so the
//     operator's move is refused until it leaves: never two inside.

import (
	"context"
	"fmt"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// pausedHolders is the workload's record of paused holders and operators.
type pausedHolders struct {
	// held maps a paused holder to the generation it held when stopped.
	held map[*sim.Proc]pausedHold
	// forced maps a holder to the generation an operator moved away.
	forced map[*sim.Proc]pausedHold
	// operators are the live operator processes, by the holder they judge.
	operators map[*sim.Proc]*sim.Proc
}

// pausedHold is a generation and when it was paused or moved away.
type pausedHold struct {
	generation string
	at         int64
}

// operatorChance is the chance that a paused holder's namespace gets an
// operator's ForceReclaim.
const operatorChance = 0.5

// operatorGarbleChance is the chance that a co-tenant garbles the record an
// operator judged before its force (garbleJudgedRecord).
const operatorGarbleChance = 0.6

// stopped is the world's stop hook.
func (lw *leaseWorld) stopped(p *sim.Proc) {
	space := lw.spaceOf[p.Host()]
	if space == nil || lw.liveness != nil {
		return
	}
	in := lw.inside[space]
	inFence := in != nil && in.proc == p
	generation := lw.generationHeldBy(space, p)
	if generation == "" && !inFence {
		return
	}
	w := lw.world
	w.Probe("lease-paused-holder")
	if inFence {
		w.Probe("lease-paused-in-fence")
		generation = in.generation
	}
	if lw.paused.held == nil {
		lw.paused = pausedHolders{held: map[*sim.Proc]pausedHold{}, forced: map[*sim.Proc]pausedHold{},
			operators: map[*sim.Proc]*sim.Proc{}}
	}
	lw.paused.held[p] = pausedHold{generation, w.Now()}
	d := w.Decisions()
	if !d.Chance(operatorChance) {
		return
	}
	host := space.hosts[d.Intn(len(space.hosts))]
	ns := d.Intn(host.Table().NamespaceCount())
	lw.garbleJudgedRecord(space)
	operator, err := w.Spawn(host, sim.ProcSpec{Name: fmt.Sprintf("operator-%d", len(lw.paused.operators)+1),
		UID: leaseUID, Exe: "/usr/sbin/leasekit-operator", Namespace: ns}, func(op *sim.Proc) { lw.operate(op, p, generation) })
	if err == nil {
		lw.paused.operators[operator] = p
	}
}

// generationHeldBy returns the generation of space's owner record when p's
// acquire returned it, "" otherwise.
func (lw *leaseWorld) generationHeldBy(space *leaseSpace, p *sim.Proc) string {
	data, err := workkit.ReadRoot(space.volume.Root(), leaseOwnerPath)
	if err != nil {
		return ""
	}
	r, ok := lw.parseRecord(data)
	if !ok || lw.acquirer[r.Generation] != p {
		return ""
	}
	return r.Generation
}

// operate is the operator's body: ForceReclaim of the paused holder's
// record, confirmed with its generation.
func (lw *leaseWorld) operate(op, holder *sim.Proc, generation string) {
	w := lw.world
	// The operator's own inspections of the holder: one that could not see
	// it (InspectUnknown, e.g. EACCES) leaves the engine unable to prove it
	// alive, and an unverifiable owner is the operator's call by design.
	watch := &inspectWatch{Inspector: op.Inspector(), pid: holder.Table().PID}
	res, err := lw.managerWith(op, watch).ForceReclaim(context.Background(),
		lease.ForceRequest{Kind: lease.BlockerReceiver, Generation: generation})
	lw.settleReclaims(op, true, err, sim.ExitFinished)
	if err != nil {
		w.Probe("lease-operator-force-error")
		return
	}
	// Local means the holder's own PID namespace: from another container
	// of its host the holder is as unreachable as from another host.
	local := op.Host() == holder.Host() && op.Table().NS == holder.Table().NS
	switch {
	case res.Kind == lease.ForceMoved && local && !holder.ProcessEnded() && watch.unverified:
		w.Probe("lease-operator-forced-unverifiable-paused-holder")
		lw.paused.forced[holder] = pausedHold{generation, w.Now()}
	case res.Kind == lease.ForceMoved && local && !holder.ProcessEnded():
		lw.fail(fmt.Errorf("operator %s force-reclaimed generation %s of %s, alive on its own host (stopped: %v): %s",
			op.Name(), generation, holder.Name(), holder.Stopped(), res.QuarantinePath), false)
	case res.Kind == lease.ForceMoved:
		w.Probe("lease-operator-reclaimed-paused-holder")
		lw.paused.forced[holder] = pausedHold{generation, w.Now()}
	case res.Kind == lease.ForceRefused && local:
		w.Probe("lease-operator-refused-paused-holder")
	case res.Kind == lease.ForceRefused:
		w.Probe("lease-operator-refused-remote-paused-holder")
	}
}

// garbleJudgedRecord is a co-tenant's garble of owner.json after the
// operator judged the paused holder's record and before its force runs
// (when the run's plan has the corrupt fault): the record the operator
// confirms by generation is no longer the one it judged, and the force must
// refuse it, whoever the holder is. It runs in the stop hook, outside every
// process, so no fault of a process strikes the co-tenant's write.
func (lw *leaseWorld) garbleJudgedRecord(space *leaseSpace) {
	w := lw.world
	if w.Plan().Get(sim.FaultCorrupt) == 0 || !w.Decisions().Chance(operatorGarbleChance) ||
		space.unsafeLinks > 0 || space.ownerCorrupted {
		return
	}
	owner, err := workkit.ReadRoot(space.cotenant(), leaseOwnerPath)
	if _, valid := lw.parseRecord(owner); err != nil || !valid {
		return
	}
	w.Probe("lease-operator-judged-record-garbled")
	lw.applyCorruption(w, space, ownerCorruption(w, owner))
}

// operatorExited forgets an operator that exited, and reports whether p was one.
func (p *pausedHolders) operatorExited(proc *sim.Proc) bool {
	if _, ok := p.operators[proc]; !ok {
		return false
	}
	delete(p.operators, proc)
	return true
}

// isOperator reports whether proc is an operator: its move of receiver.lock
// into quarantine is a LeaseClear, not a reclaim.
func (p *pausedHolders) isOperator(proc *sim.Proc) bool {
	_, ok := p.operators[proc]
	return ok
}

// observeOperatorMove records an operator's move of receiver.lock as the
// LeaseClear event, at the step it happened, and returns its history index:
// like a reclaim, the move is pending until ForceReclaim answers, and a
// power loss before then may undo it (settleReclaims).
func (lw *leaseWorld) observeOperatorMove(space *leaseSpace) int {
	event := lw.world.RecordEvent("clear", models.LeaseClear{Namespace: space.key})
	lw.world.Probe("lease-operator-clear-observed")
	return event
}

// resumedCall counts what a paused holder's call with its paused
// generation, called at callAt after the pause, answered: still the owner,
// or fenced after an operator's move. A call that began before the move
// may linearize before it, so only a later one must be fenced.
func (lw *leaseWorld) resumedCall(p *sim.Proc, generation string, owner bool, callAt int64) {
	held, ok := lw.paused.held[p]
	if !ok || held.generation != generation || callAt <= held.at {
		return
	}
	forcedHold, forced := lw.paused.forced[p]
	forced = forced && forcedHold.generation == generation
	if forced && callAt <= forcedHold.at {
		return
	}
	delete(lw.paused.held, p)
	switch {
	case forced && !owner:
		lw.world.Probe("lease-paused-holder-resumed-fenced")
	case forced:
		lw.fail(fmt.Errorf("%s resumed and was still the owner of generation %s, which an operator had moved away",
			p.Name(), generation), false)
	case owner:
		lw.world.Probe("lease-paused-holder-resumed-owner")
	}
}

// inspectWatch is an Inspector that notes whether an inspection of pid
// came back unknown (the engine could not tell it alive or dead).
type inspectWatch struct {
	lease.Inspector
	pid        int
	unverified bool
}

func (i *inspectWatch) Inspect(pid int) lease.Inspection {
	inspection := i.Inspector.Inspect(pid)
	if pid == i.pid && inspection.Kind == lease.InspectUnknown {
		i.unverified = true
	}
	return inspection
}
