package dirleasework

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/modelmap"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The dirlease workload: creator processes make private 0700 working
// directories (raw-working, and bundle-stage with a sibling output root),
// Create leases on them, Update raw ones through their phases (running with
// a child process's PID), publish bundles by renaming them to their output
// root, Release, and remove their directories; they die at any step.
// Recoverer processes run Recover concurrently (recovery racing creators).
// A hostile hook swaps a claimed directory for another by rename (DirSwap)
// and an operator later removes the impostor (DirRemove).
//
// Durability (durability.go, workkit.DoneRecord): at every power loss the
// claim files are what the last call that reported done left, unless a call
// was in flight or the state was unpromised.
//
// Ground truth, checked when a recovery moves or removes a directory: the
// directory is not foreign (swapped in), its owner is dead, and no child
// the claim surely records is alive. Liveness: once every process is dead,
// faults stop and impostors are removed, a probe's Recover must leave no
// claim within a bound.

// DirleaseOptions are the dirlease workload's knobs. Zero means default.
type DirleaseOptions struct {
	// Creators is the number of creator processes (default 3).
	Creators int
	// Recoverers is the number of recovery processes (default 2).
	Recoverers int
	// OpsPerProc is the number of loop steps per process (default 6: a
	// history then checks in a few milliseconds at p99).
	OpsPerProc int
	// RespawnsMax bounds restarts of crashed creators (default 4; -1 none).
	RespawnsMax int
	// PIDMax is the host's pid_max (default 40).
	PIDMax int
	// LivenessStepsMax bounds the liveness phase (default 20000).
	LivenessStepsMax int
	// PIDImpostors: 0 lets a crashed creator's PID be taken by an impostor
	// (races.go) in some runs, -1 never.
	PIDImpostors int
	// ClaimSwaps: 0 lets the co-tenant rename a copy of one live claim's
	// file over another's (swapin.go), -1 never.
	ClaimSwaps int
	// Operators is the number of operator processes (operators.go); -1
	// none (default 1).
	Operators int
	// Users is the number of command-line users sharing paths (users.go);
	// -1 none (default 2).
	Users int
	// Pileup: 0 draws the crash pile-up past dirlease.ClaimsMax
	// (pileup.go) in one run in pileupOdds, 1 in every run, -1 never.
	Pileup int
}

func (o DirleaseOptions) withDefaults() DirleaseOptions {
	o.Creators = cmp.Or(o.Creators, 3)
	o.Recoverers = cmp.Or(o.Recoverers, 2)
	o.OpsPerProc = cmp.Or(o.OpsPerProc, 6)
	o.RespawnsMax = cmp.Or(o.RespawnsMax, 4)
	o.PIDMax = cmp.Or(o.PIDMax, 40)
	o.LivenessStepsMax = cmp.Or(o.LivenessStepsMax, 20_000)
	o.RespawnsMax = max(o.RespawnsMax, 0)
	o.Operators = max(cmp.Or(o.Operators, 1), 0)
	o.Users = max(cmp.Or(o.Users, 2), 0)
	return o
}

const (
	dirleaseHome       = "/home/dl"
	dirleaseWork       = "/home/dl/work"
	dirleaseUID        = 1000
	dirleaseProbeTries = 200
	// dirleaseLaunchWindowMs bounds RecoverAfterMs beyond the creation time;
	// one creation in dirleaseLongWindowOdds draws a window up to
	// dirleaseLongWindowMs, long enough for an operator's Inspect and
	// Quarantine to fit inside it.
	dirleaseLaunchWindowMs = 40
	dirleaseLongWindowOdds = 4
	dirleaseLongWindowMs   = 1500
)

// DirleaseWorkload returns a Setup running the dirlease workload.
func DirleaseWorkload(opts DirleaseOptions) func(w *sim.World) error {
	opts = opts.withDefaults()
	return func(w *sim.World) error {
		dw := &dirWorld{world: w, opts: opts}
		return dw.setup()
	}
}

// dirTrack is the ground truth about one created directory path.
type dirTrack struct {
	path  string
	owner *sim.Proc
	// child is the running child the claim surely records (nil if none or
	// unsure).
	child *sim.Proc
	// foreign is set while a swapped-in directory exists (at path, or
	// where a recovery moved it); foreignID is its identity.
	foreign   bool
	foreignID lease.FileIdentity
	// repairAt is the step of the operator's repair of the swap.
	repairAt int
	// claimed is set once a Create may have written the claim.
	claimed bool
	// created is set once a Create returned the claim: only then is the
	// identity it recorded the one made by the creator, and a swap foreign.
	created bool
	// bundle marks a bundle stage: never swapped (a published impostor
	// would wedge recovery by the hostile's doing, not by crashes).
	bundle bool
	// publishOut is the output root of a publish rename done but not yet
	// known durable ("" if none).
	publishOut string
	// trap is the co-tenant's replacement armed for the next recovery's
	// look at path, sprung once it looked; planted is set once a symlink is
	// planted inside.
	trap    dirReplaceKind
	sprung  bool
	planted bool
	// linked is set once the co-tenant hard-linked the claim file.
	linked bool
	// claimID and versions are the claim's ID and the bytes its owner
	// wrote, in order (cotenant.go's ABA); aba is set once the co-tenant
	// wrote an earlier version back.
	claimID  string
	versions []dirVersion
	aba      bool
	// recoverAfter is the model's RecoverAfterMs of the claim.
	recoverAfter int64
	// swappedIn is set while the claim file holds a copy of another live
	// claim's (swapin.go); swapRepairAt is the operator's step.
	swappedIn    bool
	swapRepairAt int
	// claimLinked is set while a symlink stands at the claim file's path
	// (symlinkclaim.go).
	claimLinked bool
}

type dirWorld struct {
	// swappedClaims counts the tracks whose swappedIn is set (setSwappedIn).
	swappedClaims int
	world         *sim.World
	opts          DirleaseOptions
	host          *sim.Host
	volume        *sim.Volume
	// places are the hosts and namespaces processes run in (hosts.go).
	places   workkit.Places
	exes     int
	creators int
	respawns int
	paths    int
	swaps    int
	// claims is the durability oracle of the claim directory.
	claims workkit.DoneRecord
	// leftovers follows what power losses left empty or torn.
	leftovers workkit.LeftoverWatch
	workkit.LifeLedger
	tracks map[string]*dirTrack
	// trackOrder is tracks sorted by path, nil until sortedTracks needs it
	// after a track was added.
	trackOrder []*dirTrack
	// sprung counts the tracks whose trap is sprung: fireTraps, run after
	// every step, walked every track to find none in most steps, a few
	// percent of a pile-up run with its hundreds of tracks.
	sprung int
	// foreign counts the tracks whose directory is swapped in (setForeign):
	// repairDue, run after every step, walked every track to find none.
	foreign int
	// owners keeps ownerOf's answers by record content.
	owners map[string]recordOwner
	// parents are the creators' parent directories (parents.go); outside
	// the identities of the directory and file outside the state tree.
	parents []*dirParent
	outside [2]lease.FileIdentity
	links   []outsideLink
	// outsideChecked lets checkOutside skip a step where nothing changed.
	outsideChecked outsideCheck
	// quarantined maps a quarantine path to the directory moved there.
	quarantined map[string]*dirMoved
	// operatorTaken are the claims operators' Quarantines took since the
	// last power loss, which may undo their moves (claimsBackAfterPowerLoss).
	operatorTaken []takenClaim
	// loose is the co-tenant's loosened-mode hazard (loosemode.go).
	loose *workkit.LooseMode
	// claimSymlinks are the co-tenant's links at claim files (symlinkclaim.go).
	claimSymlinks claimSymlinks
	// creating and recovering count calls in flight (the race probe).
	creating, recovering int
	// threadCreates counts a threaded process's threads inside Create (threads.go).
	threadCreates workkit.ThreadCalls
	failure       error
	liveness      *dirLiveness
	// pileup is the crash pile-up before the liveness phase (pileup.go),
	// nil in runs that do not draw it.
	pileup *dirPileup
	// races are the PID-reuse impostors and the double-reclaim probe (races.go).
	races dirRaces
	// left is the "a failed call leaves nothing behind" oracle.
	left *workkit.LeftNothing
	// userClaims are the users' runs by path (users.go).
	userClaims map[string][]*userClaim
	// userCommands are the users' commands by path.
	userCommands *workkit.CLICommands

	// modelBoot and modelBoots are the last boot modelNowMs saw and how
	// many it saw.
	modelBoot  string
	modelBoots int64
}

func (dw *dirWorld) setup() error {
	w, opts := dw.world, dw.opts
	dw.tracks = make(map[string]*dirTrack)
	dw.quarantined = make(map[string]*dirMoved)
	dw.volume = w.AddVolume("disk0")
	dw.claims = workkit.DoneRecord{Name: dirClaimsPath, Read: workkit.UnlessChanged(workkit.DirState(dw.volume.Root(), dirClaimsPath, isClaimFile), dw.volume.Generations)}
	dw.leftovers = workkit.LeftoverWatch{Dirs: []string{dirClaimsPath}} // the quarantine is a sibling, not inside
	dw.volume.FS().MkdirAll(dirleaseHome, 0o700, dirleaseUID)
	dw.loose = &workkit.LooseMode{Volume: dw.volume, UID: dirleaseUID, Home: dirleaseHome, Parts: dirlease.RootDir,
		Engine: "dirlease", Unsafe: dirlease.ErrUnsafe}
	dw.setupParents()
	dw.setupOutside()
	dw.places = workkit.DrawPlaces(w, dw.volume, opts.PIDMax, true, &dw.LifeLedger)
	dw.host = dw.places.Hosts[0]
	w.Tracef("dirlease-workload creators=%d recoverers=%d ops=%d", opts.Creators, opts.Recoverers, opts.OpsPerProc)
	dw.races.start(dw)
	for i := 0; i < opts.Creators; i++ {
		if _, err := dw.spawnAt(dw.places.Deal(i), fmt.Sprintf("creator-%d", i), dw.creator); err != nil {
			return err
		}
		dw.creators++
	}
	for i := 0; i < opts.Recoverers; i++ {
		if _, err := dw.spawnAt(dw.places.Deal(i), fmt.Sprintf("recoverer-%d", i), dw.recoverer); err != nil {
			return err
		}
		dw.creators++
	}
	for i := 0; i < opts.Operators; i++ {
		if _, err := dw.spawnAt(dw.places.Deal(i+1), fmt.Sprintf("operator-%d", i), dw.operator); err != nil {
			return err
		}
		dw.creators++
	}
	if err := dw.spawnThreads(); err != nil {
		return err
	}
	if err := dw.setupUsers(); err != nil {
		return err
	}
	w.FaultHook(sim.FaultRenameRace, dw.swap)
	w.FaultHook(sim.FaultCotenant, dw.cotenant)
	w.OnExit(dw.exited)
	w.Invariant("dirlease", dw.check)
	dw.left = workkit.NewLeftNothing(w, "dirlease", workkit.StatecasResidue(func(name string) bool {
		return fspath.Dir(name) == dirClaimsPath && isClaimFile(name[len(dirClaimsPath)+1:])
	}))
	return nil
}

// spawnAt starts a process at place (a host and PID namespace).
func (dw *dirWorld) spawnAt(place workkit.Place, name string, body func(p *sim.Proc)) (*sim.Proc, error) {
	dw.exes++
	p, err := dw.world.Spawn(place.Host, place.Spec(sim.ProcSpec{Name: name, UID: dirleaseUID,
		Exe: fmt.Sprintf("/usr/bin/dirlease-%d", dw.exes)}), body)
	if err != nil {
		return nil, err
	}
	dw.Track(p)
	return p, nil
}

func (dw *dirWorld) config(p *sim.Proc, clock lease.Clock) (dirlease.Config, *dirFS) {
	fsys := &dirFS{FS: p.FS(), dw: dw, p: p}
	boot, fixed := clock.(dirlease.BootClock)
	if !fixed {
		boot = hostBootClock{clock}
	}
	return dirlease.Config{StateHome: dirleaseHome, FS: fsys, Clock: clock, BootClock: boot, Inspector: p.Inspector(), IDs: p.IDs()}, fsys
}

// hostBootClock is the host's boot clock: a simulated host's Monotonic is
// shared by its processes and restarts at reboot.
type hostBootClock struct{ lease.Clock }

func (c hostBootClock) SinceBoot() time.Duration { return c.Monotonic() }

// modelRebootGapMs is how far the model's time jumps at each reboot: more
// than any launching window (a reboot ends every window).
const modelRebootGapMs = 1 << 30

// modelNowMs is the time the dirlease model judges launching windows by, as
// the engine does (dirlease measures them on the boot clock): simulated
// time, which no wall-clock step moves, plus modelRebootGapMs for each
// reboot seen, so that a window never spans a reboot.
func (dw *dirWorld) modelNowMs() int64 {
	if boot := dw.bootsKey(); boot != dw.modelBoot {
		dw.modelBoot = boot
		dw.modelBoots++
	}
	return time.Duration(dw.world.Now()).Milliseconds() + dw.modelBoots*modelRebootGapMs
}

// fixedClock is a Clock whose wall time is one instant: a recovery pass
// runs at the NowMs its history input names.
type fixedClock struct {
	lease.Clock
	now  time.Time
	boot time.Duration
}

func (c fixedClock) Now() time.Time { return c.now }

// SinceBoot is the host's boot clock at the same instant as now.
func (c fixedClock) SinceBoot() time.Duration { return c.boot }

// dirHeld is a creator's lease and what it knows of it.
type dirHeld struct {
	l     *dirlease.Lease
	path  string
	out   string
	role  models.DirRole
	child *sim.Proc
}

// creator makes directories, leases them, walks raw ones through their
// phases, publishes bundles, releases and cleans up.
func (dw *dirWorld) creator(p *sim.Proc) {
	d := dw.world.Decisions()
	cfg, _ := dw.config(p, p.Clock())
	var mine *dirHeld
	for i := 0; i < dw.opts.OpsPerProc; i++ {
		choice := d.Intn(100)
		switch {
		case mine == nil:
			mine, _ = dw.create(p, cfg, d.Intn(3) == 0)
		case choice < 20:
			dw.use(p, mine)
		case mine.role == models.RoleBundleStage:
			if choice < 60 && mine.out != "" {
				if dw.publish(p, mine) {
					mine.out = ""
				}
			} else if dw.release(p, mine) {
				mine = nil
			}
		default:
			if !dw.advance(p, mine, choice) {
				mine = nil
			}
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(3))*time.Millisecond)
	}
}

// create makes a fresh private directory and leases it; the error is
// Create's (nil with a nil lease when no directory could be made).
func (dw *dirWorld) create(p *sim.Proc, cfg dirlease.Config, bundle bool) (*dirHeld, error) {
	parent := dw.pickParent()
	if parent == nil {
		return nil, nil
	}
	parent.busy++
	defer func() { parent.busy-- }()
	dw.paths++
	name := fspath.Join(parent.path, fmt.Sprintf("w%d", dw.paths))
	if err := p.FS().Mkdir(name, 0o700); err != nil {
		return nil, nil
	}
	t := &dirTrack{path: name, owner: p, bundle: bundle}
	dw.addTrack(t)
	h := &dirHeld{path: name, role: models.RoleRawWorking}
	request := dirlease.CreateRequest{Role: dirlease.RoleRawWorking, Path: name}
	if bundle {
		h.role, h.out = models.RoleBundleStage, name+".out"
		request.Role, request.OutputRoot = dirlease.RoleBundleStage, h.out
	}
	now := p.Clock().Now().UnixMilli()
	window := int64(dw.world.Decisions().Intn(dirleaseLaunchWindowMs))
	if dw.world.Decisions().Intn(dirleaseLongWindowOdds) == 0 {
		window = int64(dw.world.Decisions().Intn(dirleaseLongWindowMs))
	}
	request.RecoverAfterMs = now + window
	in := models.DirCreate{Proc: p.ProcessID(), Host: p.Host().Name(), Path: name, Role: h.role, RecoverAfterMs: dw.modelNowMs() + window}
	t.claimed, t.recoverAfter = true, in.RecoverAfterMs
	dw.creating++
	if dw.recovering > 0 {
		dw.world.Probe("dirlease-recover-raced-create")
	}
	op := p.Begin("create", in)
	dw.claims.Begin()
	leave := dw.enterCreate(p)
	call := p.BeginCall()
	watch := dw.loose.Watch(dw.world)
	l, err := dirlease.Create(call.Context(), cfg, request)
	dw.judgeLoose(p, "Create", watch, err)
	dw.left.After(call, workkit.Outcome{Op: "create", Err: err, Failed: err != nil, Products: !dw.withdrawBlocked(err)})
	leave()
	dw.claims.End(err == nil)
	dw.creating--
	if err != nil {
		p.End(op, models.Unknown{})
		dw.world.Probe("dirlease-create-error")
		return nil, err
	}
	p.End(op, models.DirCreateResult{ClaimID: l.Claim().ID})
	t.created = true
	dw.noteVersion(t, l.Claim().ID, models.DirPreparing, nil)
	dw.world.Probe("dirlease-created")
	h.l = l
	return h, nil
}

// advance takes one lifecycle step of a raw lease; false means done.
func (dw *dirWorld) advance(p *sim.Proc, h *dirHeld, choice int) bool {
	switch h.l.Claim().Phase {
	case dirlease.PhasePreparing, dirlease.PhaseSettled:
		if choice < 60 {
			dw.update(p, h, dirlease.PhaseLaunching, nil)
			return true
		}
		return !dw.release(p, h)
	case dirlease.PhaseLaunching:
		if choice < 70 {
			child, err := dw.spawnAt(placeOf(p), p.Name()+"-child", dw.childBody)
			if err != nil {
				return true
			}
			dw.update(p, h, dirlease.PhaseRunning, child)
			return true
		}
		dw.update(p, h, dirlease.PhaseSettled, nil)
	case dirlease.PhaseRunning:
		dw.update(p, h, dirlease.PhaseSettled, nil)
	}
	return true
}

// update records one phase change and keeps the ground truth's child.
func (dw *dirWorld) update(p *sim.Proc, h *dirHeld, phase dirlease.Phase, child *sim.Proc) {
	claim := h.l.Claim()
	in := models.DirUpdate{Proc: p.ProcessID(), Path: h.path, ClaimID: claim.ID, Role: h.role, FromPhase: modelmap.DirPhase(claim.Phase),
		ToPhase: modelmap.DirPhase(phase)}
	if h.child != nil {
		in.FromChild = h.child.ID()
	}
	pid := 0
	if child != nil {
		in.Child, in.ChildHost, pid = child.ID(), child.Host().Name(), child.Table().PID
	}
	t := dw.tracks[h.path]
	if phase != dirlease.PhaseRunning {
		t.child = nil // unsure from now on: never blame a recovery for it
	}
	stale := t.aba
	swapped, linked := t.swappedIn, t.claimLinked
	op := p.Begin("update", in)
	dw.claims.Begin()
	call := p.BeginCall()
	err := h.l.Update(call.Context(), phase, pid)
	dw.left.After(call, workkit.Outcome{Op: "update", Err: err, Failed: err != nil})
	dw.noteClaimSymlinkCAS(linked, err)
	kind, known := modelmap.DirCAS(err)
	dw.claims.End(known && kind == models.CASOK)
	if !known {
		p.End(op, models.Unknown{})
		dw.world.Probe("dirlease-update-error")
		return
	}
	p.End(op, models.DirUpdateResult{Kind: kind})
	dw.noteSwappedRefusal(swapped, kind)
	if kind == models.CASChanged && stale {
		dw.world.Probe("dirlease-aba-refused")
	}
	if kind == models.CASOK {
		h.child = child
		t.child = child
		dw.noteVersion(t, claim.ID, in.ToPhase, child)
		dw.world.Probe("dirlease-updated-" + string(phase))
	}
}

// release records a Release and then removes the owner's directory.
func (dw *dirWorld) release(p *sim.Proc, h *dirHeld) bool {
	if h.l.Released() {
		return true
	}
	claim := h.l.Claim()
	in := models.DirRelease{Proc: p.ProcessID(), Path: h.path, ClaimID: claim.ID, Phase: modelmap.DirPhase(claim.Phase)}
	if h.child != nil {
		in.Child = h.child.ID()
	}
	stale := dw.tracks[h.path].aba
	swapped, linked := dw.tracks[h.path].swappedIn, dw.tracks[h.path].claimLinked
	op := p.Begin("release", in)
	dw.claims.Begin()
	call := p.BeginCall()
	err := h.l.Release(call.Context())
	dw.left.After(call, workkit.Outcome{Op: "release", Err: err, Failed: err != nil})
	dw.noteClaimSymlinkCAS(linked, err)
	kind, known := modelmap.DirCAS(err)
	dw.claims.End(known && kind == models.CASOK)
	if !known {
		p.End(op, models.Unknown{})
		dw.world.Probe("dirlease-release-error")
		return false
	}
	p.End(op, models.DirReleaseResult{Kind: kind})
	dw.noteSwappedRefusal(swapped, kind)
	if kind == models.CASChanged && stale {
		dw.world.Probe("dirlease-aba-refused")
	}
	if kind != models.CASOK {
		return false
	}
	dw.world.Probe("dirlease-released")
	t := dw.tracks[h.path]
	t.claimed = false
	if h.out == "" && h.role == models.RoleBundleStage {
		return true // published: the output belongs downstream
	}
	dw.using(h.path, func() {
		if !t.foreign && !dw.parentSwapped(h.path) && p.FS().Remove(h.path) == nil {
			dw.world.RecordEvent("remove", models.DirRemove{Path: h.path})
		}
	})
	return true
}

// publish renames a bundle stage to its output root as a crash-safe
// publisher does: rename, then fsync the parent. DirPublish is recorded
// only once the rename is durable: a power loss may undo an unsynced rename,
// and the model has no event that puts a published directory back. Until
// then the rename is pending (publishOut), and the publisher's exit settles
// it (settlePublish) before any recovery can act on the dead owner's claim.
// A failed fsync leaves it pending: the publisher no longer knows where its
// stage is, and stops looking at it (use).
func (dw *dirWorld) publish(p *sim.Proc, h *dirHeld) (done bool) {
	t := dw.tracks[h.path]
	if t.foreign || dw.parentSwapped(h.path) {
		return false
	}
	dw.using(h.path, func() { done = dw.publishIn(p, h, t) })
	return done
}

// publishIn is publish with the parent marked busy.
func (dw *dirWorld) publishIn(p *sim.Proc, h *dirHeld, t *dirTrack) bool {
	if err := p.FS().Rename(h.path, h.out); err != nil {
		return false
	}
	t.publishOut = h.out
	if statefile.SyncDir(p.FS(), fspath.Dir(h.path)) != nil {
		dw.world.Probe("dirlease-publish-sync-failed")
		return true
	}
	t.publishOut = ""
	dw.world.RecordEvent("publish", models.DirPublish{Path: h.path})
	dw.world.Probe("dirlease-published")
	return true
}

// settlePublish resolves the pending publish renames of owner p, which just
// ended. After a power loss the volume is already in its crash state: the
// rename either survived (DirPublish) or was undone (the stage is back at
// its path, as the model already holds, or gone with its unsynced mkdir:
// DirRemove). After any other exit the rename is
// in the page cache, visible to every recovery; the operator's view flushes
// the parent (writeback may happen at any time) so a later power loss
// cannot undo it, and records DirPublish.
func (dw *dirWorld) settlePublish(p *sim.Proc, reason sim.ExitReason) {
	root := dw.volume.Root()
	for _, t := range dw.sortedTracks() {
		if t.owner != p || t.publishOut == "" {
			continue
		}
		out := t.publishOut
		t.publishOut = ""
		if reason != sim.ExitPowerLoss {
			workkit.SyncRoot(root, fspath.Dir(t.path))
		} else if _, err := root.Lstat(out); err != nil {
			if _, err := root.Lstat(t.path); err != nil {
				// The stage's mkdir was not durable either: it is gone.
				dw.world.RecordEvent("remove", models.DirRemove{Path: t.path})
				dw.world.Probe("dirlease-publish-and-mkdir-undone-by-powerloss")
				continue
			}
			dw.world.Probe("dirlease-publish-undone-by-powerloss")
			continue
		}
		dw.world.RecordEvent("publish", models.DirPublish{Path: t.path})
		dw.world.Probe("dirlease-published")
	}
}

// use looks at the leased directory: the claimed one, another, or none.
func (dw *dirWorld) use(p *sim.Proc, h *dirHeld) {
	if dw.tracks[h.path].publishOut != "" {
		return // a publish of unknown durability: where the stage is is unknown
	}
	if dw.parentSwapped(h.path) {
		return // the co-tenant swapped the parent: the model has no event for it
	}
	dw.using(h.path, func() { dw.useIn(p, h) })
}

// useIn is use with the parent marked busy.
func (dw *dirWorld) useIn(p *sim.Proc, h *dirHeld) {
	op := p.Begin("use", models.DirUse{Proc: p.ProcessID(), Path: h.path})
	info, err := p.FS().Lstat(h.path)
	var kind models.DirUseKind
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kind = models.UseMissing
	case err != nil:
		p.End(op, models.Unknown{})
		return
	default:
		id, ok := info.Identity()
		kind = models.UseForeign
		if ok && dirlease.IdentityOf(id) == h.l.Claim().DirectoryIdentity {
			kind = models.UsePresent
		}
	}
	if kind == models.UseForeign {
		dw.world.Probe("dirlease-use-foreign")
	}
	p.End(op, models.DirUseResult{Kind: kind})
}

// recoverer runs recovery passes concurrently with the creators.
func (dw *dirWorld) recoverer(p *sim.Proc) {
	d := dw.world.Decisions()
	for i := 0; i < dw.opts.OpsPerProc; i++ {
		dw.recoverRecorded(p)
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(8))*time.Millisecond)
	}
}

// recoverRecorded runs one recovery pass at a fixed NowMs and records it.
func (dw *dirWorld) recoverRecorded(p *sim.Proc) (dirlease.Report, error, bool) {
	now := p.Clock().Now()
	cfg, fsys := dw.config(p, fixedClock{Clock: p.Clock(), now: now, boot: p.Host().Monotonic()})
	in := models.DirRecover{Proc: p.ProcessID(), Host: p.Host().Name(), NowMs: dw.modelNowMs()}
	dw.recovering++
	if dw.creating > 0 {
		dw.world.Probe("dirlease-recover-raced-create")
	}
	fsys.recovering, fsys.swappedReads = true, nil
	dw.noteThreadRecover(p)
	swapped := dw.anySwappedIn()
	op := p.Begin("recover", in)
	dw.claims.Begin()
	dw.races.begin(p)
	call := p.BeginCall()
	watch := dw.loose.Watch(dw.world)
	report, err := dirlease.Recover(call.Context(), cfg)
	dw.judgeLoose(p, "Recover", watch, err)
	dw.left.After(call, workkit.Outcome{Op: "recover", Err: err, Failed: err != nil})
	dw.races.end(p)
	dw.claims.End(err == nil)
	fsys.recovering = false
	dw.recovering--
	w := dw.world
	if err != nil {
		if errors.Is(err, dirlease.ErrChanged) && strings.Contains(err.Error(), "target changed") {
			w.Probe("dirlease-rename-race-refused")
		}
		dw.noteRefusal(err)
		dw.noteSwappedRecovery(swapped, err)
		dw.noteClaimSymlinkRecovery(fsys, err)
		w.Probe("dirlease-recover-failed")
		p.End(op, models.DirRecoverResult{Failed: true})
		return report, err, false
	}
	p.End(op, models.DirRecoverResult{Recovered: report.Recovered, Published: report.Published, Active: report.Active,
		Indeterminate: report.Indeterminate, ReadSwapped: len(fsys.swappedReads) > 0})
	if report.Recovered > 0 {
		w.Probe("dirlease-stale-owner-recovered")
		w.Probe("dirlease-disposition-recoverable")
	}
	if report.Published > 0 {
		w.Probe("dirlease-recovered-published")
	}
	if report.Active > 0 {
		w.Probe("dirlease-disposition-active")
	}
	if report.Indeterminate > 0 {
		w.Probe("dirlease-disposition-indeterminate")
		dw.noteElsewhere(p)
	}
	return report, nil, true
}

func (dw *dirWorld) exited(p *sim.Proc, reason sim.ExitReason) {
	dw.settlePublish(p, reason)
	dw.NoteExit(p)
	dw.races.exited(p, reason)
	if dw.pileup != nil && dw.liveness == nil {
		dw.pileup.exited(p)
		return
	}
	if dw.liveness != nil {
		dw.liveness.exited(p)
		return
	}
	if strings.HasSuffix(p.Name(), "-child") {
		return
	}
	if isPIDImpostor(p) {
		dw.creators--
		if dw.creators == 0 {
			dw.startLiveness()
		}
		return
	}
	dw.creators--
	if reason != sim.ExitFinished && dw.respawns < dw.opts.RespawnsMax {
		dw.respawns++
		body := dw.creator
		if strings.HasPrefix(p.Name(), "recoverer") {
			body = dw.recoverer
		} else if strings.HasPrefix(p.Name(), "operator") {
			body = dw.operator
		} else if strings.HasPrefix(p.Name(), "user-recover") {
			body = dw.userRecoverer
		} else if strings.HasPrefix(p.Name(), "user-") {
			body = dw.user
			dw.world.Probe("dirlease-user-rerun")
		}
		if _, err := dw.spawnAt(placeOf(p), p.Name(), body); err == nil {
			dw.creators++
			dw.world.Probe("dirlease-respawn")
		}
	}
	if dw.creators == 0 {
		dw.startLiveness()
	}
}

func (dw *dirWorld) check() error {
	w := dw.world
	boot := dw.Boot()
	dw.NoteReboot()
	// A volume shared by two hosts survives a host's power loss and the
	// other host's calls go on: nothing to judge (as in admissionwork).
	if dw.Boot() != boot && len(dw.places.Hosts) == 1 {
		dw.judgeDurability()
		dw.leftovers.AfterPowerLoss(w, dw.volume.Root())
		dw.claimsBackAfterPowerLoss()
	}
	dw.leftovers.Check(w, dw.volume.Root())
	dw.checkOutside()
	dw.checkClaimSymlinks()
	dw.fireTraps()
	dw.fireClaimSymlinkTrap()
	dw.repairParents(false)
	dw.repairDue(false)
	dw.repairSwappedClaims(false)
	dw.repairClaimSymlinks(false)
	if l := dw.liveness; l != nil && dw.failure == nil && !l.done && w.Step()-l.startStep > dw.opts.LivenessStepsMax {
		dw.fail(fmt.Errorf("liveness: claims left %d steps after the workload ended", dw.opts.LivenessStepsMax), true)
	}
	return dw.failure
}
