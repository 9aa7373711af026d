package admissionwork

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/modelmap"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The admission workload: controller processes on one host (or two sharing
// the volume, in PID namespaces drawn per seed: hosts.go) acquire the
// export admission slot (package admission), walk the helper lifecycle
// (BeginHelperLaunch, spawn a helper child, BindHelper(child), Settle or
// MarkCleanupUnsafe, Release), and die at any step. Helpers die, or exit
// leaving a descendant behind. Controllers keep copies of their handles
// from before each update and present them later: a stale controller must
// lose every compare-and-swap (ABA, lost update), which porcupine checks
// against models.AdmissionModel.
//
// Some runs start with a legacy record (schema 1, or schema 2 parent-owned
// without a revision) written by setup on the host's boot, as a controller of
// the original implementations would have left it; the history starts with an
// AdmissionLegacy event saying so. A schema-1 record is recoverable only
// after a reboot, so "legacy admission recovered" fires after a power loss
// (or the liveness phase's operator reboot).
//
// Hostile hooks: FaultCorrupt garbles active.json (AdmissionCorruption) and
// an operator removes it later (AdmissionClear); FaultRenameRace replaces a
// mutation claim file by an identical copy (a new inode), which an orphan
// recovery must refuse to delete; FaultCotenant plants a symlink at the
// slot's path (cotenant.go) or swaps another live owner's earlier record in
// over the current holder's (swapin.go: AdmissionSwap, AdmissionReturn).
//
// Durability (durability.go, workkit.DoneRecord): at every power loss the
// slot record is what the last call that reported done left, unless a call
// was in flight or the state was unpromised (a hostile write, a failed call
// that changed it).
//
// PID-reuse impostors take a crashed controller's PID and acquire over its
// record (impostors.go); the claim watch (claimwatch.go) judges every
// refusal for a mutation in progress against who holds the mutation claim.
//
// Liveness: when the last controller ends, every remaining helper and
// descendant is killed, faults stop and corruptions are repaired; a probe
// process must then acquire within a bound. An indeterminate refusal is by
// design until a reboot proves helpers gone, so the probe asks for one
// operator reboot; anything but Acquired after that (with every process
// dead) is a liveness finding.

// AdmissionOptions are the admission workload's knobs. Zero means default.
type AdmissionOptions struct {
	// Controllers is the number of controller processes (default 3).
	Controllers int
	// OpsPerProc is the number of steps of a controller's loop (default 10).
	OpsPerProc int
	// RespawnsMax bounds restarts of crashed controllers (default 4; -1 none).
	RespawnsMax int
	// PIDMax is the host's pid_max (default 40, so PIDs are reused).
	PIDMax int
	// Legacy selects the legacy record setup writes: 0 drawn per run,
	// 1 none, 2 schema 1, 3 schema 2 parent-owned.
	Legacy int
	// LivenessStepsMax bounds the liveness phase (default 20000).
	LivenessStepsMax int
	// PIDImpostors: 0 lets a crashed controller's PID be taken by an
	// impostor with its handle (impostors.go) in some runs, -1 never.
	PIDImpostors int
	// RecordSwaps: 0 lets the co-tenant swap another live owner's earlier
	// record in over the slot (swapin.go), -1 never.
	RecordSwaps int
	// Operators is the number of operator processes that inspect and
	// quarantine beside the controllers (operators.go; default 1, -1 none).
	Operators int
	// Users is the number of command-line users running admission run on
	// a state home of their own (users.go; default 2, -1 none).
	Users int
}

func (o AdmissionOptions) withDefaults() AdmissionOptions {
	o.Controllers = cmp.Or(o.Controllers, 3)
	o.OpsPerProc = cmp.Or(o.OpsPerProc, 10)
	o.RespawnsMax = cmp.Or(o.RespawnsMax, 4)
	o.PIDMax = cmp.Or(o.PIDMax, 40)
	o.LivenessStepsMax = cmp.Or(o.LivenessStepsMax, 20_000)
	o.RespawnsMax = max(o.RespawnsMax, 0)
	o.Operators = max(cmp.Or(o.Operators, 1), 0)
	o.Users = max(cmp.Or(o.Users, 2), 0)
	return o
}

const (
	admissionHome       = "/home/export"
	admissionUID        = 1000
	admissionProbeTries = 300
	admissionStaleMax   = 3
)

// admissionFile is the slot file.
var admissionFile = fspath.Join(append([]string{admissionHome}, append(admission.RootDir, admission.FileName)...)...)

// AdmissionWorkload returns a Setup running the admission workload.
func AdmissionWorkload(opts AdmissionOptions) func(w *sim.World) error {
	opts = opts.withDefaults()
	return func(w *sim.World) error {
		aw := &admissionWorld{world: w, opts: opts}
		return aw.setup()
	}
}

type admissionWorld struct {
	world  *sim.World
	opts   AdmissionOptions
	host   *sim.Host
	volume *sim.Volume
	// loose is the co-tenant's loosened-mode hazard (loosemode.go).
	loose *workkit.LooseMode
	// places are the hosts and namespaces processes run in (hosts.go).
	places workkit.Places
	// exes counts executables: every process runs its own, so no restart
	// is an exact identity twin of a dead owner (see the lease workload).
	exes        int
	controllers int
	respawns    int
	workkit.LifeLedger
	// legacy is true while setup's legacy record is still in the slot, or
	// at legacyAt, the "-removing" name an Acquire moved it to before it
	// unlinks it (empty while it is in the slot).
	legacy   bool
	legacyAt string
	// legacyChecked and outsideChecked let check skip re-reading the
	// legacy record and the co-tenant's outside copy while the volume did
	// not change since their last passing look: the reads were most of
	// admission's per-step invariant.
	legacyChecked, outsideChecked workkit.Unmoved
	// corrupted is set while a hostile corruption sits in the slot; its
	// bytes are corruption (empty when garble truncated the record to zero
	// bytes, so a nil corruption cannot mean "none") and its repair step
	// repairAt.
	corrupted  bool
	corruption []byte
	repairAt   int
	// movedCorruption is a hostile corruption an operator's Quarantine
	// moved out of the slot (corruptionMoved: one was; the bytes may be
	// empty): until the slot directory is synced, a power loss undoes the
	// move (corruptionBackAfterPowerLoss).
	movedCorruption []byte
	corruptionMoved bool
	swaps           int
	// symlinked is set while the co-tenant's symlink sits at the slot's
	// path (symlinkID its identity), and outsideData holds the bytes of the
	// record it moved out of the state tree (cotenant.go).
	symlinked   bool
	symlinkID   lease.FileIdentity
	outsideData []byte
	// records are the valid slot records as their owners wrote them, swap
	// the co-tenant's swap in effect, recordSwaps its copies (swapin.go).
	records     []slotRecord
	swap        *recordSwap
	recordSwaps int
	// slot is the durability oracle of the slot record.
	slot workkit.DoneRecord
	// leftovers follows what power losses left empty or torn.
	leftovers workkit.LeftoverWatch
	failure   error
	liveness  *admissionLiveness
	// userCommands are the command-line users' commands (users.go).
	userCommands *workkit.CLICommands
	// impostors are the PID-reuse impostors and the race probes (impostors.go).
	impostors admissionImpostors
	// claims is the mutation-claim ground truth (claimwatch.go).
	claims claimWatch
	// holding and acquiring follow a threaded controller's threads (threads.go).
	holding   map[*sim.Proc]bool
	acquiring workkit.ThreadCalls
	// left is the "a failed call leaves nothing behind" oracle.
	left *workkit.LeftNothing
	// owners are the processes a claim ID's records name as its acquirer
	// (operators.go).
	owners map[string]*sim.Proc
	// helpers are every helper a BindHelper of each claim was called
	// with, oldest first: a bind whose outcome is unknown may not have
	// written its helper, so the record may name an earlier one.
	helpers map[string][]*sim.Proc
}

func (aw *admissionWorld) setup() error {
	w, opts := aw.world, aw.opts
	aw.volume = w.AddVolume("disk0")
	aw.slot = workkit.DoneRecord{Name: admissionFile, Read: workkit.UnlessChanged(workkit.FileState(aw.volume.Root(), admissionFile), aw.volume.Generations)}
	aw.leftovers = workkit.LeftoverWatch{Dirs: []string{fspath.Dir(admissionFile)}, Skip: []string{admission.QuarantineDir},
		Hostile: func(data []byte) bool { return aw.corrupted && string(data) == string(aw.corruption) }}
	aw.volume.FS().MkdirAll(admissionHome, 0o700, admissionUID)
	aw.loose = &workkit.LooseMode{Volume: aw.volume, UID: admissionUID, Home: admissionHome, Parts: admission.RootDir,
		Engine: "admission", Unsafe: admission.ErrUnsafe}
	aw.places = workkit.DrawPlaces(w, aw.volume, opts.PIDMax, true, &aw.LifeLedger)
	aw.host = aw.places.Hosts[0]
	legacy := opts.Legacy
	if legacy == 0 {
		legacy = 1 + w.Decisions().Intn(3)
	}
	if len(aw.places.Hosts) > 1 {
		legacy = 1 // legacy records are read as this host's: a shared volume never had one
	}
	w.Tracef("admission-workload controllers=%d ops=%d legacy=%d", opts.Controllers, opts.OpsPerProc, legacy)
	if legacy > 1 {
		if err := aw.writeLegacy(legacy); err != nil {
			return err
		}
	}
	aw.impostors.start(aw)
	aw.claims.aw = aw
	for i := 0; i < opts.Controllers; i++ {
		if _, err := aw.spawnAt(aw.places.Deal(i), fmt.Sprintf("controller-%d", i), aw.controller); err != nil {
			return err
		}
		aw.controllers++
	}
	if err := aw.spawnThreads(); err != nil {
		return err
	}
	if err := aw.spawnOperators(); err != nil {
		return err
	}
	if err := aw.setupUsers(); err != nil {
		return err
	}
	w.FaultHook(sim.FaultCorrupt, aw.corrupt)
	w.FaultHook(sim.FaultRenameRace, aw.renameRace)
	w.FaultHook(sim.FaultCotenant, aw.cotenant)
	w.OnExit(aw.exited)
	w.Invariant("admission", aw.check)
	aw.left = workkit.NewLeftNothing(w, "admission", workkit.StatecasResidue(func(name string) bool { return name == admissionFile }))
	return nil
}

// writeLegacy writes a legacy record owned by a process of this boot
// that is gone: schema 1 (kind 2) or schema 2 parent-owned (kind 3).
func (aw *admissionWorld) writeLegacy(kind int) error {
	dir := fspath.Dir(admissionFile)
	aw.volume.FS().MkdirAll(dir, 0o700, admissionUID)
	start := sha256.Sum256([]byte("seed-era controller"))
	owner := statecas.Owner{PID: aw.opts.PIDMax - 1, BootID: statecas.BootDigest(aw.Boot()),
		ProcessStartID: hex.EncodeToString(start[:]), Legacy: true}
	claim := admission.Claim{SchemaVersion: 1, ID: "0f8fad5b-d9cb-469f-a165-70867728950e", Owner: owner}
	phase := models.PhaseCleanupUnsafe // schema 1: recoverable only after a reboot
	if kind == 3 {
		claim.SchemaVersion, claim.Phase = 2, admission.PhaseParentOwned
		phase = models.PhaseParentOwned
	}
	root := aw.volume.FS().View(admissionUID)
	if err := workkit.WriteRoot(root, admissionFile, lease.O_CREATE|lease.O_EXCL, claim.Bytes()); err != nil {
		return fmt.Errorf("legacy admission: %w", err)
	}
	workkit.SyncRoot(root, dir)
	aw.legacy = true
	aw.world.RecordEvent("legacy", models.AdmissionLegacy{Host: aw.host.Name(), Phase: phase})
	aw.world.Probe(fmt.Sprintf("admission-legacy-schema-%d", claim.SchemaVersion))
	return nil
}

// spawnAt starts a process at place (a host and PID namespace).
func (aw *admissionWorld) spawnAt(place workkit.Place, name string, body func(p *sim.Proc)) (*sim.Proc, error) {
	aw.exes++
	p, err := aw.world.Spawn(place.Host, place.Spec(sim.ProcSpec{Name: name, UID: admissionUID,
		Exe: fmt.Sprintf("/usr/bin/export-%d", aw.exes)}), body)
	if err != nil {
		return nil, err
	}
	aw.Track(p)
	return p, nil
}

func (aw *admissionWorld) config(p *sim.Proc) admission.Config {
	return admission.Config{StateHome: admissionHome, FS: &admissionFS{FS: p.FS(), aw: aw, p: p},
		Clock: p.Clock(), Inspector: p.Inspector(), IDs: p.IDs()}
}

// admissionFS observes engine steps the history cannot show: a slot removed
// by an acquire (a stale owner reclaimed, maybe a legacy one), an orphaned
// mutation claim recovered, and one put back (a rename race refused).
type admissionFS struct {
	lease.FS
	aw *admissionWorld
	p  *sim.Proc
	// acquiring is set while the process runs Acquire.
	acquiring bool
	// operator is an operator process's inspector (nil for every other
	// process); movedTo is where its last Quarantine moved the slot record
	// ("" if nowhere).
	operator *workkit.UnknownInspector
	movedTo  string
	// judged is the sha256 the operator's current Quarantine was given;
	// dryRun is set during a quarantine without one (clioperator.go).
	judged string
	dryRun bool
	// clearedCorruption is the hostile corruption that move took out of
	// the slot (nil if none), restored if the move is undone.
	clearedCorruption []byte
}

func (f *admissionFS) Remove(name string) error {
	reclaim := f.acquiring && isSlotRemoval(name)
	if reclaim {
		f.aw.judgeReclaim(f.p, name)
	}
	err := f.FS.Remove(name)
	f.aw.claims.observeRemove(name, err)
	if err == nil && reclaim {
		f.aw.impostors.removed(f.p)
		f.aw.world.Probe("admission-stale-owner-reclaimed")
		if f.aw.legacy && cmp.Or(f.aw.legacyAt, admissionFile) == name {
			f.aw.world.Probe("admission-legacy-recovered")
		}
	}
	return err
}

// checkLegacy clears legacy once setup's legacy record is no longer where
// legacyAt says, or no longer a legacy record.
func (aw *admissionWorld) checkLegacy() {
	if !aw.legacy || aw.legacyChecked.Still(aw.volume) {
		return
	}
	data, err := workkit.ReadRoot(aw.volume.Root(), cmp.Or(aw.legacyAt, admissionFile))
	if err != nil || !strings.Contains(string(data), `"bootId"`) || strings.Contains(string(data), `"hostname"`) {
		aw.legacy = false
		return
	}
	aw.legacyChecked.Mark(aw.volume)
}

// followLegacy keeps legacyAt on the legacy record as an Acquire moves it
// aside to unlink it, or puts it back.
func (aw *admissionWorld) followLegacy(oldpath, newpath string, err error) {
	if !aw.legacy || err != nil || oldpath != cmp.Or(aw.legacyAt, admissionFile) {
		return
	}
	if newpath == admissionFile {
		aw.legacyAt = ""
	} else if isSlotRemoval(newpath) {
		aw.legacyAt = newpath
	}
	aw.legacyChecked.Forget()
}

// isSlotRemoval reports whether name is the slot record as an Acquire
// unlinks it: the engine first renames the record to a "-removing" name of
// its claim (statecas's removeJudged), compares it there, then unlinks it.
func isSlotRemoval(name string) bool {
	base := path.Base(name)
	return name == admissionFile || (fspath.Dir(name) == fspath.Dir(admissionFile) &&
		strings.HasPrefix(base, statefile.TempPrefix+"cas-") && strings.HasSuffix(base, "-removing"))
}

func (f *admissionFS) RenameNoReplace(oldpath, newpath string) error {
	err := f.FS.RenameNoReplace(oldpath, newpath)
	f.noteSlotWrite(newpath, err)
	f.noteOperatorMovedBack(oldpath, newpath, err)
	if err == nil && f.isQuarantineMove(oldpath, newpath) {
		f.movedTo, f.clearedCorruption = newpath, nil
		f.aw.judgeOperatorMove(f, newpath)
	}
	f.aw.followLegacy(oldpath, newpath, err)
	workkit.NoteClaimRename(f.aw.world, "admission", oldpath, newpath, err)
	f.aw.claims.observeRename(f.p, oldpath, newpath, err)
	return err
}

// Rename follows the slot's writes (an update's rename over it).
func (f *admissionFS) Rename(oldpath, newpath string) error {
	err := f.FS.Rename(oldpath, newpath)
	f.noteSlotWrite(newpath, err)
	return err
}

// noteSlotWrite learns a claim's owner when a controller publishes it.
func (f *admissionFS) noteSlotWrite(newpath string, err error) {
	if err == nil && newpath == admissionFile && f.operator == nil {
		f.aw.noteSlotWritten(f.p)
	}
}

func (f *admissionFS) Link(oldpath, newpath string) error {
	err := f.FS.Link(oldpath, newpath)
	f.noteSlotWrite(newpath, err)
	if err == nil && newpath == admissionClaimPath {
		f.aw.claims.published(f.p)
	}
	return err
}

// handle is a controller's admission handle and the helper it bound.
type handle struct {
	a      *admission.Admission
	helper int // Proc ID of the bound helper, 0 = none
}

// controller runs the helper lifecycle with crashes at any step.
func (aw *admissionWorld) controller(p *sim.Proc) {
	d := aw.world.Decisions()
	cfg := aw.config(p)
	var mine *handle
	var stale []handle
	for i := 0; i < aw.opts.OpsPerProc; i++ {
		choice := d.Intn(100)
		switch {
		case len(stale) > 0 && choice < 15:
			aw.presentStale(p, stale[d.Intn(len(stale))])
		case mine == nil && choice < 85:
			mine = aw.acquire(p, cfg)
		case mine == nil:
			aw.inspect(p, cfg)
		default:
			keep := *mine
			if len(stale) < admissionStaleMax {
				copied := *mine.a
				stale = append(stale, handle{a: &copied, helper: mine.helper})
			} else {
				copied := *mine.a
				stale[d.Intn(len(stale))] = handle{a: &copied, helper: mine.helper}
			}
			if !aw.advance(p, &keep, choice) {
				mine = nil // released or abandoned
			} else {
				mine = &keep
			}
		}
		aw.impostors.know(p, mine)
		aw.noteHolding(p, mine)
		_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(3))*time.Millisecond)
	}
	if mine != nil && mine.a.Claim().Phase == admission.PhaseParentOwned && mine.helper == 0 && d.Intn(2) == 0 {
		aw.release(p, mine)
	}
}

// advance takes one lifecycle step of h; false means h is done with.
func (aw *admissionWorld) advance(p *sim.Proc, h *handle, choice int) bool {
	switch h.a.Claim().Phase {
	case admission.PhaseParentOwned:
		if choice < 55 {
			aw.transition(p, h, models.PhaseHelperLaunching, 0, h.a.BeginHelperLaunch)
			return true
		}
		return !aw.release(p, h)
	case admission.PhaseHelperLaunching:
		switch {
		case choice < 65:
			child, err := aw.spawnAt(placeOf(p), p.Name()+"-helper", aw.helperBody)
			if err != nil {
				return true
			}
			aw.world.Probe("admission-helper-spawned")
			aw.noteHelper(h.a.Claim().ID, child)
			if aw.transition(p, h, models.PhaseHelperActive, child.ID(), func(ctx context.Context) error { return h.a.BindHelper(ctx, child.Table().PID) }) {
				h.helper = child.ID()
				aw.world.Probe("admission-helper-bound")
				aw.checkHelperDigest(h.a.Claim(), child)
			}
		case choice < 90:
			aw.transition(p, h, models.PhaseParentOwned, 0, h.a.Settle)
		default:
			aw.markUnsafe(p, h)
		}
	case admission.PhaseHelperActive:
		if choice < 75 {
			if aw.transition(p, h, models.PhaseParentOwned, 0, h.a.Settle) {
				h.helper = 0
			}
		} else {
			aw.markUnsafe(p, h)
		}
	case admission.PhaseCleanupUnsafe:
		return false // only a reboot recovers it: abandon
	}
	return true
}

func (aw *admissionWorld) markUnsafe(p *sim.Proc, h *handle) {
	if aw.transition(p, h, models.PhaseCleanupUnsafe, h.helper, h.a.MarkCleanupUnsafe) {
		aw.world.Probe("admission-cleanup-unsafe")
	}
}

// presentStale presents a stale copy of a handle: its CAS must lose unless
// the handle it copied never moved on.
func (aw *admissionWorld) presentStale(p *sim.Proc, h handle) {
	var ok bool
	switch h.a.Claim().Phase {
	case admission.PhaseParentOwned:
		if h.helper != 0 {
			return
		}
		aw.release(p, &h)
		return
	case admission.PhaseHelperLaunching, admission.PhaseHelperActive:
		ok = aw.transition(p, &h, models.PhaseParentOwned, 0, h.a.Settle)
	default:
		return
	}
	if ok {
		aw.world.Probe("admission-stale-copy-won")
	}
}

// transition records one lifecycle update; it reports success.
func (aw *admissionWorld) transition(p *sim.Proc, h *handle, to models.AdmissionPhase, helper int, update func(context.Context) error) bool {
	if h.a.Released() {
		return false // ErrReleased before any I/O: a handle-local refusal the model has no state for
	}
	claim := h.a.Claim()
	in := models.AdmissionTransition{Proc: p.ProcessID(), ClaimID: claim.ID, FromRevision: claim.Revision,
		FromPhase: modelmap.AdmissionPhase(claim.Phase), ToPhase: to, Helper: helper}
	if helper != 0 {
		in.HelperHost = p.Host().Name()
	}
	op := p.Begin("transition", in)
	aw.slot.Begin()
	swaps := aw.swaps
	aw.claims.begin(p)
	call := p.BeginCall()
	err := update(call.Context())
	aw.left.After(call, workkit.Outcome{Op: "update", Err: err, Failed: err != nil})
	aw.claims.end(p, "update", err)
	aw.noteClaimLost(err, swaps)
	kind, known := modelmap.AdmissionCAS(err)
	aw.slot.End(known && kind == models.CASOK)
	if !known {
		p.End(op, models.Unknown{})
		aw.world.Probe("admission-update-error")
		return false
	}
	aw.impostors.noteCall(p, "update", claim.ID, kind)
	aw.noteSwappedCAS(p, kind)
	out := models.AdmissionTransitionResult{Kind: kind}
	if kind == models.CASOK {
		out.Revision = h.a.Claim().Revision
		aw.noteWritten(p, h.a.Claim())
	}
	if kind == models.CASChanged {
		aw.world.Probe("admission-aba-refused")
	}
	p.End(op, out)
	return kind == models.CASOK
}

// release records a Release; it reports whether the slot was released.
func (aw *admissionWorld) release(p *sim.Proc, h *handle) bool {
	if h.a.Released() {
		return false // a second release is a handle-local no-op (nil), not a compare-and-swap
	}
	claim := h.a.Claim()
	in := models.AdmissionRelease{Proc: p.ProcessID(), ClaimID: claim.ID, Revision: claim.Revision,
		Phase: modelmap.AdmissionPhase(claim.Phase), HasHelper: claim.HelperOwner != nil}
	op := p.Begin("release", in)
	aw.slot.Begin()
	swaps := aw.swaps
	aw.claims.begin(p)
	call := p.BeginCall()
	err := h.a.Release(call.Context())
	aw.left.After(call, workkit.Outcome{Op: "release", Err: err, Failed: err != nil})
	aw.claims.end(p, "release", err)
	aw.noteClaimLost(err, swaps)
	kind, known := modelmap.AdmissionCAS(err)
	aw.slot.End(known && kind == models.CASOK)
	if !known {
		p.End(op, models.Unknown{})
		aw.world.Probe("admission-release-error")
		return false
	}
	aw.impostors.noteCall(p, "release", claim.ID, kind)
	aw.noteSwappedCAS(p, kind)
	switch kind {
	case models.CASOK:
		aw.world.Probe("admission-released")
	case models.CASChanged:
		aw.world.Probe("admission-aba-refused")
	}
	p.End(op, models.AdmissionReleaseResult{Kind: kind})
	return kind == models.CASOK
}

// acquire records an Acquire; it returns the handle when acquired.
func (aw *admissionWorld) acquire(p *sim.Proc, cfg admission.Config) *handle {
	a, kind, known := aw.acquireRecorded(p, cfg)
	if !known || kind != models.AdmissionAcquired {
		return nil
	}
	return &handle{a: a}
}

func (aw *admissionWorld) acquireRecorded(p *sim.Proc, cfg admission.Config) (*admission.Admission, models.AdmissionAcquireKind, bool) {
	op := p.Begin("acquire", models.AdmissionAcquire{Proc: p.ProcessID(), Host: p.Host().Name()})
	fsys := cfg.FS.(*admissionFS)
	fsys.acquiring = true
	aw.slot.Begin()
	swaps := aw.swaps
	aw.impostors.begin(p)
	aw.claims.begin(p)
	leave := aw.enterAcquire(p)
	call := p.BeginCall()
	watch := aw.loose.Watch(aw.world)
	a, err := admission.Acquire(call.Context(), cfg)
	aw.judgeLoose(p, "Acquire", watch, err)
	aw.left.After(call, workkit.Outcome{Op: "acquire", Err: err, Failed: err != nil, Products: true})
	leave()
	aw.claims.end(p, "acquire", err)
	aw.noteClaimLost(err, swaps)
	fsys.acquiring = false
	out, known := modelmap.AdmissionAcquire(a, err)
	aw.impostors.end(p, out, known)
	aw.slot.End(known && out.Kind == models.AdmissionAcquired)
	if !known {
		p.End(op, models.Unknown{})
		aw.world.Probe("admission-acquire-error")
		aw.noteSymlinkRefusal(err)
		aw.world.Tracef("admission-error proc=%s acquire: %v", p.Name(), err)
		return nil, 0, false
	}
	kind := out.Kind
	aw.noteThreadAcquired(p, kind)
	aw.noteSwappedAcquire(kind)
	if kind == models.AdmissionAcquired {
		aw.noteWritten(p, a.Claim())
	}
	aw.world.Probe("admission-acquire-" + [...]string{"", "acquired", "active", "indeterminate", "contention", "corrupt"}[kind])
	if kind == models.AdmissionIndeterminate {
		aw.noteElsewhere(p)
	}
	p.End(op, out)
	return a, kind, true
}

// inspect runs admission.Inspect (read-only, not in the history) for the
// disposition probes.
func (aw *admissionWorld) inspect(p *sim.Proc, cfg admission.Config) {
	call := p.BeginCall()
	watch := aw.loose.Watch(aw.world)
	claim, disposition, err := admission.Inspect(call.Context(), cfg)
	aw.judgeLoose(p, "Inspect", watch, err)
	aw.left.After(call, workkit.Outcome{Op: "inspect", Err: err, Failed: err != nil})
	if err == nil && claim != nil {
		aw.world.Probe("admission-disposition-" + string(disposition))
	}
}

// helperBody is a helper child: it may start a descendant that outlives
// it, works for a while, and exits.
func (aw *admissionWorld) helperBody(p *sim.Proc) {
	d := aw.world.Decisions()
	if d.Intn(2) == 0 {
		if _, err := aw.spawnAt(placeOf(p), p.Name()+"-descendant", aw.descendantBody); err == nil {
			aw.world.Probe("admission-helper-left-descendant")
		}
	}
	_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(20))*time.Millisecond)
}

func (aw *admissionWorld) descendantBody(p *sim.Proc) {
	_ = p.Clock().Sleep(context.Background(), time.Duration(5+aw.world.Decisions().Intn(40))*time.Millisecond)
}

func (aw *admissionWorld) fail(err error, liveness bool) {
	if liveness {
		err = &sim.LivenessError{Message: err.Error()}
	}
	if aw.failure == nil {
		aw.failure = err
	}
}

// exited records deaths, restarts crashed controllers, and starts the
// liveness phase after the last controller.
func (aw *admissionWorld) exited(p *sim.Proc, reason sim.ExitReason) {
	aw.NoteExit(p)
	aw.claims.forget(p)
	aw.impostors.exited(p, reason)
	if aw.liveness != nil {
		aw.liveness.exited(p)
		return
	}
	if isPIDImpostor(p) {
		aw.controllers--
		if aw.controllers == 0 {
			aw.startLiveness()
		}
		return
	}
	user := strings.HasPrefix(p.Name(), "user-") && !strings.HasSuffix(p.Name(), "-command")
	if !user && (!strings.HasPrefix(p.Name(), "controller-") || strings.Contains(p.Name(), "-helper")) {
		return
	}
	aw.controllers--
	if reason != sim.ExitFinished && aw.respawns < aw.opts.RespawnsMax {
		aw.respawns++
		body := aw.controller
		if user {
			body = aw.user
			aw.world.Probe("admission-user-rerun")
		}
		if _, err := aw.spawnAt(placeOf(p), p.Name(), body); err == nil {
			aw.controllers++
			aw.world.Probe("admission-respawn")
		}
	}
	if aw.controllers == 0 {
		aw.startLiveness()
	}
}

// check is the per-step invariant: reboots into the history, the legacy
// record's presence, hostile repairs, and the liveness bound.
func (aw *admissionWorld) check() error {
	w := aw.world
	boot := aw.Boot()
	aw.NoteReboot()
	// A volume shared by two hosts survives a host's power loss (its server
	// kept power) and the other host's calls go on: nothing to judge, and
	// the claim watch's holder is judged by the ledger (a claimant on the
	// other host lives on).
	if aw.Boot() != boot && len(aw.places.Hosts) == 1 {
		aw.claims.powerLoss()
		aw.judgeDurability()
		aw.leftovers.AfterPowerLoss(w, aw.volume.Root())
		aw.corruptionBackAfterPowerLoss()
	}
	aw.leftovers.Check(w, aw.volume.Root())
	aw.checkLegacy()
	aw.checkOutside()
	if aw.corrupted && w.Step() >= aw.repairAt {
		aw.repair(false)
	}
	aw.returnSwappedRecord(false)
	if aw.liveness != nil && aw.failure == nil && !aw.liveness.done && w.Step()-aw.liveness.startStep > aw.opts.LivenessStepsMax {
		aw.fail(fmt.Errorf("liveness: no acquire within %d steps after the workload ended", aw.opts.LivenessStepsMax), true)
	}
	return aw.failure
}
