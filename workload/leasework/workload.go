package leasework

import (
	"bytes"
	"cmp"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The lease workload: processes on several hosts acquire, inspect and
// release the lease of one namespace (package lease), run fenced work inside
// WithCurrentLease that writes a protected file, present stale generations,
// and impostors present generations they learned from Inspect; one to three
// RootIDs share each namespace (roots.go) and PID-reuse impostors take a
// crashed worker's PID to present its lease (pidimpostor.go). Every call
// and return goes into the history as the models package's lease types, so
// CheckLeaseHistory can run porcupine on it.
//
// Ground truth, checked after every step (World.Invariant):
//   - fenced-exclusive: at most one process is inside a WithCurrentLease fn
//     at any time, it entered with a generation it acquired itself (through
//     a Manager of the root it acquired with), and its
//     epoch is not below the last epoch that entered (fencing tokens only
//     grow at the protected resource);
//   - epoch-increase: every Acquired epoch is new, and larger than every
//     epoch returned before the acquire was called;
//   - quarantine: every reclaim an acquire reports has its owner.json, with
//     the reclaimed generation, under quarantine/ (checked when reported and
//     again at the end of the run);
//   - liveness (see leaseLiveness): once the workload ends, faults stop and
//     every holder is dead, a fresh process acquires within a bound;
//   - engine signals (signals.go): a lease.GuardLostError is a violation
//     unless a hostile guard fault struck during the call;
//   - garbage kept (guardreclaim.go): hostile bytes a reclaimer moved from
//     the guard into quarantine are never given back to the guard's name.
//
// The workload-specific faults are hostile: FaultCorrupt corrupts a lease
// file from outside (truncates or garbles owner.json, the guard or an
// intent, or puts a plain file at receiver.lock) and schedules an operator
// repair; FaultRenameRace swaps receiver.lock, owner.json or the guard for an
// identical copy (a new inode under the same name, between one process's
// check and its use); FaultCotenant hard-links a record outside the tree
// (cotenant.go) or moves an entry out and plants a symlink at its name
// (symlinks.go).
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
	// Roots is how many Manager RootIDs share each namespace (roots.go):
	// 0 draws one to three per run.
	Roots int
	// PIDImpostors: 0 lets a crashed worker's PID be taken by an impostor
	// presenting its lease (pidimpostor.go) in some runs, -1 never.
	PIDImpostors int
	// CLITerminals is how many terminals on the first host run simulated
	// `leasereal run` invocations on a lease of their own (clirun.go):
	// 0 means 2, -1 none.
	CLITerminals int
	// CLIOperator: 0 lets an operator type reclaim beside the terminals in
	// some runs (clioperator.go), -1 never.
	CLIOperator int
	// CotenantSymlinks: 0 lets the co-tenant plant symlinks at the
	// namespace's entries (symlinks.go), -1 leaves it hard links only
	// (every run then draws as if symlinks.go did not exist).
	CotenantSymlinks int
	// HostileCallers is how many hostile caller processes (hostile.go)
	// call the engine with arguments it must refuse (default 1; -1 none).
	HostileCallers int
	// GuardOperators is how many guard operators (guardops.go) inspect and
	// force lifecycle guards on a shared volume (default 1; -1 none).
	GuardOperators int
	// EpochOperators is how many epoch operators (epochops.go) tear the
	// epoch counter and force it with an epoch floor (default 1; -1 none).
	EpochOperators int
}

func (o LeaseOptions) withDefaults() LeaseOptions {
	o.Hosts = cmp.Or(o.Hosts, 2)
	o.ProcsPerHost = cmp.Or(o.ProcsPerHost, 2)
	o.OpsPerProc = cmp.Or(o.OpsPerProc, 8)
	o.Impostors = cmp.Or(o.Impostors, 1)
	o.PIDMax = cmp.Or(o.PIDMax, 40)
	o.LivenessStepsMax = cmp.Or(o.LivenessStepsMax, 20_000)
	o.RespawnsMax = cmp.Or(o.RespawnsMax, 2*o.Hosts*o.ProcsPerHost)
	o.HostileCallers = cmp.Or(o.HostileCallers, 1)
	o.CLITerminals = cmp.Or(o.CLITerminals, 2)
	o.Impostors = max(o.Impostors, 0)
	o.HostileCallers = max(o.HostileCallers, 0)
	o.GuardOperators = max(cmp.Or(o.GuardOperators, 1), 0)
	o.EpochOperators = max(cmp.Or(o.EpochOperators, 1), 0)
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
func LeaseWorkload(opts LeaseOptions) func(w *sim.World) error {
	opts = opts.withDefaults()
	return func(w *sim.World) error {
		lw := &leaseWorld{world: w, opts: opts}
		return lw.setup()
	}
}

// leaseSpace is one lease namespace: a volume and the hosts mounting it.
type leaseSpace struct {
	index  int
	volume *sim.Volume
	hosts  []*sim.Host
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
	// links counts the co-tenant's hard links of this space (cotenant.go).
	links int
	// symlinks are the co-tenant's planted epoch and directory links not
	// yet repaired (the others are corruptions); linkIDs every link it
	// planted; epochLinked says the epoch counter is one; unsafeLinks
	// counts the directory links in place and unsafeClearedAt is when the
	// last was repaired (symlinks.go).
	symlinks        []*leaseSymlink
	linkIDs         []lease.FileIdentity
	epochLinked     bool
	unsafeLinks     int
	unsafeClearedAt int64
	// trackedNames is the volume's name generation when trackCorruption
	// last looked at this space (tracked says it has looked).
	trackedNames uint64
	tracked      bool
	// boot is the space's host's boot count as last seen (bootSeen: it
	// was seen), and leftovers the watch of what its power losses left
	// torn or empty (powerloss.go).
	boot      int
	bootSeen  bool
	leftovers *workkit.LeftoverWatch
	// hostileInPlace are the guard and intent paths the hook wrote in
	// place (O_TRUNC, data never fsynced) since the space's last power
	// loss (powerloss.go, reviveHostileDebris).
	hostileInPlace []string
	// guardMovedIn maps a quarantine path a guard was moved to onto the
	// mover's injected-fault count at the move (guardreclaim.go): a
	// give-back after an injected error blinded the mover is its
	// documented fallback, not a finding.
	guardMovedIn map[string]int
	// mootLinks are the co-tenant's links an engine moved off their names
	// (dropped from the ledger as moot) since the space's last power loss,
	// which may undo the move (powerloss.go, reviveSymlinks).
	mootLinks []*leaseSymlink
	// epochTear is the epoch operator's torn counter, until it is valid
	// again (epochops.go).
	epochTear *epochTear
}

// hostileSwaps counts the rename races the hook made so far (any space).
func (lw *leaseWorld) hostileSwaps() int {
	w := lw.world
	return w.ProbeCount("lease-hostile-swap-receiver") + w.ProbeCount("lease-hostile-swap-owner") +
		w.ProbeCount("lease-hostile-swap-guard")
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
	// link is set when the corruption is a planted symlink (symlinks.go):
	// it is there while the link is, whatever the bytes behind it.
	link *leaseSymlink
	// looked holds the volume's generations at the last look that kept
	// the corruption waiting, and lastLook what it found (look).
	looked   workkit.Unmoved
	lastLook corruptionLook
}

// present reports whether the corruption c is still at its path: the
// exact bytes the hook wrote, or the very link it planted.
func (c *leaseCorruption) present(root lease.FS) bool {
	if c.link != nil {
		return c.link.stillThere(root)
	}
	data, err := workkit.ReadRoot(root, c.path)
	return err == nil && bytes.Equal(data, c.written)
}

// leaseWriter names a process recorded in a guard or intent.
type leaseWriter struct {
	host string
	// ns is the writer's PID namespace id ("" for a record without one).
	ns         string
	pid        int
	startTicks string
	boot       string
}

// leaseInside is a process inside a WithCurrentLease fn.
type leaseInside struct {
	proc       *sim.Proc
	generation string
	epoch      uint64
	// guardEvents is hostileGuardEvents when its call began.
	guardEvents int
	// guardSeen is true once checkGuardHeld found the guard the call's,
	// at the volume's name and data generations guardSeenAt: while they
	// are unchanged, no file changed, and the guard is still the call's.
	guardSeen   bool
	guardSeenAt [2]uint64
}

// leaseReclaimCheck is a reported reclaim whose quarantine record is checked.
type leaseReclaimCheck struct {
	space      *leaseSpace
	path       string
	generation string
	proc       string
}

type leaseWorld struct {
	// left is the "a failed call leaves nothing behind" oracle (cancel.go).
	left *workkit.LeftNothing
	// stranded: guards a failed call left (see strandedGuards).
	stranded strandedGuards
	// parsedRecords memoizes parseRecord (see leaseWorld.parseRecord).
	parsedRecords map[string]parsedRecord
	world         *sim.World
	opts          LeaseOptions
	layout        LeaseLayout
	spaces        []*leaseSpace
	// links are the co-tenant's hard links of records (cotenant.go).
	links []leaseLink
	// spaceOf maps a host to its lease space.
	spaceOf map[*sim.Host]*leaseSpace
	// inside is the process inside a fenced section, per space.
	inside map[*leaseSpace]*leaseInside
	// acquirer maps a generation to the process whose acquire returned it.
	acquirer map[string]*sim.Proc
	// sessions counts session nonces; sessionProc maps one to its acquirer.
	sessions    int
	sessionProc map[string]*sim.Proc
	// workers is the number of live (or restartable) workload processes.
	workers     int
	respawns    int
	deathByProc map[*simproc.Proc]*sim.Proc
	// deathAt is when each recorded death happened (simulated time).
	deathAt     map[*sim.Proc]int64
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
	// paused holds the lease holders the stop fault paused (paused.go).
	paused pausedHolders
	// roots are the run's RootIDs (roots.go).
	roots leaseRoots
	// impostors are the PID-reuse impostors and the reclaim races (pidimpostor.go).
	impostors pidImpostors
	// acquiring counts the open acquires of each threaded process (threads.go).
	acquiring workkit.ThreadCalls
	// hostileCallers are the hostile caller processes (hostile.go).
	hostileCallers map[*sim.Proc]bool
	// guardOperators are the guard operator processes (guardops.go).
	guardOperators map[*sim.Proc]bool
	// zombiesLeft are the processes that exited as a zombie whose threads
	// run (crashedZombieRuns).
	zombiesLeft []*sim.Proc
	// guardOperatorsExited are the guard operators that exited.
	guardOperatorsExited []*sim.Proc
	// epochOperators are the epoch operator processes (epochops.go).
	epochOperators map[*sim.Proc]bool
	// cli are the simulated `leasereal run` invocations (clirun.go).
	cli cliRuns
	// slowInspects are the inspects in progress drawn slow (slowinspect.go).
	slowInspects map[*sim.Proc]*slowInspect
}

func (lw *leaseWorld) setup() error {
	w, opts := lw.world, lw.opts
	lw.layout = opts.Layout
	if lw.layout == LeaseLayoutDrawn {
		lw.layout = LeaseLayoutShared + LeaseLayout(w.Decisions().Intn(2))
	}
	lw.drawRoots()
	lw.impostors.start(lw)
	w.Tracef("lease-workload layout=%v hosts=%d procs=%d ops=%d impostors=%d", lw.layout, opts.Hosts,
		opts.ProcsPerHost, opts.OpsPerProc, opts.Impostors)
	lw.spaceOf = make(map[*sim.Host]*leaseSpace)
	lw.inside = make(map[*leaseSpace]*leaseInside)
	lw.acquirer = make(map[string]*sim.Proc)
	lw.sessionProc = make(map[string]*sim.Proc)
	lw.deathByProc = make(map[*simproc.Proc]*sim.Proc)
	lw.deathAt = make(map[*sim.Proc]int64)
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
		h := lw.addHost(i, space.volume)
		space.hosts = append(space.hosts, h)
		lw.spaceOf[h] = space
		for j := 0; j < opts.ProcsPerHost; j++ {
			if err := lw.spawnIn(h, workerNamespace(h, j), fmt.Sprintf("worker-%d-%d", i, j), "", lw.worker); err != nil {
				return err
			}
		}
	}
	for i := 0; i < opts.Impostors; i++ {
		h := w.Hosts()[0]
		if err := lw.spawnIn(h, w.Decisions().Intn(h.Table().NamespaceCount()), fmt.Sprintf("impostor-%d", i), "",
			lw.impostor); err != nil {
			return err
		}
	}
	if err := lw.spawnThreads(); err != nil {
		return err
	}
	if err := lw.spawnHostileCallers(); err != nil {
		return err
	}
	lw.guardOperators = map[*sim.Proc]bool{}
	if err := lw.spawnGuardOperators(); err != nil {
		return err
	}
	if err := lw.spawnEpochOperators(); err != nil {
		return err
	}
	if err := lw.cli.start(lw); err != nil {
		return err
	}
	w.FaultHook(sim.FaultCorrupt, lw.corrupt)
	w.FaultHook(sim.FaultRenameRace, lw.renameRace)
	lw.setupCotenant()
	w.OnExit(lw.exited)
	w.OnReap(lw.reaped)
	w.OnStop(lw.stopped)
	w.OnPowerLoss(lw.powerLoss)
	w.Invariant("lease", lw.check)
	w.SetStateKey(lw.stateKey)
	lw.left = workkit.NewLeftNothing(w, "lease", leaseResidue)
	lw.left.OwnedLeft = lw.stranded.left
	return nil
}

// spawnIn starts a workload process in PID namespace ns of h.
func (lw *leaseWorld) spawnIn(h *sim.Host, ns int, name, exe string, body func(p *sim.Proc)) error {
	p, err := lw.world.Spawn(h, sim.ProcSpec{Name: name, UID: leaseUID, Exe: exe, Namespace: ns}, body)
	if err != nil {
		return err
	}
	lw.deathByProc[p.Table()] = p
	lw.workers++
	return nil
}

// manager returns a Manager over p's environment.
func (lw *leaseWorld) manager(p *sim.Proc) *lease.Manager {
	return lw.managerWith(p, p.Inspector())
}

// managerWith is manager with another view of p's process table.
func (lw *leaseWorld) managerWith(p *sim.Proc, inspector lease.Inspector) *lease.Manager {
	return lw.managerRoot(p, inspector, lw.rootFor(p.Name()))
}

// managerRoot is managerWith for the given root.
func (lw *leaseWorld) managerRoot(p *sim.Proc, inspector lease.Inspector, root string) *lease.Manager {
	m, err := lease.NewManager(lease.Config{Namespace: leaseNamespace, RootID: root, FS: &leaseFS{FS: p.FS(), lw: lw, p: p},
		Clock: p.Clock(), Inspector: inspector, IDs: p.IDs(), GuardWait: lw.opts.GuardWait})
	if err != nil {
		panic(err)
	}
	lw.roots.byManager[m] = root
	return m
}

// fail records a ground-truth finding; the next invariant check reports it.
// A liveness finding does not replace a safety one.
func (lw *leaseWorld) fail(err error, liveness bool) {
	if liveness {
		err = &sim.LivenessError{Message: err.Error()}
	}
	if lw.failure == nil {
		lw.failure = err
		return
	}
	if _, wasLiveness := lw.failure.(*sim.LivenessError); wasLiveness && !liveness {
		lw.failure = err
	}
}

// exited records a process's death (unless it left a zombie whose threads
// still run: that one dies when reaped), clears its fenced section, restarts
// crashed workers, and starts the liveness phase after the last worker.
func (lw *leaseWorld) exited(p *sim.Proc, reason sim.ExitReason) {
	w := lw.world
	lw.endSlowInspect(p) // killed inside a slow inspect
	if t := p.Table(); t.State == simproc.Zombie && t.Threads > 1 {
		lw.zombiesLeft = append(lw.zombiesLeft, p)
	}
	if lw.cli.exited(p) {
		return // a CLI wrapper: not a worker, no lane of lease calls
	}
	if lw.paused.operatorExited(p) {
		// Its clear, if ForceReclaim never answered. Not a worker: no lane
		// of lease calls, no restart.
		lw.settleReclaims(p, false, nil, reason)
		return
	}
	if lw.hostileCallers[p] {
		delete(lw.hostileCallers, p) // changed nothing: no lane, no restart
		return
	}
	if lw.epochOperators[p] {
		// As a guard operator: no lane, no restart; a tear it left is
		// restored at the liveness phase's start (repairDue).
		delete(lw.epochOperators, p)
		if lw.workers--; lw.workers == 0 && lw.liveness == nil {
			lw.startLiveness()
		}
		return
	}
	if lw.guardOperators[p] {
		// No lane of lease calls, no restart; the liveness phase waits for
		// it, so that no force (and no reclaim intent) is in flight then.
		delete(lw.guardOperators, p)
		lw.guardOperatorsExited = append(lw.guardOperatorsExited, p)
		if lw.workers--; lw.workers == 0 && lw.liveness == nil {
			lw.startLiveness()
		}
		return
	}
	lw.impostors.exited(p, reason)
	lw.settleReclaims(p, false, nil, reason)
	for space, in := range lw.inside {
		if in.proc == p {
			delete(lw.inside, space)
			w.Probe("lease-died-inside-fence")
		}
	}
	if t := p.Table(); p.ProcessEnded() && (t.State != simproc.Zombie || t.Threads <= 1) {
		lw.recordDeath(p)
	}
	if lw.liveness != nil {
		lw.liveness.exited(p)
		return
	}
	lw.workers--
	if reason != sim.ExitFinished && lw.respawns < lw.opts.RespawnsMax {
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
		if err := lw.spawnIn(p.Host(), p.Table().NS, p.Name(), exe, body); err == nil {
			w.Probe("lease-respawn")
		}
	}
	if lw.workers == 0 {
		lw.startLiveness()
	}
}

// reaped records the death of a zombie whose threads kept it alive; a
// single-threaded zombie was recorded dead at exit.
func (lw *leaseWorld) reaped(_ *sim.Host, proc *simproc.Proc) {
	if p := lw.deathByProc[proc]; p != nil {
		lw.recordDeath(p)
	}
}

// recordDeath records the death of p's process: every thread of it.
func (lw *leaseWorld) recordDeath(p *sim.Proc) {
	if _, live := lw.deathByProc[p.Table()]; !live {
		return
	}
	delete(lw.deathByProc, p.Table())
	for _, t := range p.Threads() {
		lw.deathAt[t] = lw.world.Now()
	}
	lw.world.RecordEvent("death", models.ProcessDeath{Proc: p.ProcessID()})
}

// check is the per-step invariant: ground-truth failures, the fenced
// section, the quarantine records, and the liveness phase.
func (lw *leaseWorld) check() error {
	lw.cli.expire()
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
	lw.checkLeftovers()
	lw.checkGuardHeld()
	lw.repairDue(false)
	if lw.liveness != nil && lw.failure == nil {
		lw.liveness.check()
	}
	return lw.failure
}

// leaseReceiver returns the receiver.lock path.
func leaseReceiver() string { return leaseReceiverPath }

var leaseReceiverPath = fspath.Join(leaseNamespace, "receiver.lock")
