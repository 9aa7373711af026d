package sim

import (
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
	"github.com/leasekit/leasekit/simproc"
)

// wallEpoch is the wall-clock time at simulated time zero.
var wallEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// Filesystem is what the world needs of a simulated filesystem. simfs
// implements it through SimfsVolume; tests may substitute their own.
type Filesystem interface {
	// View returns the lease.FS a process of user uid sees.
	View(uid uint32) lease.FS
	// HarnessView returns a lease.FS of user uid for the harness's own
	// looks and acts (Volume.Root, Volume.FS): no fault is injected into
	// it, whichever process is running.
	HarnessView(uid uint32) lease.FS
	// CloseAll closes every file a view still holds open: the kernel does
	// this when a process dies.
	CloseAll(view lease.FS)
	// PowerLoss reduces the filesystem to a legal crash state, choosing the
	// crash mode and outcome with choose (0 = the mildest mode), and returns
	// the mode's name.
	PowerLoss(choose *Decisions) string
	// Hash summarises the state for the determinism check.
	Hash() uint64
	// MkdirAll is a setup helper: it creates every missing directory of
	// path with exactly perm, owned by uid, durably.
	MkdirAll(path string, perm fs.FileMode, uid uint32)
}

// FilesystemConfig is what a FilesystemFactory gets for one volume.
type FilesystemConfig struct {
	// Dev is the volume's st_dev.
	Dev uint64
	// Now is the volume's wall clock in ns since the Unix epoch (birth times).
	Now func() int64
	// Decisions is the run's "world" decision stream.
	Decisions *Decisions
	// Chooser draws a volume's own choices (MkdirTemp names) from the
	// stream of the site that causes them: the running process's.
	Chooser interface{ Intn(n int) int }
	// Inject decides injected FS errors (nil or a syscall.Errno) for an
	// operation kind and path; the world draws it from the fault plan.
	Inject func(kind, path string) error
}

// FilesystemFactory makes a volume's filesystem.
type FilesystemFactory func(FilesystemConfig) Filesystem

// Volume is one filesystem instance, mounted on one host or shared by
// several, like a network mount.
type Volume struct {
	world *World
	name  string
	fs    Filesystem
	hosts []*Host
	root  lease.FS
	// versioned is fs when it keeps a name generation, nil otherwise.
	versioned nameVersioned
	// simFS is fs's simfs when fs is the default SimfsVolume, else nil.
	simFS *simfs.FS
}

// Name returns the volume's name.
func (v *Volume) Name() string { return v.name }

// FS returns the volume's filesystem, for setup and fault hooks acting from
// outside any simulated process. Its views are harness views (HarnessView):
// a co-tenant's or a ground truth's calls never get injected errors.
func (v *Volume) FS() Filesystem { return harnessFilesystem{v.fs} }

// Simfs returns the volume's simfs when its filesystem is the default
// (SimfsVolume), else nil: for hooks that act on simfs's own surface, such
// as its advisory lock table.
func (v *Volume) Simfs() *simfs.FS { return v.simFS }

// harnessFilesystem is a Filesystem whose View is its HarnessView, so that
// no view a hook or a workload makes can draw the running process's faults.
type harnessFilesystem struct{ Filesystem }

// View implements Filesystem.
func (h harnessFilesystem) View(uid uint32) lease.FS { return h.HarnessView(uid) }

// Root returns a root (uid 0) view of the volume for setup code, fault
// hooks (corruption, a hostile co-tenant's renames) and ground truths. Its
// calls are not scheduling points and never get injected errors, even from
// inside a process's step: they are the harness's I/O, not the process's.
// The view is made once per volume, so hooks may call Root at every step.
func (v *Volume) Root() lease.FS {
	if v.root == nil {
		v.root = v.fs.HarnessView(0)
	}
	return v.root
}

// Host is a simulated host: a process table, a clock and a mounted volume.
type Host struct {
	world *World
	index int
	table *simproc.Host
	// volume is the host's filesystem.
	volume *Volume
	// bootAt is the simulated time of the last boot.
	bootAt int64
	// wallOffset is added to the host's wall clock; clock steps change it.
	wallOffset int64
	// clockSteps counts the wall-clock steps (ClockSteps).
	clockSteps int
	// exes lists the executables spawned on the host, in first-use order,
	// for the upgrade fault.
	exes []string
	// procs lists the host's live simulated processes in spawn order.
	procs []*Proc
	// pids remembers the last user of each (namespace, PID), for probes.
	pids map[[2]int]pidUse
}

// Name returns the hostname.
func (h *Host) Name() string { return h.table.Name() }

// Table returns the host's process table.
func (h *Host) Table() *simproc.Host { return h.table }

// Volume returns the host's mounted volume.
func (h *Host) Volume() *Volume { return h.volume }

// Monotonic returns the host's time since boot.
func (h *Host) Monotonic() time.Duration { return time.Duration(h.world.now - h.bootAt) }

// Wall returns the host's wall clock.
func (h *Host) Wall() time.Time { return time.Unix(0, wallEpoch+h.world.now+h.wallOffset).UTC() }

// HostSpec describes a host to add.
type HostSpec struct {
	Name string
	// PIDMax is simproc's pid_max; zero means simproc.PIDMaxDefault.
	PIDMax int
	// Namespaces is the number of PID namespaces; zero means one.
	Namespaces int
	// DenyOtherUIDs makes inspection of another user's process fail with EACCES.
	DenyOtherUIDs bool
	// Volume is the mounted filesystem; several hosts may share one.
	Volume *Volume
}

// ExitReason says how a process ended.
type ExitReason int

const (
	// ExitFinished: the body returned.
	ExitFinished ExitReason = iota + 1
	// ExitCrashed: killed (SIGKILL) at a scheduling point.
	ExitCrashed
	// ExitPowerLoss: its host lost power.
	ExitPowerLoss
)

func (r ExitReason) String() string {
	switch r {
	case ExitFinished:
		return "finished"
	case ExitCrashed:
		return "crashed"
	case ExitPowerLoss:
		return "powerloss"
	}
	return fmt.Sprintf("ExitReason(%d)", int(r))
}

// World is one run's state. Workloads build it in Config.Setup: volumes,
// hosts, processes, invariants and fault hooks.
type World struct {
	config Config
	// probeAt is Result.ProbeAt (nil unless Config.Coverage).
	probeAt map[string]int
	// calls is the call coverage (nil unless Config.Coverage).
	calls *callCoverage
	// cancel is the run's cancellation rate (cancel.go).
	cancel    cancelState
	decisions *Decisions
	// firing is the stream of the global fault being fired (fireGlobalFault).
	firing    *Decisions
	plan      FaultPlan
	scheduler scheduler
	now       int64
	step      int
	stepsRun  int
	volumes   []*Volume
	hosts     []*Host
	// procs lists the live processes in spawn order.
	procs      []*Proc
	procsTotal int
	lanesTotal int
	zombies    []zombie
	idsTotal   uint64
	// orders counts history calls, returns and events (Operation.CallOrder).
	orders int

	history    []Operation
	probes     map[string]int
	invariants []invariant
	hooks      []faultHook
	// drawnGlobals caches drawnGlobalFaults (nil: stale).
	drawnGlobals []drawnGlobal
	onExit       []func(p *Proc, reason ExitReason)
	onReap       []func(h *Host, proc *simproc.Proc)
	onStop       []func(p *Proc)
	onPowerLoss  []func(h *Host) (after func())
	// stopped lists the processes the stop fault stopped, not yet continued.
	stopped []*Proc
	trace   io.Writer

	// runnable is scratch space for each step.
	runnable []*Proc
	// failure is set when a run must stop (a process panicked).
	failure string
	// running is the process being resumed, nil between steps.
	running *Proc
	// coroutines are the goroutines process bodies run on.
	coroutines *coroutinePool
	// procFiles is the rest of the slab newProcFile carves from.
	procFiles []procFile
	// hash is the running per-step hash; stream keeps each step's value
	// when Config.HashStream asks for it.
	hash   uint64
	stream []uint64
	// stateHashDue is the next step whose hash folds in the full state.
	stateHashDue int

	// The current step (step.go): the phase the main loop takes it up at,
	// its process and that process's operation, the global fault drawn yes
	// and not yet fired, and how the run ended.
	phase      stepPhase
	stepProc   *Proc
	stepEvent  event
	faultFired int
	endOutcome Outcome
	endMessage string
	// inline says processes may run their steps' ends and starts on their
	// own coroutines (never in a traced run); inlineProc is the process
	// doing so, nil otherwise.
	inline      bool
	inlineProc  *Proc
	inlineSteps int
	// inlinePanic is a panic of the world's code run inline, for resume to
	// raise on the main loop's side.
	inlinePanic *inlinePanic
	// noKills names the code running that must not kill a process (an
	// invariant, a reap hook), "" otherwise.
	noKills string
	// keyer is the step observer and state key (statekey.go), nil unless
	// an explorer or a workload asked for one.
	keyer *stateKeyer
}

// zombie is a process left unreaped by the zombie fault.
type zombie struct {
	host   *Host
	proc   *simproc.Proc
	reapAt int // step
}

type invariant struct {
	name  string
	check func() error
}

type faultHook struct {
	index int // into the fault plan
	fire  func(w *World)
}

// Now returns the simulated time in ns since the run started.
func (w *World) Now() int64 { return w.now }

// Step returns the current step number.
func (w *World) Step() int { return w.step }

// Decisions returns the run's choice source, for workload hooks that need to
// choose (which file to corrupt, ...).
// It is the stream of the site drawing: the running process's own, the
// firing global fault's, else the world's.
func (w *World) Decisions() *Decisions { return w.draws() }

// draws returns the decision stream of the code running now.
func (w *World) draws() *Decisions {
	switch {
	case w.running != nil:
		return w.running.draws.proc
	case w.firing != nil:
		return w.firing
	}
	return w.decisions
}

// ioDraws is the stream of an FS, inspection or /proc fault's draw: the
// running process's io stream, else (a draw outside any process, e.g. a
// spawn by the world) the named fault's own stream.
func (w *World) ioDraws(fault string) *Decisions {
	if w.running != nil {
		return w.running.draws.io
	}
	return w.decisions.Stream("fault/" + fault)
}

// drawRouter is a volume's Chooser (FilesystemConfig.Chooser).
type drawRouter struct{ w *World }

func (r drawRouter) Intn(n int) int { return r.w.draws().Intn(n) }

// procDraws are a process's decision streams, keyed by its name: its own
// code's draws, its steps' (clock, global fault and crash draws while it is
// the chosen process), its FS and inspection faults', its exit's (zombie).
type procDraws struct{ proc, step, io, exit *Decisions }

func (w *World) newProcDraws(name string) procDraws {
	d := w.decisions
	return procDraws{proc: d.Stream("proc/" + name), step: d.Stream("step/" + name), io: d.Stream("io/" + name),
		exit: d.Stream("exit/" + name)}
}

// Plan returns the run's fault plan.
func (w *World) Plan() FaultPlan { return w.plan }

// Hosts returns the hosts in creation order.
func (w *World) Hosts() []*Host { return w.hosts }

// Volumes returns the volumes in creation order.
func (w *World) Volumes() []*Volume { return w.volumes }

// Procs returns the live processes in spawn order. The caller must not
// modify the slice.
func (w *World) Procs() []*Proc { return w.procs }

// Crash kills p as the crash fault does (SIGKILL: no further code of p
// touches the world; its open operations become unknown) and runs the exit
// hooks. Like PowerLoss it must be called from outside every process.
func (w *World) Crash(p *Proc) {
	if w.running != nil {
		panic(fmt.Sprintf("sim: Crash of %s called from inside process %s", p.name, w.running.name))
	}
	w.Probe("crash")
	w.Tracef("crash proc=%s at=%v path=%s", p.name, p.pending.kind, p.pending.path)
	threads := w.threadsOf(p) // SIGKILL kills every thread of the process
	for _, t := range threads {
		w.kill(t, ExitCrashed)
	}
	for _, t := range threads {
		w.exited(t, ExitCrashed)
	}
}

// AddVolume creates a filesystem instance.
func (w *World) AddVolume(name string) *Volume {
	v := &Volume{world: w, name: name}
	v.fs = w.config.Filesystem(FilesystemConfig{
		Dev:       uint64(0x900 + len(w.volumes)),
		Now:       func() int64 { return wallEpoch + w.now },
		Decisions: w.decisions,
		Chooser:   drawRouter{w},
		Inject:    w.injectFSError,
	})
	v.versioned, _ = v.fs.(nameVersioned)
	if simfsVolume, ok := v.fs.(*SimfsVolume); ok {
		v.simFS = simfsVolume.FS
	}
	w.volumes = append(w.volumes, v)
	return v
}

// AddHost creates a host mounting spec.Volume.
func (w *World) AddHost(spec HostSpec) *Host {
	if spec.Volume == nil || spec.Volume.world != w {
		panic(fmt.Sprintf("sim: host %s needs a volume of this world", spec.Name))
	}
	h := &Host{world: w, index: len(w.hosts), volume: spec.Volume, bootAt: w.now}
	h.table = simproc.NewHost(simproc.HostConfig{
		Name: spec.Name, PIDMax: spec.PIDMax, BootID: w.newBootID(), Namespaces: spec.Namespaces,
		SinceBoot: h.Monotonic,
	})
	h.table.DenyOtherUIDs = spec.DenyOtherUIDs
	h.table.InspectFault = func(int) bool { return w.ioDraws(FaultEACCES).Chance(w.plan.probabilities[faultIndexEACCES]) }
	h.table.ProcHazard = func(simproc.Hazard) bool {
		return w.ioDraws(FaultProcfs).Chance(w.plan.probabilities[faultIndexProcfs])
	}
	h.table.OnVanish = func(proc *simproc.Proc) { w.reaped(h, proc) }
	h.table.Probe = w.Probe
	spec.Volume.hosts = append(spec.Volume.hosts, h)
	w.hosts = append(w.hosts, h)
	return h
}

// Invariant registers a check run after every step. A non-nil error stops
// the run with a Violation (or Liveness, for a *LivenessError) naming the step.
// A check observes: it may record events and spawn processes, never kill
// one (Crash, PowerLoss), since it may run on a process's coroutine.
func (w *World) Invariant(name string, check func() error) {
	w.invariants = append(w.invariants, invariant{name: name, check: check})
}

// FaultHook registers a workload-specific fault under one of the plan's
// names (FaultCorrupt, FaultRenameRace): each step it fires with the plan's
// probability.
func (w *World) FaultHook(name string, fire func(w *World)) {
	w.hooks = append(w.hooks, faultHook{index: faultIndex(name), fire: fire})
	w.drawnGlobals = nil
}

// OnExit registers a function called after any process ends, e.g. to
// restart it. It runs outside every process and may call Spawn.
func (w *World) OnExit(f func(p *Proc, reason ExitReason)) {
	w.onExit = append(w.onExit, f)
}

// OnPowerLoss registers a function called when host h is about to lose
// power, outside every process: before its processes die and its volume is
// reduced to a crash state, f sees what every call saw (the page cache,
// which the crash may roll back); the function it returns, when not nil,
// runs right after the crash, before the exit hooks and before any process
// runs again. A workload checks there what a power loss would otherwise
// erase, and takes its new bearings. Like an invariant it observes: it must
// not kill, and it draws nothing.
func (w *World) OnPowerLoss(f func(h *Host) (after func())) {
	w.onPowerLoss = append(w.onPowerLoss, f)
}

// OnReap registers a function called when a zombie left by the zombie fault
// stops existing: its parent reaped it, or its host rebooted. A zombie
// leader with live threads counts as alive until then, so a workload that
// records process deaths needs this moment. It runs outside every process, and like an invariant it must not kill one.
func (w *World) OnReap(f func(h *Host, proc *simproc.Proc)) {
	w.onReap = append(w.onReap, f)
}

// nextOrder returns the next rank of a history call, return or event.
func (w *World) nextOrder() int {
	w.orders++
	return w.orders
}

// Probe counts a named "sometimes" event.
func (w *World) Probe(name string) {
	if w.probeAt != nil && w.probes[name] == 0 {
		w.probeAt[name] = w.decisions.Len()
	}
	w.probes[name]++
}

// RecordEvent appends an environment event (a process death, a corruption,
// an operator action) to the history at the current time: Call == Return,
// lane 0. It is called from hooks and invariants, outside every process.
// It returns the event's index in History.
func (w *World) RecordEvent(op string, input any) int {
	order := w.nextOrder()
	w.history = append(w.history, Operation{Lane: 0, Op: op, Input: input, Call: w.now, Return: w.now,
		CallOrder: order, ReturnOrder: order})
	w.noteCoverage(&w.history[len(w.history)-1])
	return len(w.history) - 1
}

// History returns the history recorded so far (Result.History at the end).
// A workload may relabel an event it recorded (Operation.Op, e.g. an event
// a power loss undid, which its history conversion then leaves out), but
// must not append to it: RecordEvent and Proc.Begin/End do.
func (w *World) History() []Operation { return w.history }

// ProbeCount returns how often the named probe fired so far in this run.
func (w *World) ProbeCount(name string) int { return w.probes[name] }

// Tracef writes one line to the trace, if tracing.
func (w *World) Tracef(format string, args ...any) {
	if w.trace == nil {
		return
	}
	fmt.Fprintf(w.trace, "step=%d t=%d ", w.step, w.now)
	fmt.Fprintf(w.trace, format, args...)
	io.WriteString(w.trace, "\n")
}

// newBootID returns a fresh boot id (a UUID, as the kernel's).
func (w *World) newBootID() string {
	w.idsTotal++
	return formatUUID(w.idsTotal)
}

// RanExe reports whether some process on h ran exe: only then does the
// host's table know the inode exe names (asking would assign one).
func (h *Host) RanExe(exe string) bool {
	for _, known := range h.exes {
		if known == exe {
			return true
		}
	}
	return false
}

// LivenessError is an invariant failure that is a liveness finding.
type LivenessError struct{ Message string }

func (e *LivenessError) Error() string { return e.Message }
