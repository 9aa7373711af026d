package admissionwork

// Operators at any moment: operator processes, on the
// controllers' host or another place the workload has, call InspectState
// and then Quarantine on the judgement it gave (the record's sha256), kept
// for a drawn delay while controllers, helpers, impostors and the co-tenant
// run, so the judgement may be stale by the time it is used. The call is an
// operation of the history (models.AdmissionQuarantine): a move empties the
// slot for every caller, a refusal changes nothing.
//
// The ground truth at the move (judgeOperatorMove, the instant the record's
// name is renamed into the quarantine): no process that the record names
// (its owner, or the helper it records) may be alive where the operator
// could judge it, its own host and PID namespace. Admission has no state
// that time resolves (no launching window: only a reboot or an operator
// resolves an indeterminate record), so that is the whole rule; a live
// owner or helper of another place is moved on the operator's word, which
// is what indeterminate asks of an operator (probe
// admission-operator-moved-live-elsewhere), and the model holds what
// follows: its next compare-and-swap loses. Half the operators, drawn per
// process, work through leasereal's inspect and quarantine instead, and
// act only on what inspect advises (clioperator.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
	"github.com/leasekit/leasekit/workload/workkit"
)

const (
	// operatorOpsMax bounds an operator's Quarantine calls.
	operatorOpsMax = 4
	// operatorStaleMax bounds the delay between an operator's InspectState
	// and the Quarantine it feeds (ms).
	operatorStaleMax = 12
)

// admissionQuarantineDir is where Quarantine moves the slot record.
var admissionQuarantineDir = fspath.Join(fspath.Dir(admissionFile), admission.QuarantineDir)

// spawnOperators starts the operator processes, each at a drawn place.
func (aw *admissionWorld) spawnOperators() error {
	for i := 0; i < aw.opts.Operators; i++ {
		place := aw.places.Deal(aw.world.Decisions().Intn(2 * len(aw.places.Hosts)))
		if _, err := aw.spawnAt(place, fmt.Sprintf("operator-%d", i), aw.operator); err != nil {
			return err
		}
	}
	return nil
}

// operator inspects the slot and quarantines what it judged, sometimes on a
// judgement several steps old.
func (aw *admissionWorld) operator(p *sim.Proc) {
	if aw.drawsCLIOperator(p) {
		aw.cliOperator(p)
		return
	}
	d := aw.world.Decisions()
	cfg := aw.config(p)
	inspector := &workkit.UnknownInspector{Inspector: cfg.Inspector}
	cfg.FS.(*admissionFS).operator, cfg.Inspector = inspector, inspector
	var judged *admission.State
	for i := 1 + d.Intn(operatorOpsMax); i > 0; i-- {
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(8))*time.Millisecond)
		if judged == nil || d.Intn(3) == 0 {
			inspector.Forget()
			judged = aw.operatorInspect(p, cfg)
			aw.judgeOperatorNeeded(p, inspector, judged)
		}
		if judged == nil || !judged.Present {
			continue
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(operatorStaleMax))*time.Millisecond)
		inspector.Forget()
		aw.quarantine(p, cfg, judged.ContentSHA256, admissionQuarantineAPI)
	}
}

// operatorInspect is the operator's InspectState (read-only, not in the
// history); nil when it is refused.
func (aw *admissionWorld) operatorInspect(p *sim.Proc, cfg admission.Config) *admission.State {
	watch := aw.loose.Watch(aw.world)
	state, err := admission.InspectState(context.Background(), cfg)
	aw.judgeLoose(p, "InspectState", watch, err)
	if err != nil {
		aw.world.Probe("admission-operator-inspect-refused")
		return nil
	}
	aw.world.Probe("admission-operator-inspected")
	return &state
}

// judgeOperatorNeeded is the ground truth when an InspectState returns
// (state: nil when it was refused): a record it calls operator-needed must
// be one Quarantine would take. A helper the record names that is alive
// at the operator's own place, and that the call could inspect, makes
// Quarantine refuse (ErrActive), so telling the operator to act on it sends
// the operator to a refusal; the state waits for the helper instead.
func (aw *admissionWorld) judgeOperatorNeeded(p *sim.Proc, inspector *workkit.UnknownInspector, state *admission.State) {
	if state == nil || state.Claim == nil || state.Claim.HelperOwner == nil {
		return
	}
	claim := state.Claim
	q := aw.helperNamed(claim.ID, claim.HelperOwner)
	if q == nil || !aw.Alive(q) || !placeOf(q).Same(p) ||
		inspector.Unknown[claim.HelperOwner.PID] || state.Disposition != admission.DispositionIndeterminate {
		return
	}
	aw.world.Probe("admission-operator-inspected-live-helper")
	if state.OperatorNeeded || state.Waiting == "" {
		aw.fail(fmt.Errorf("%s's InspectState of admission %s (%s) says operatorNeeded=%v, waiting=%q, but its helper %s "+
			"(PID %d) is alive in the operator's own host and PID namespace: Quarantine refuses it (ErrActive), so "+
			"the state waits for the helper, not for an operator", p.Name(), claim.ID, claim.Phase, state.OperatorNeeded,
			state.Waiting, q.Name(), claim.HelperOwner.PID), false)
	}
}

// admissionQuarantineCall is one way an operator quarantines the judged
// sha256: the engine's API, or `leasereal admission quarantine`'s glue.
// Its result is Quarantined exactly when it reports a move.
type admissionQuarantineCall func(ctx context.Context, cfg admission.Config, sha string) (moved string, result leasecli.QuarantineResult, err error)

// admissionQuarantineAPI is admission.Quarantine.
func admissionQuarantineAPI(ctx context.Context, cfg admission.Config, sha string) (string, leasecli.QuarantineResult, error) {
	moved, err := admission.Quarantine(ctx, cfg, sha)
	return moved.Path, leasecli.Quarantined, err
}

// quarantine records one operator Quarantine of the judged sha256, made by
// quarantineBy, and returns its result.
func (aw *admissionWorld) quarantine(p *sim.Proc, cfg admission.Config, sha string, quarantineBy admissionQuarantineCall) (leasecli.QuarantineResult, error) {
	w := aw.world
	fsys := cfg.FS.(*admissionFS)
	fsys.movedTo, fsys.judged = "", sha
	op := p.Begin("quarantine", models.AdmissionQuarantine{Proc: p.ProcessID()})
	aw.slot.Begin()
	aw.claims.begin(p)
	call := p.BeginCall()
	watch := aw.loose.Watch(w)
	movedPath, result, err := quarantineBy(call.Context(), cfg, sha)
	reported := err == nil && result == leasecli.Quarantined
	aw.judgeLoose(p, "Quarantine", watch, err)
	aw.left.After(call, workkit.Outcome{Op: "quarantine", Err: err, Failed: !reported})
	aw.claims.end(p, "quarantine", err)
	aw.slot.End(reported) // a reported move synced both directories: the empty slot is promised
	// A cancelled context is honoured only before anything is read: a
	// refusal that moved nothing, as ErrActive and ErrChanged are.
	refused := errors.Is(err, admission.ErrActive) || errors.Is(err, admission.ErrChanged) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	switch {
	case reported && fsys.movedTo != movedPath:
		aw.fail(fmt.Errorf("%s's Quarantine reports the admission moved to %s, but its move of the slot record was to %q",
			p.Name(), movedPath, fsys.movedTo), false)
	case (refused || err == nil && !reported) && fsys.movedTo != "":
		aw.fail(fmt.Errorf("%s's Quarantine refused (%v %s), but the slot record it moved to %s was not put back",
			p.Name(), err, result, fsys.movedTo), false)
	}
	if err != nil && !refused {
		// Any other failure may come after the move (a directory sync):
		// whether the record moved is unknown to the caller.
		p.End(op, models.Unknown{})
		w.Probe("admission-operator-quarantine-error")
		w.Tracef("admission-error proc=%s quarantine: %v", p.Name(), err)
		return result, err
	}
	p.End(op, models.AdmissionQuarantineResult{Moved: reported})
	switch {
	case reported:
		w.Probe("admission-operator-quarantined")
		aw.movedCorruption, aw.corruptionMoved = nil, false // the reported move is synced: no power loss undoes it
	case errors.Is(err, admission.ErrActive):
		w.Probe("admission-operator-active-refused")
	case errors.Is(err, admission.ErrChanged):
		w.Probe("admission-operator-stale-refused")
	}
	return result, err
}

// noteOperatorMovedBack follows a Quarantine that put the record it moved
// back (its look at the moved file failed or found another inode): the
// slot holds it again, and a hostile corruption it had cleared is back.
func (f *admissionFS) noteOperatorMovedBack(oldpath, newpath string, err error) {
	if err != nil || f.operator == nil || f.movedTo == "" || oldpath != f.movedTo || newpath != admissionFile {
		return
	}
	f.movedTo = ""
	aw := f.aw
	aw.world.Probe("admission-operator-move-undone")
	if f.clearedCorruption != nil {
		aw.corrupted, aw.corruption, aw.repairAt = true, f.clearedCorruption, aw.world.Step()
		f.clearedCorruption = nil
	}
}

// isQuarantineMove reports whether an operator's rename of oldpath to
// newpath moves the slot record into the quarantine.
func (f *admissionFS) isQuarantineMove(oldpath, newpath string) bool {
	return f.operator != nil && oldpath == admissionFile && fspath.Dir(newpath) == admissionQuarantineDir
}

// judgeOperatorMove is the ground truth the instant an operator moved the
// slot record to movedTo: it reads the bytes moved (a root read, which no
// injected error may blind) and fails the run when they are not the
// bytes the operator judged (its sha256), or a process the record names is
// alive at the operator's own place.
func (aw *admissionWorld) judgeOperatorMove(f *admissionFS, movedTo string) {
	if f.dryRun {
		aw.fail(fmt.Errorf("%s's dry run of leasereal admission quarantine (no --sha256) moved the slot record to %s",
			f.p.Name(), movedTo), false)
	}
	data, err := workkit.ReadRoot(aw.volume.Root(), movedTo)
	if err != nil {
		return
	}
	if sha := statefile.SHA256Hex(data); sha != f.judged {
		aw.fail(fmt.Errorf("%s's Quarantine moved a record of sha256 %s, not the one the operator judged (%s)",
			f.p.Name(), sha, f.judged), false)
	}
	claim, parseErr := admission.Parse(data, admissionFile)
	switch {
	case parseErr != nil:
		aw.world.Probe("admission-operator-moved-corrupt")
		aw.noteCorruptionMoved(f, data)
		return
	case claim.Owner.Legacy:
		aw.world.Probe("admission-operator-moved-legacy")
		return
	}
	aw.world.Probe("admission-operator-moved-claim")
	aw.judgeMovedProc(f, claim, "owner", aw.owners[claim.ID], claim.Owner.PID)
	if claim.HelperOwner != nil {
		aw.judgeMovedProc(f, claim, "helper", aw.helperNamed(claim.ID, claim.HelperOwner), claim.HelperOwner.PID)
	}
}

// noteCorruptionMoved: an operator's Quarantine moved the hostile
// corruption out of the slot, the repair the workload's own operator would
// have made (faults.go): there is nothing left to repair.
func (aw *admissionWorld) noteCorruptionMoved(f *admissionFS, data []byte) {
	if !aw.corrupted || aw.symlinked || !bytes.Equal(data, aw.corruption) {
		return
	}
	f.clearedCorruption, aw.movedCorruption, aw.corruptionMoved = aw.corruption, aw.corruption, true
	aw.corrupted, aw.corruption = false, nil
	aw.world.Probe("admission-operator-moved-hostile-corruption")
}

// corruptionBackAfterPowerLoss: a Quarantine renames the record into
// quarantine/, and until the slot's directory is synced a power loss undoes
// that rename. A hostile corruption an operator moved out is then back in
// the slot, and the workload's own operator must repair it again (else the
// liveness probe meets it and, rightly, is refused as corrupt).
func (aw *admissionWorld) corruptionBackAfterPowerLoss() {
	if !aw.corruptionMoved || aw.corrupted || aw.symlinked {
		return
	}
	data, err := workkit.ReadRoot(aw.volume.Root(), admissionFile)
	if err != nil || !bytes.Equal(data, aw.movedCorruption) {
		return
	}
	aw.corrupted, aw.corruption, aw.repairAt = true, aw.movedCorruption, aw.world.Step()
	aw.movedCorruption, aw.corruptionMoved = nil, false
	aw.world.Probe("admission-operator-move-lost-to-power-loss")
	if aw.liveness != nil {
		// The liveness phase repaired the slot when it started, and
		// repairs only then; the power loss killed every process (a probe
		// launched since has not run), so a claim left is orphaned: repair
		// under it, as the phase's start does.
		aw.repair(true)
	}
}

// judgeMovedProc judges one process a moved record names (q: nil when the
// workload does not know it; pid: the PID the record gives it): alive at
// the operator's own place, with a /proc entry the call could read, it is
// an active export that no Quarantine may move.
func (aw *admissionWorld) judgeMovedProc(f *admissionFS, claim admission.Claim, role string, q *sim.Proc, pid int) {
	p := f.p
	if q == nil || q.Table().PID != pid || !aw.Alive(q) {
		return
	}
	if !placeOf(q).Same(p) {
		aw.world.Probe("admission-operator-moved-live-elsewhere")
		return
	}
	if f.operator.Unknown[pid] {
		// The call could not read q's /proc entry (EACCES): indeterminate,
		// and the operator's word decides, as for another place's owner.
		aw.world.Probe("admission-operator-moved-live-uninspectable")
		return
	}
	aw.fail(fmt.Errorf("%s's Quarantine moved admission %s (%s) whose %s %s (PID %d) is alive in the operator's own "+
		"host and PID namespace: a live owner or helper is refused (ErrActive)", p.Name(), claim.ID, claim.Phase,
		role, q.Name(), pid), false)
}

// noteSlotWritten learns the owner of a claim the first time a process
// publishes it: the acquirer (whatever its call's outcome).
func (aw *admissionWorld) noteSlotWritten(p *sim.Proc) {
	data, err := workkit.ReadRoot(aw.volume.Root(), admissionFile)
	if err != nil {
		return
	}
	claim, parseErr := admission.Parse(data, admissionFile)
	if parseErr != nil || claim.Owner.Legacy || aw.owners[claim.ID] != nil ||
		claim.Owner.PID != p.Table().PID || claim.Owner.Hostname != p.Host().Name() {
		return
	}
	if aw.owners == nil {
		aw.owners = map[string]*sim.Proc{}
	}
	aw.owners[claim.ID] = p
}

// noteHelper records child as the helper a BindHelper of claimID writes.
func (aw *admissionWorld) noteHelper(claimID string, child *sim.Proc) {
	if aw.helpers == nil {
		aw.helpers = map[string][]*sim.Proc{}
	}
	aw.helpers[claimID] = append(aw.helpers[claimID], child)
}

// helperNamed is the helper of claimID that the record's owner names: the
// incarnation with its PID and its start digest (what BindHelper captured
// by inspecting the PID). nil when none is: the PID then named another
// process when the bind captured it (a helper that had died, its PID
// reused), and the judges have no live helper to blame. Two incarnations
// with one PID and one start tick cannot be told apart (nor can the
// engine), so the judges stay silent for them too.
func (aw *admissionWorld) helperNamed(claimID string, owner *statecas.Owner) *sim.Proc {
	var named *sim.Proc
	for _, helper := range aw.helpers[claimID] {
		if helper.Table().PID != owner.PID {
			continue
		}
		if startDigestOf(helper) != owner.ProcessStartID {
			aw.world.Probe("admission-helper-pid-reused")
			continue
		}
		if named != nil {
			aw.world.Probe("admission-helper-start-ambiguous")
			return nil
		}
		named = helper
	}
	return named
}

// checkHelperDigest holds the judges' naming of helpers (helperNamed) to
// what the engine recorded: a helper alive after its bind was alive during
// the capture, so the record's start digest is its own.
func (aw *admissionWorld) checkHelperDigest(claim admission.Claim, child *sim.Proc) {
	if claim.HelperOwner == nil || !aw.Alive(child) || claim.HelperOwner.PID != child.Table().PID {
		return
	}
	if claim.HelperOwner.ProcessStartID != startDigestOf(child) {
		aw.fail(fmt.Errorf("admission %s names helper %s (PID %d) with start digest %s; the workload computes %s: "+
			"the operator judges would not know this helper", claim.ID, child.Name(), child.Table().PID,
			claim.HelperOwner.ProcessStartID, startDigestOf(child)), false)
		return
	}
	aw.world.Probe("admission-helper-digest-checked")
}

// startDigestOf is the start digest an inspection of q captures
// (statecas.StartDigest): the start time /proc/PID/stat shows (ticks since
// boot), its executable's device and inode, and its uid, as simproc renders
// them.
func startDigestOf(q *sim.Proc) string {
	table := q.Table()
	return statecas.StartDigest(lease.ProcessIdentity{StartTime: strconv.FormatUint(table.StartTicks, 10),
		ExecutableDev: simproc.ExeDev, ExecutableIno: table.ExeIno, UID: int(table.UID)})
}
