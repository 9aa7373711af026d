package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/simproc"
)

// The lease workload: processes on several hosts acquire, inspect and
// release the lease of one namespace (package lease), run fenced work inside
// WithCurrentLease that writes a protected file, present stale generations,
// and impostors present generations they learned from Inspect. Every call
// and return goes into the history as the models package's lease types, so
// CheckLeaseHistory can run porcupine on it.
//
// Ground truth, checked after every step (World.Invariant):
//   - fenced-exclusive: at most one process is inside a WithCurrentLease fn
//     at any time, it entered with a generation it acquired itself, and its
//     epoch is not below the last epoch that entered (fencing tokens only
//     grow at the protected resource);
//   - epoch-increase: every Acquired epoch is new, and larger than every
//     epoch returned before the acquire was called;
//   - quarantine: every reclaim an acquire reports has its owner.json, with
//     the reclaimed generation, under quarantine/ (checked when reported and
//     again at the end of the run);
//   - liveness (see leaseLiveness): once the workload ends, faults stop and
//     every holder is dead, a fresh process acquires within a bound.
//
// The workload-specific faults are hostile: FaultCorrupt corrupts a lease
// file from outside (truncates or garbles owner.json, the guard or an
// intent, or puts a plain file at receiver.lock) and schedules an operator
// repair; FaultRenameRace swaps receiver.lock, owner.json or the guard for an
// identical copy (a new inode under the same name, between one process's
// check and its use).
//
// The liveness rule. A refusal that needs a human is an expected outcome
// only while the human-needed state has a cause outside the engine: a
// corruption made by the hostile hook and not yet repaired, or a record on
// another host (avoided at the end by probing from the record's host). The
// hook remembers the exact bytes it wrote; the operator repair undoes only
// those (moves receiver.lock into quarantine, removes a garbled guard or
// intent once its writer is dead). At the end every hostile corruption has
// been repaired, so any corrupt owner, empty receiver.lock, corrupt guard,
// intent or epoch the final probe meets was produced by crashes alone: a
// liveness finding, as is a Held verdict for an owner that had died before
// the probe's call, or a probe that exhausts its attempts. Judging a verdict
// against the ground truth uses the state at the call, not at the return:
// a zombie reaped, or a corruption repaired, during the call may explain it.
// Before the probe, a bystander process with the same executable is put on
// a dead owner's free PID (simproc's PID churn moves the cursor), so a
// start-time check is what must call that owner stale. An owner from an
// earlier boot gets a twin instead: a boot-time daemon with its PID, its
// start tick and its executable, so only the boot-id check can call it stale.
//
// History. Each process incarnation has its own lane; every acquire sends a
// fresh session nonce; deaths (exit, crash, power loss, or the reap of a
// zombie whose threads kept it alive) are ProcessDeath events; a hostile
// owner corruption is LeaseCorruption and its repair LeaseClear. An acquire
// reclaims a stale owner in one guarded step and installs in a later one,
// and others can see the lease empty in between, which one linearization
// point cannot explain: the workload's FS wrapper records the move of
// receiver.lock into quarantine as its own LeaseReclaim event at the step
// it happens, which the model accepts only while the owner is dead (a
// reclaim of a live owner is the two-owners bug); the ground truth checks
// the same. That move is durable only once the reclaimer has fsynced both
// directories, which it has when its acquire answers: a power loss before
// then may undo it, and the event is then marked undone and left out of
// the history (settleReclaims). Restarted workers run their own
// executable, so no restart is an exact identity twin (same PID, start tick
// and executable) of a dead owner: no identity rule, and no model, can tell
// such a twin from the owner.

// LeaseLayout says how hosts mount the lease namespace.
type LeaseLayout int

const (
	// LeaseLayoutDrawn draws Shared or PerHost from the run's decisions.
	LeaseLayoutDrawn LeaseLayout = iota
	// LeaseLayoutShared mounts one volume on every host (a network mount):
	// remote-owner refusals happen; a power loss kills processes only.
	LeaseLayoutShared
	// LeaseLayoutPerHost gives each host its own volume and lease: a power
	// loss reduces the volume to a simfs crash state.
	LeaseLayoutPerHost
)

func (l LeaseLayout) String() string {
	switch l {
	case LeaseLayoutDrawn:
		return "drawn"
	case LeaseLayoutShared:
		return "shared"
	case LeaseLayoutPerHost:
		return "perhost"
	}
	return fmt.Sprintf("LeaseLayout(%d)", int(l))
}

// LeaseOptions are the lease workload's knobs. Zero values mean defaults.
type LeaseOptions struct {
	// Hosts is the number of hosts (default 2).
	Hosts int
	// ProcsPerHost is the number of worker processes per host (default 2).
	ProcsPerHost int
	// OpsPerProc is the number of operations a worker performs (default 8).
	OpsPerProc int
	// Impostors is the number of impostor processes on the first host
	// (default 1; -1 means none).
	Impostors int
	// Layout is the volume layout (default drawn per run).
	Layout LeaseLayout
	// RespawnsMax bounds how many crashed workers are restarted in one run
	// (default 2 per worker; -1 means none).
	RespawnsMax int
	// PIDMax is every host's pid_max (default 40: small, so PIDs are reused).
	PIDMax int
	// FenceWork is how long the fenced work sleeps inside WithCurrentLease
	// (default 10ms), so that other processes contend while it runs: a
	// shorter window lets a fenced op that escapes the guard go unseen.
	FenceWork time.Duration
	// GuardWait is the Manager's GuardWait (default 40ms).
	GuardWait time.Duration
	// LivenessStepsMax bounds the steps of the final liveness probe (default 20000).
	LivenessStepsMax int
}

func (o LeaseOptions) withDefaults() LeaseOptions {
	defaultTo(&o.Hosts, 2)
	defaultTo(&o.ProcsPerHost, 2)
	defaultTo(&o.OpsPerProc, 8)
	defaultTo(&o.Impostors, 1)
	defaultTo(&o.PIDMax, 40)
	defaultTo(&o.LivenessStepsMax, 20_000)
	defaultTo(&o.RespawnsMax, 2*o.Hosts*o.ProcsPerHost)
	o.Impostors = max(o.Impostors, 0)
	o.RespawnsMax = max(o.RespawnsMax, 0)
	if o.FenceWork == 0 {
		o.FenceWork = 10 * time.Millisecond
	}
	if o.GuardWait == 0 {
		o.GuardWait = 40 * time.Millisecond
	}
	return o
}

// Paths of the lease workload on every volume.
const (
	leaseStateDir   = "/state"
	leaseNamespace  = "/state/lease"
	leaseProtected  = "/state/protected"
	leaseRootID     = "leasekit-sim"
	leaseUID        = 1000
	leaseProbeHops  = 8
	leaseProbeTries = 400
)

// LeaseWorkload returns a Setup running the lease workload with opts.
// Every run builds fresh state, so RunTwice and replays are deterministic.
func LeaseWorkload(opts LeaseOptions) func(w *World) error {
	opts = opts.withDefaults()
	return func(w *World) error {
		lw := &leaseWorld{world: w, opts: opts}
		return lw.setup()
	}
}

// leaseSpace is one lease namespace: a volume and the hosts mounting it.
type leaseSpace struct {
	index  int
	volume *Volume
	hosts  []*Host
	// key names the namespace in the history (volume:path), so per-host
	// volumes with the same path are separate partitions.
	key string
	// lastFencedEpoch is the largest epoch that entered a fenced section.
	lastFencedEpoch uint64
	// epochs holds every Acquired epoch; epochMaxReturned the largest.
	epochs           map[uint64]string
	epochMaxReturned uint64
	// corruptions are hostile corruptions not yet repaired.
	corruptions []leaseCorruption
	// carried are owner-level corruptions an engine call moved away; a
	// reclaimer that finds it moved the wrong record gives it back, so
	// they are watched for their return.
	carried []leaseCorruption
	// ownerCorrupted is true while a hostile corruption of receiver.lock or
	// owner.json is unrepaired: corrupt-owner refusals are expected then.
	ownerCorrupted bool
	hostileSerial  int
	hostile        lease.FS
	// hostileClearedAt is when the last hostile corruption was repaired
	// or carried away.
	hostileClearedAt int64
	// hostileBytes holds every record body the hook wrote.
	hostileBytes [][]byte
	// trackedNames is the volume's name generation when trackCorruption
	// last looked at this space (tracked says it has looked).
	trackedNames uint64
	tracked      bool
}

// hostileSwaps counts the rename races the hook made so far (any space).
func (lw *leaseWorld) hostileSwaps() int {
	p := lw.world.probes
	return p["lease-hostile-swap-receiver"] + p["lease-hostile-swap-owner"] + p["lease-hostile-swap-guard"]
}

func (s *leaseSpace) hostileWrote(data []byte) bool {
	for _, written := range s.hostileBytes {
		if bytes.Equal(written, data) {
			return true
		}
	}
	return false
}

// leaseCorruption is one hostile corruption and its pending repair.
type leaseCorruption struct {
	kind     string // "owner", "receiver", "guard", "intent"
	path     string
	written  []byte
	writer   leaseWriter // guard and intent: the record's process
	repairAt int
}

// leaseWriter names a process recorded in a guard or intent.
type leaseWriter struct {
	host       string
	pid        int
	startTicks string
	boot       string
}

// leaseInside is a process inside a WithCurrentLease fn.
type leaseInside struct {
	proc       *Proc
	generation string
	epoch      uint64
}

// leaseReclaimCheck is a reported reclaim whose quarantine record is checked.
type leaseReclaimCheck struct {
	space      *leaseSpace
	path       string
	generation string
	proc       string
}

type leaseWorld struct {
	// parsedRecords memoizes parseRecord (see leaseWorld.parseRecord).
	parsedRecords map[string]parsedRecord
	world         *World
	opts          LeaseOptions
	layout        LeaseLayout
	spaces        []*leaseSpace
	// spaceOf maps a host to its lease space.
	spaceOf map[*Host]*leaseSpace
	// inside is the process inside a fenced section, per space.
	inside map[*leaseSpace]*leaseInside
	// acquirer maps a generation to the process whose acquire returned it.
	acquirer map[string]*Proc
	// sessions counts session nonces; sessionProc maps one to its acquirer.
	sessions    int
	sessionProc map[string]*Proc
	// workers is the number of live (or restartable) workload processes.
	workers     int
	respawns    int
	deathByProc map[*simproc.Proc]*Proc
	// deathAt is when each recorded death happened (simulated time).
	deathAt     map[*Proc]int64
	checks      []leaseReclaimCheck
	moves       []leaseMove
	allReclaims []leaseReclaimCheck
	// reclaimsPending are the reclaim events whose move into quarantine is
	// not known durable yet: their acquire has not answered.
	reclaimsPending []leasePendingReclaim
	// failure is a ground-truth violation found inside a body or hook,
	// reported by the next invariant check.
	failure  error
	liveness *leaseLiveness
}

func (lw *leaseWorld) setup() error {
	w, opts := lw.world, lw.opts
	lw.layout = opts.Layout
	if lw.layout == LeaseLayoutDrawn {
		lw.layout = LeaseLayoutShared + LeaseLayout(w.Decisions().Intn(2))
	}
	w.Tracef("lease-workload layout=%v hosts=%d procs=%d ops=%d impostors=%d", lw.layout, opts.Hosts,
		opts.ProcsPerHost, opts.OpsPerProc, opts.Impostors)
	lw.spaceOf = make(map[*Host]*leaseSpace)
	lw.inside = make(map[*leaseSpace]*leaseInside)
	lw.acquirer = make(map[string]*Proc)
	lw.sessionProc = make(map[string]*Proc)
	lw.deathByProc = make(map[*simproc.Proc]*Proc)
	lw.deathAt = make(map[*Proc]int64)
	var shared *leaseSpace
	for i := 0; i < opts.Hosts; i++ {
		space := shared
		if space == nil {
			volume := w.AddVolume(fmt.Sprintf("disk%d", i))
			volume.FS().MkdirAll(leaseStateDir, 0o777, 0)
			space = &leaseSpace{index: len(lw.spaces), volume: volume, key: volume.Name() + ":" + leaseNamespace,
				epochs: make(map[uint64]string)}
			lw.spaces = append(lw.spaces, space)
			if lw.layout == LeaseLayoutShared {
				shared = space
			}
		}
		h := w.AddHost(HostSpec{Name: fmt.Sprintf("host%d", i), PIDMax: opts.PIDMax, Volume: space.volume})
		space.hosts = append(space.hosts, h)
		lw.spaceOf[h] = space
		for j := 0; j < opts.ProcsPerHost; j++ {
			if err := lw.spawn(h, fmt.Sprintf("worker-%d-%d", i, j), lw.worker); err != nil {
				return err
			}
		}
	}
	for i := 0; i < opts.Impostors; i++ {
		if err := lw.spawn(w.Hosts()[0], fmt.Sprintf("impostor-%d", i), lw.impostor); err != nil {
			return err
		}
	}
	w.FaultHook(FaultCorrupt, lw.corrupt)
	w.FaultHook(FaultRenameRace, lw.renameRace)
	w.OnExit(lw.exited)
	w.OnReap(lw.reaped)
	w.Invariant("lease", lw.check)
	return nil
}

func (lw *leaseWorld) spawn(h *Host, name string, body func(p *Proc)) error {
	return lw.spawnExe(h, name, "", body)
}

func (lw *leaseWorld) spawnExe(h *Host, name, exe string, body func(p *Proc)) error {
	p, err := lw.world.Spawn(h, ProcSpec{Name: name, UID: leaseUID, Exe: exe}, body)
	if err != nil {
		return err
	}
	lw.deathByProc[p.Table()] = p
	lw.workers++
	return nil
}

// manager returns a Manager over p's environment.
func (lw *leaseWorld) manager(p *Proc) *lease.Manager {
	m, err := lease.NewManager(lease.Config{Namespace: leaseNamespace, RootID: leaseRootID, FS: &leaseFS{FS: p.FS(), lw: lw, p: p},
		Clock: p.Clock(), Inspector: p.Inspector(), IDs: p.IDs(), GuardWait: lw.opts.GuardWait})
	if err != nil {
		panic(err)
	}
	return m
}

// leaseFS observes the one engine step the history cannot show by itself:
// the move of a stale receiver.lock into quarantine. An acquire reclaims in
// one guarded step and installs in a later one, and other processes may see
// the namespace empty in between, so the reclaim is recorded as its own
// instantaneous event (models.LeaseReclaim, legal only while the owner is
// dead) at the step it happened; the reclaimed owner is also checked dead
// against the ground truth (checkMove).
type leaseFS struct {
	lease.FS
	lw *leaseWorld
	p  *Proc
}

func (f *leaseFS) RenameNoReplace(oldpath, newpath string) error {
	err := f.FS.RenameNoReplace(oldpath, newpath)
	f.observe(oldpath, newpath, err)
	return err
}

func (f *leaseFS) Rename(oldpath, newpath string) error {
	err := f.FS.Rename(oldpath, newpath)
	f.observe(oldpath, newpath, err)
	return err
}

func (f *leaseFS) observe(oldpath, newpath string, err error) {
	if err == nil && oldpath == leaseGuardPath {
		// Only a reclaimer moves the guard (its holder removes it).
		f.lw.world.Probe("lease-stale-guard-reclaimed")
	}
	if err != nil || oldpath != leaseReceiver() || !strings.HasPrefix(newpath, leaseQuarantinePath+"/") {
		return
	}
	lw, space := f.lw, f.lw.space(f.p)
	lw.world.RecordEvent("reclaim", models.LeaseReclaim{Namespace: space.key})
	lw.reclaimsPending = append(lw.reclaimsPending, leasePendingReclaim{event: len(lw.world.history) - 1,
		space: space, path: newpath, proc: f.p})
	lw.moves = append(lw.moves, leaseMove{space: space, path: newpath, proc: f.p})
	lw.world.Probe("lease-reclaim-observed")
}

// leaseReclaimUndone is the Op of a reclaim event that a power loss undid
// before it was durable; LeaseOperations leaves it out of the history.
const leaseReclaimUndone = "reclaim-undone"

// leasePendingReclaim is a recorded reclaim event (history index) whose
// move into quarantine is not known durable yet: the reclaimer has not
// answered, so it may not have fsynced both directories.
type leasePendingReclaim struct {
	event int
	space *leaseSpace
	path  string
	proc  *Proc
}

// settleReclaims resolves p's pending reclaims once its Acquire answered
// (answered, with err) or p exited (reason). An answer makes them durable
// by the engine's contract (both directories fsynced before it returns),
// unless the answer is an error. After a power loss the volume is already
// in its crash state: a move that it undid (receiver.lock back, the
// quarantine entry gone) never happened for any later observer, so its
// event is marked undone; an unanswered reclaim is not acknowledged, so
// the engine may lose it. After an error or any other exit the move is in
// the page cache, which writeback may flush at any time: the operator's
// view flushes both directories so that a later power loss cannot undo it.
func (lw *leaseWorld) settleReclaims(p *Proc, answered bool, err error, reason ExitReason) {
	kept := lw.reclaimsPending[:0]
	for _, r := range lw.reclaimsPending {
		if r.proc != p {
			kept = append(kept, r)
			continue
		}
		if _, ok := lw.world.history[r.event].Input.(models.LeaseReclaim); !ok {
			panic(fmt.Sprintf("sim: pending reclaim %d of %s is a %s event", r.event, p.Name(), lw.world.history[r.event].Op))
		}
		root := r.space.volume.Root()
		switch {
		case answered && err == nil:
		case !answered && reason == ExitPowerLoss:
			_, errQuarantine := root.Lstat(r.path)
			_, errReceiver := root.Lstat(leaseReceiver())
			if errQuarantine != nil && errReceiver == nil {
				lw.world.history[r.event].Op = leaseReclaimUndone
				lw.world.Probe("lease-reclaim-undone-by-powerloss")
			}
		default:
			syncRoot(root, leaseNamespace)
			syncRoot(root, leaseQuarantinePath)
		}
	}
	lw.reclaimsPending = kept
}

// leaseMove is a move of receiver.lock into quarantine, checked between
// steps (a root view read inside a process would draw injected errors).
type leaseMove struct {
	space *leaseSpace
	path  string
	proc  *Proc
}

// checkMove checks that a reclaimed owner was dead in the ground truth.
func (lw *leaseWorld) checkMove(m leaseMove) error {
	data, err := readRoot(m.space.volume.Root(), fspath.Join(m.path, "owner.json"))
	record, ok := lw.parseRecord(data)
	if err == nil && !ok && m.space.hostileWrote(data) {
		// The hook corrupted owner.json between the engine's last check
		// and its rename: the corrupt record is the evidence now.
		lw.world.Probe("lease-reclaim-raced-corruption")
		return nil
	}
	if err != nil || !ok {
		return fmt.Errorf("%s moved receiver.lock into %s without a valid owner.json (%v, %q)", m.proc.Name(), m.path, err, data)
	}
	if owner := lw.sessionProc[record.Session]; owner != nil && lw.deathByProc[owner.Table()] == owner {
		return fmt.Errorf("%s reclaimed the lease of live owner %s (generation %s, PID %d on %s)", m.proc.Name(),
			owner.Name(), record.Generation, record.PID, record.Hostname)
	}
	return nil
}

// held is a lease a process knows about: its own, or one it learned.
type held struct {
	generation, session string
	epoch               uint64
}

// worker acquires, works under the lease, releases, and presents stale
// generations.
func (lw *leaseWorld) worker(p *Proc) {
	m := lw.manager(p)
	d := lw.world.Decisions()
	var mine *held
	var stale []held
	for i := 0; i < lw.opts.OpsPerProc; i++ {
		choice := d.Intn(100)
		switch {
		case mine != nil && choice < 55:
			lw.withCurrent(p, m, *mine)
		case mine != nil && choice < 85:
			if lw.release(p, m, *mine) {
				stale = append(stale, *mine)
				mine = nil
			}
		case mine == nil && choice < 60:
			if got, ok := lw.acquire(p, m); ok {
				mine = &got
			}
		case len(stale) > 0 && choice < 80:
			lw.withCurrent(p, m, stale[d.Intn(len(stale))])
		case len(stale) > 0 && choice < 90:
			lw.release(p, m, stale[d.Intn(len(stale))])
		default:
			lw.inspect(p, m)
		}
		lw.pause(p, d)
	}
	if mine != nil && d.Intn(2) == 0 {
		lw.release(p, m, *mine) // else exit holding it: the lease must be reclaimed
	}
}

// impostor learns generations from Inspect and presents them.
func (lw *leaseWorld) impostor(p *Proc) {
	m := lw.manager(p)
	d := lw.world.Decisions()
	for i := 0; i < lw.opts.OpsPerProc; i++ {
		if learned, ok := lw.inspect(p, m); ok {
			switch d.Intn(3) {
			case 0:
				lw.withCurrent(p, m, learned)
			case 1:
				lw.release(p, m, learned)
			}
		}
		lw.pause(p, d)
	}
}

func (lw *leaseWorld) pause(p *Proc, d *Decisions) {
	if wait := time.Duration(d.Intn(4)) * time.Millisecond; wait > 0 {
		_ = p.Clock().Sleep(context.Background(), wait)
	}
}

func (lw *leaseWorld) space(p *Proc) *leaseSpace { return lw.spaceOf[p.Host()] }

func (lw *leaseWorld) acquire(p *Proc, m *lease.Manager) (held, bool) {
	res, session, err := lw.acquireRecorded(p, m)
	if err != nil || res.Kind != lease.Acquired {
		return held{}, false
	}
	return held{generation: res.Owner.Generation, session: session, epoch: res.Owner.Epoch}, true
}

// acquireRecorded runs Acquire with a fresh session nonce, records it, and
// checks its epoch and reclaims against the ground truth.
func (lw *leaseWorld) acquireRecorded(p *Proc, m *lease.Manager) (lease.AcquireResult, string, error) {
	space := lw.space(p)
	lw.sessions++
	session := fmt.Sprintf("s%d-p%d", lw.sessions, p.ID())
	lw.sessionProc[session] = p
	in := models.LeaseAcquire{Namespace: space.key, Proc: p.ID(), Host: p.Host().Name(), Session: session}
	epochFloor := space.epochMaxReturned
	swapsBefore := lw.hostileSwaps()
	op := p.Begin("acquire", in)
	res, err := m.Acquire(context.Background(), lease.AcquireRequest{SessionID: session, SessionFile: "/sessions/" + session})
	lw.settleReclaims(p, true, err, ExitFinished)
	lw.noteReclaims(p, space, res.Reclaimed)
	if err != nil {
		p.End(op, nil)
		lw.world.Probe("lease-acquire-error")
		lw.world.Tracef("lease-error proc=%s acquire: %v", p.Name(), err)
		return res, session, err
	}
	out := models.LeaseAcquireResult{Generation: res.Owner.Generation, Epoch: int64(res.Owner.Epoch)}
	for _, r := range res.Reclaimed {
		out.Reclaimed = append(out.Reclaimed, r.Owner.Generation)
	}
	switch res.Kind {
	case lease.Acquired:
		out.Kind = models.LeaseAcquired
		lw.noteEpoch(p, space, res.Owner, epochFloor)
		lw.acquirer[res.Owner.Generation] = p
		lw.world.Probe("lease-acquired")
		if len(res.Reclaimed) > 0 {
			lw.world.Probe("lease-acquired-after-reclaim")
		}
	case lease.Held:
		out.Kind, out.Session = models.LeaseHeld, res.Owner.SessionID
		lw.world.Probe("lease-held")
	case lease.Refused:
		reason, ok := modelReason(res.Refusal.Reason)
		if !ok {
			p.End(op, nil)
			lw.fail(fmt.Errorf("%s: acquire refused %s: %s", p.Name(), res.Refusal.Reason, res.Refusal.Diagnostic), true)
			return res, session, nil
		}
		out = models.LeaseAcquireResult{Kind: models.LeaseAcquireRefused, Reason: reason}
		lw.world.Probe("lease-refused-" + string(res.Refusal.Reason))
		if lw.hostileSwaps() != swapsBefore {
			lw.world.Probe("lease-rename-race-refused") // a swap struck during the call
		}
		if res.Refusal.Human != lease.HumanNone {
			lw.world.Probe("lease-refused-human-" + string(res.Refusal.Human))
		}
	default:
		panic(fmt.Sprintf("sim: acquire kind %v", res.Kind))
	}
	p.End(op, out)
	return res, session, nil
}

// noteEpoch checks that an acquired epoch is new and larger than every
// epoch returned before the acquire was called.
func (lw *leaseWorld) noteEpoch(p *Proc, space *leaseSpace, owner lease.Owner, floor uint64) {
	if previous, seen := space.epochs[owner.Epoch]; seen {
		lw.fail(fmt.Errorf("epoch %d granted twice in %s: to %s and to %s (generation %s)", owner.Epoch, space.key,
			previous, p.Name(), owner.Generation), false)
	}
	if owner.Epoch <= floor {
		lw.fail(fmt.Errorf("%s acquired epoch %d in %s, not above epoch %d returned before its call", p.Name(),
			owner.Epoch, space.key, floor), false)
	}
	space.epochs[owner.Epoch] = p.Name()
	space.epochMaxReturned = max(space.epochMaxReturned, owner.Epoch)
}

func (lw *leaseWorld) noteReclaims(p *Proc, space *leaseSpace, reclaimed []lease.Reclaim) {
	for _, r := range reclaimed {
		lw.world.Probe("lease-reclaimed")
		lw.world.Probe("lease-reclaimed-" + r.Reason)
		check := leaseReclaimCheck{space: space, path: r.QuarantinePath, generation: r.Owner.Generation, proc: p.Name()}
		lw.checks = append(lw.checks, check)
		lw.allReclaims = append(lw.allReclaims, check)
	}
}

func (lw *leaseWorld) release(p *Proc, m *lease.Manager, h held) bool {
	space := lw.space(p)
	in := models.LeaseRelease{Namespace: space.key, Proc: p.ID(), Generation: h.generation, Session: h.session}
	op := p.Begin("release", in)
	res, err := m.Release(context.Background(), h.generation)
	if err != nil && res.Kind != lease.Released {
		p.End(op, nil)
		lw.world.Probe("lease-release-error")
		return false
	}
	var out models.LeaseReleaseResult
	switch res.Kind {
	case lease.Released:
		out.Kind = models.LeaseReleased
		lw.world.Probe("lease-released")
		if lw.acquirer[h.generation] != p {
			lw.world.Probe("lease-released-by-capability")
		}
	case lease.NotOwner:
		out.Kind = models.LeaseNotOwner
		if res.Owner != nil {
			out.OwnerGeneration, out.OwnerSession = res.Owner.Generation, res.Owner.SessionID
		}
		lw.world.Probe("lease-release-not-owner")
	case lease.ReleaseRefused:
		reason, ok := modelReason(res.Refusal.Reason)
		if !ok {
			p.End(op, nil)
			lw.fail(fmt.Errorf("%s: release refused %s: %s", p.Name(), res.Refusal.Reason, res.Refusal.Diagnostic), true)
			return false
		}
		out = models.LeaseReleaseResult{Kind: models.LeaseReleaseRefused, Reason: reason}
		lw.world.Probe("lease-release-refused")
	default:
		panic(fmt.Sprintf("sim: release kind %v", res.Kind))
	}
	p.End(op, out)
	return res.Kind == lease.Released || res.Kind == lease.NotOwner
}

// inspect records an Inspect; it returns the owner it saw, if any.
func (lw *leaseWorld) inspect(p *Proc, m *lease.Manager) (held, bool) {
	space := lw.space(p)
	op := p.Begin("inspect", models.LeaseInspect{Namespace: space.key, Proc: p.ID()})
	projection, err := m.Inspect(context.Background())
	if err != nil {
		p.End(op, nil)
		return held{}, false
	}
	var out models.LeaseInspectResult
	switch projection.Kind {
	case lease.Empty:
		out.Kind = models.LeaseEmpty
	case lease.Owned:
		out = models.LeaseInspectResult{Kind: models.LeaseOwned, Generation: projection.Owner.Generation,
			Session: projection.Owner.SessionID, Epoch: int64(projection.Owner.Epoch)}
	case lease.Corrupt:
		out.Kind = models.LeaseCorrupt
		lw.world.Probe("lease-inspect-corrupt")
	}
	p.End(op, out)
	if projection.Kind != lease.Owned {
		return held{}, false
	}
	o := projection.Owner
	return held{generation: o.Generation, session: o.SessionID, epoch: o.Epoch}, true
}

// withCurrent runs the fenced work: a write of the protected file with the
// owner's epoch and generation, and a sleep while holding the guard.
func (lw *leaseWorld) withCurrent(p *Proc, m *lease.Manager, h held) {
	space := lw.space(p)
	in := models.LeaseWithCurrent{Namespace: space.key, Proc: p.ID(), Generation: h.generation, Session: h.session}
	op := p.Begin("with-current", in)
	entered := false
	err := m.WithCurrentLease(context.Background(), h.generation, func(ctx context.Context, owner lease.Owner) error {
		entered = true
		lw.enter(p, space, owner, h)
		defer lw.leave(p, space)
		return lw.fencedWork(p, owner)
	})
	var out models.LeaseFenceResult
	var fence *lease.FenceError
	var busy *lease.BusyError
	var unverifiable *lease.UnverifiableError
	switch {
	case entered:
		out.Kind = models.FenceOK
		lw.world.Probe("lease-fence-ok")
	case errors.As(err, &fence):
		out.Kind = models.FenceFenced
		lw.world.Probe("lease-fenced")
		if lw.acquirer[h.generation] != p {
			lw.world.Probe("lease-impostor-fenced")
		}
	case errors.As(err, &busy):
		out.Kind = models.FenceBusy
		lw.world.Probe("lease-fence-busy")
	case errors.As(err, &unverifiable):
		out.Kind = models.FenceUnverifiable
		lw.world.Probe("lease-fence-unverifiable")
	default:
		p.End(op, nil)
		return
	}
	p.End(op, out)
}

// enter checks the fencing ground truth as a process enters fn.
func (lw *leaseWorld) enter(p *Proc, space *leaseSpace, owner lease.Owner, h held) {
	if other := lw.inside[space]; other != nil {
		lw.fail(fmt.Errorf("two processes inside WithCurrentLease in %s: %s (generation %s, epoch %d) and %s "+
			"(generation %s, epoch %d)", space.key, other.proc.Name(), other.generation, other.epoch, p.Name(),
			owner.Generation, owner.Epoch), false)
	}
	if owner.Generation != h.generation {
		lw.fail(fmt.Errorf("%s entered WithCurrentLease(%s) with owner generation %s", p.Name(), h.generation,
			owner.Generation), false)
	}
	if acquirer := lw.acquirer[owner.Generation]; acquirer != p {
		name := "an unknown acquire"
		if acquirer != nil {
			name = acquirer.Name()
		}
		lw.fail(fmt.Errorf("%s entered WithCurrentLease with generation %s acquired by %s", p.Name(),
			owner.Generation, name), false)
	}
	if owner.Epoch < space.lastFencedEpoch {
		lw.fail(fmt.Errorf("%s entered WithCurrentLease with epoch %d after epoch %d had entered", p.Name(),
			owner.Epoch, space.lastFencedEpoch), false)
	}
	space.lastFencedEpoch = max(space.lastFencedEpoch, owner.Epoch)
	lw.inside[space] = &leaseInside{proc: p, generation: owner.Generation, epoch: owner.Epoch}
}

func (lw *leaseWorld) leave(p *Proc, space *leaseSpace) {
	if in := lw.inside[space]; in != nil && in.proc == p {
		delete(lw.inside, space)
		if !p.Alive() {
			lw.world.Probe("lease-died-inside-fence") // a crash unwinds fn
		}
	}
}

func (lw *leaseWorld) fencedWork(p *Proc, owner lease.Owner) error {
	f, err := p.FS().OpenFile(leaseProtected, lease.O_CREATE|lease.O_WRONLY|lease.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "epoch=%d generation=%s\n", owner.Epoch, owner.Generation)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if sleepErr := p.Clock().Sleep(context.Background(), lw.opts.FenceWork); err == nil {
		err = sleepErr
	}
	return err
}

// modelReason maps an engine refusal to the model's; corrupt-epoch has no
// model counterpart (the workload never corrupts the epoch file).
func modelReason(r lease.RefusalReason) (models.RefusalReason, bool) {
	switch r {
	case lease.RefusalRemoteOwner:
		return models.RefusalRemoteOwner, true
	case lease.RefusalUnverifiableOwner:
		return models.RefusalUnverifiableOwner, true
	case lease.RefusalCorruptOwner:
		return models.RefusalCorruptOwner, true
	case lease.RefusalLifecycleBusy:
		return models.RefusalLifecycleBusy, true
	case lease.RefusalLifecycleUnverifiable:
		return models.RefusalLifecycleUnverifiable, true
	}
	return 0, false
}

// fail records a ground-truth finding; the next invariant check reports it.
// A liveness finding does not replace a safety one.
func (lw *leaseWorld) fail(err error, liveness bool) {
	if liveness {
		err = &LivenessError{Message: err.Error()}
	}
	if lw.failure == nil {
		lw.failure = err
		return
	}
	if _, wasLiveness := lw.failure.(*LivenessError); wasLiveness && !liveness {
		lw.failure = err
	}
}

// exited records a process's death (unless it left a zombie whose threads
// still run: that one dies when reaped), clears its fenced section, restarts
// crashed workers, and starts the liveness phase after the last worker.
func (lw *leaseWorld) exited(p *Proc, reason ExitReason) {
	w := lw.world
	lw.settleReclaims(p, false, nil, reason)
	for space, in := range lw.inside {
		if in.proc == p {
			delete(lw.inside, space)
			w.Probe("lease-died-inside-fence")
		}
	}
	if t := p.Table(); t.State != simproc.Zombie || t.Threads <= 1 {
		lw.recordDeath(p)
	}
	if lw.liveness != nil {
		lw.liveness.exited(p)
		return
	}
	lw.workers--
	if reason != ExitFinished && lw.respawns < lw.opts.RespawnsMax {
		lw.respawns++
		body := lw.worker
		if len(p.Name()) >= 8 && p.Name()[:8] == "impostor" {
			body = lw.impostor
		}
		// A restart runs its own executable: a restart that got a dead
		// owner's PID in the same start tick with the same executable
		// would be that owner's exact twin, which no identity rule (nor
		// the model) can tell apart from the owner itself.
		exe := fmt.Sprintf("/usr/bin/leasekit-restart-%d", lw.respawns)
		if err := lw.spawnExe(p.Host(), p.Name(), exe, body); err == nil {
			w.Probe("lease-respawn")
		}
	}
	if lw.workers == 0 {
		lw.startLiveness()
	}
}

// reaped records the death of a zombie whose threads kept it alive; a
// single-threaded zombie was recorded dead at exit.
func (lw *leaseWorld) reaped(_ *Host, proc *simproc.Proc) {
	if p := lw.deathByProc[proc]; p != nil {
		lw.recordDeath(p)
	}
}

func (lw *leaseWorld) recordDeath(p *Proc) {
	if _, live := lw.deathByProc[p.Table()]; !live {
		return
	}
	delete(lw.deathByProc, p.Table())
	lw.deathAt[p] = lw.world.Now()
	lw.world.RecordEvent("death", models.ProcessDeath{Proc: p.ID()})
}

// check is the per-step invariant: ground-truth failures, the fenced
// section, the quarantine records, and the liveness phase.
func (lw *leaseWorld) check() error {
	for _, c := range lw.checks {
		if err := lw.checkQuarantine(c); err != nil {
			lw.fail(err, false)
		}
	}
	lw.checks = lw.checks[:0]
	for _, m := range lw.moves {
		if err := lw.checkMove(m); err != nil {
			lw.fail(err, false)
		}
	}
	lw.moves = lw.moves[:0]
	lw.trackCorruption()
	lw.repairDue(false)
	if lw.liveness != nil && lw.failure == nil {
		lw.liveness.check()
	}
	return lw.failure
}

// LeaseCampaignPlan is the fault plan of lease campaigns with every fault
// enabled: each fault's probability is drawn per seed among the swarm
// levels (never off), from decisions independent of the run's.
func LeaseCampaignPlan(seed uint64) FaultPlan {
	d := NewDecisions(seed ^ 0x6c65617365706c61) // "leasepla"
	var plan FaultPlan
	for i, spec := range faultSpecs {
		level := d.Intn(probabilityLevels)
		plan.probabilities[i] = spec.probabilityMax / float64(uint(1)<<(probabilityLevels-1-level))
	}
	return plan
}

// RecordEvent appends an environment event (a process death, a corruption,
// an operator action) to the history at the current time: Call == Return,
// lane 0. It is called from hooks and invariants, outside every process.
func (w *World) RecordEvent(op string, input any) {
	order := w.nextOrder()
	w.history = append(w.history, Operation{Lane: 0, Op: op, Input: input, Call: w.now, Return: w.now,
		CallOrder: order, ReturnOrder: order})
}

// StopFaults turns every fault off for the rest of the run (a workload's
// liveness phase: "once faults stop").
func (w *World) StopFaults() { w.plan = FaultPlan{} }

// leaseReceiver returns the receiver.lock path.
func leaseReceiver() string { return leaseReceiverPath }

var leaseReceiverPath = fspath.Join(leaseNamespace, "receiver.lock")
