package sim

import (
	"fmt"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// State keys for a state-caching explorer (campaign's ExploreDeep). The
// per-step hash (hashStep) is chained, so two schedules that meet in one
// state never share it; a state key is the world's state itself, unchained:
//
//   - the position of the run: the step count, the decisions consumed, the
//     clock, the history's order counter, the ID and process counters;
//   - every volume's filesystem (Filesystem.Hash: volatile and synced trees,
//     pending log, open handles) and every host's process table
//     (simproc.Host.Hash), boot time and clock offset;
//   - each process's status, sleep, pending operation and position: a
//     process's local state (its coroutine's stack) cannot be hashed, but
//     engine code is deterministic in what it observes (internal/archtest),
//     so a chained hash of everything it observed (each operation's kind,
//     path and result, the bytes it read, the names and stat fields it was
//     given, the clock values, the identities and inspections) stands for it;
//   - the recorded history (each operation's lane, name, input, output and
//     call/return ranks: what the history check judges);
//   - the workload's own Go state (its ground-truth ledgers), which the
//     simulator cannot see: a workload feeds it with SetStateKey. A world
//     without that hook has no state key (StateKey is 0), so a cache
//     never merges its states.
//
// Keying costs time linear in the state, so the key is computed only when
// an observer asks for it (StateKey), and the observation hooks below fold
// only while an observer is set (ObserveSteps); they are a nil check
// otherwise.

// StepInfo describes one finished step to an observer.
type StepInfo struct {
	// Step is the step number; Proc the ID of the process chosen.
	Step int
	Proc int
	// Kind and Path are the step's operation ("start" for a process's
	// first step, or a step that killed it before it ran); Result its code.
	Kind   string
	Path   string
	Result uint64
	// Start and Decisions are the numbers of decisions consumed when the
	// step started and when it ended (so its decisions are [Start,
	// Decisions));
	// Runnable the IDs of the processes the scheduler chose among, in its
	// order (so a pick of value v is Runnable[v]).
	Start     int
	Decisions int
	Runnable  []int
	// Exits lists the processes that ended in this step, with how.
	Exits []StepExit
	// Orders is the history's order counter at the step's end (it moves
	// when the step called, returned or recorded an event); Processes the
	// number of processes spawned so far; Alive the number alive.
	Orders    int
	Processes int
	Alive     int
	// Workload is the workload's part of the state key at the step's end
	// (0 without one); World.StateKey gives the whole key.
	Workload uint64
}

// HaltedMessage is the message of a run its step observer halted.
const HaltedMessage = "halted by the step observer"

// StepExit is a process that ended in a step.
type StepExit struct {
	Proc   int
	Reason ExitReason
}

// stateKeyer is a world's observer state (nil unless ObserveSteps).
type stateKeyer struct {
	observe  func(StepInfo) bool
	workload func() uint64
	// halted: the observer asked to end the run after this step.
	halted bool
	// positions[id] is process id's observation chain.
	positions []uint64
	exits     []StepExit
	runnable  []int
	// closed caches the hashes of history operations by index.
	closed []opHash
	// start is the decision count at the current step's start.
	start int
	// workloadKey is the workload's key at the end of step workloadStep
	// (stepEnded computes it once for the observer and StateKey);
	// workloadFrom is WorkloadKeyFrom's bound.
	workloadKey  uint64
	workloadStep int
	workloadFrom int
}

// WorkloadKeyFrom asks the world to compute the workload's key
// (StepInfo.Workload) only for steps that end past the given number of
// decisions: an explorer replaying a known prefix needs no key there, and
// the workload's key is the dearest part of a step's observation. Steps
// before it report Workload 0.
func (w *World) WorkloadKeyFrom(decisions int) {
	w.ensureKeyer().workloadFrom = decisions
}

// ObserveSteps asks the world to call f at the end of every step (f may
// call StateKey then). When f returns true the run ends after that step's
// checks, with OutcomeOK and HaltedMessage: an explorer that knows the rest
// of the run is covered stops paying for it. Call it in Setup, before
// spawning processes.
func (w *World) ObserveSteps(f func(StepInfo) bool) {
	w.ensureKeyer().observe = f
}

func (w *World) ensureKeyer() *stateKeyer {
	if w.keyer == nil {
		w.keyer = &stateKeyer{workloadStep: -1}
		w.OnExit(func(p *Proc, reason ExitReason) {
			if w.keyer.observe != nil {
				w.keyer.exits = append(w.keyer.exits, StepExit{Proc: p.id, Reason: reason})
			}
		})
	}
	return w.keyer
}

// SetStateKey gives the world the workload's part of the state key: a hash
// of every piece of the workload's Go state that a later step, invariant or
// history check reads. It is cheap to call when no observer is set.
func (w *World) SetStateKey(f func() uint64) {
	w.ensureKeyer().workload = f
}

// Keying reports whether an observer is set (workloads may skip the work of
// keeping their key up to date otherwise).
func (w *World) Keying() bool { return w.keyer != nil && w.keyer.observe != nil }

// stepEnded reports step p ran to the observer (endStep calls it).
func (k *stateKeyer) stepEnded(w *World, p *Proc) {
	if k.observe == nil {
		return
	}
	ev := w.stepEvent
	k.fold(p, uint64(ev.kind)<<32^hashPath(ev.path)^p.result<<8)
	info := StepInfo{Step: w.step, Proc: p.id, Kind: ev.kind.String(), Path: ev.path, Result: p.result,
		Start: k.start, Decisions: w.decisions.Len(), Orders: w.orders, Processes: w.procsTotal, Alive: len(w.procs)}
	k.runnable = k.runnable[:0]
	for _, r := range w.runnable {
		k.runnable = append(k.runnable, r.id)
	}
	info.Runnable = k.runnable
	info.Exits = k.exits
	k.workloadStep = -1
	if k.workload != nil && info.Decisions > k.workloadFrom {
		info.Workload = k.workload()
		k.workloadKey, k.workloadStep = info.Workload, w.step
	}
	k.halted = k.observe(info)
	k.exits = k.exits[:0]
	k.start = info.Decisions
}

// fold chains v into p's observation hash.
func (k *stateKeyer) fold(p *Proc, v uint64) {
	for len(k.positions) <= p.id {
		k.positions = append(k.positions, 0x9e3779b97f4a7c15)
	}
	k.positions[p.id] = mix64(k.positions[p.id]*hashMultiplier ^ v)
}

// StateKey returns the world's state key between steps (an observer's
// call): 0 when the workload feeds no key (SetStateKey), so no state of
// it is ever merged with another.
func (w *World) StateKey() uint64 {
	k := w.keyer
	if k == nil || k.workload == nil {
		return 0
	}
	workload := k.workloadKey
	if k.workloadStep != w.step {
		workload = k.workload()
	}
	key := mix64(w.worldKey() ^ workload*hashMultiplier)
	if key == 0 {
		key = 1
	}
	return key
}

// worldKey hashes the simulated OS, the processes and the history.
func (w *World) worldKey() uint64 {
	h := uint64(w.step)
	add := func(v uint64) { h = mix64(h*hashMultiplier ^ v) }
	add(uint64(w.decisions.Len()))
	add(uint64(w.now))
	add(uint64(w.orders))
	add(w.idsTotal)
	add(uint64(w.procsTotal))
	add(uint64(len(w.zombies)))
	add(uint64(len(w.stopped)))
	for _, v := range w.volumes {
		if memo, ok := v.fs.(stateHasher); ok {
			add(memo.StateHash())
		} else {
			add(v.fs.Hash())
		}
	}
	for _, host := range w.hosts {
		add(host.table.Hash())
		add(uint64(host.bootAt))
		add(uint64(host.wallOffset))
	}
	for _, p := range w.procs {
		add(uint64(p.id))
		add(uint64(p.status) | uint64(p.pending.kind)<<8 | boolBit(p.sleeping)<<16 | boolBit(p.ended)<<17)
		add(hashPath(p.pending.path))
		add(uint64(p.wakeAt))
		add(uint64(p.stoppedUntil))
		add(uint64(len(p.openOps)))
		if p.id < len(w.keyer.positions) {
			add(w.keyer.positions[p.id])
		}
	}
	add(w.historyKey())
	return h
}

// stateHasher is a Filesystem whose Hash can be reused between the calls
// that change it (simfs's StateHash): equal to Hash, cheaper per step.
type stateHasher interface{ StateHash() uint64 }

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// historyKey hashes the history: what the history check judges. An
// operation's hash is computed once when it is called and once when it
// returns (its fields do not change in between).
func (w *World) historyKey() uint64 {
	k := w.keyer
	h := uint64(len(w.history))
	for len(k.closed) < len(w.history) {
		k.closed = append(k.closed, opHash{})
	}
	for i := range w.history {
		op := &w.history[i]
		c := &k.closed[i]
		if c.hash == 0 || c.returned != (op.Return >= 0) || c.unknown != op.Unknown {
			c.hash = hashPath(fmt.Sprintf("%d|%s|%s|%v|%v|%v|%d|%d", op.Lane, op.Proc, op.Op, op.Input, op.Output, op.Unknown,
				op.CallOrder, op.ReturnOrder)) | 1
			c.returned, c.unknown = op.Return >= 0, op.Unknown
		}
		h = mix64(h*hashMultiplier ^ c.hash)
	}
	return h
}

// opHash is a history operation's cached hash.
type opHash struct {
	hash              uint64
	returned, unknown bool
}

// The observation hooks: a process's calls report what they returned, so
// its position hash covers every value its code can branch on.

func (p *Proc) observing() bool { return p.world.keyer != nil && p.world.keyer.observe != nil }

func (p *Proc) observeValue(v uint64) {
	if p.observing() {
		p.world.keyer.fold(p, v)
	}
}

func (p *Proc) observeString(s string) {
	if p.observing() {
		p.world.keyer.fold(p, hashPath(s))
	}
}

func (p *Proc) observeBytes(b []byte) {
	if p.observing() {
		p.world.keyer.fold(p, hashPath(string(b)))
	}
}

func (p *Proc) observeInfo(info lease.FileInfo) {
	if p.observing() {
		p.world.keyer.fold(p, hashPath(info.Name)^uint64(info.Mode)<<1^info.Ino<<7^info.Nlink<<40^
			uint64(info.Size)<<20^uint64(info.BirthNs)^uint64(info.UID)<<50^boolBit(info.HasBirth)<<63^info.Dev<<3)
		if sfs := p.host.volume.simFS; sfs != nil && sfs.MtimesTracked() {
			p.world.keyer.fold(p, uint64(info.MtimeNs))
		}
	}
}

func (p *Proc) observeEntries(entries []lease.DirEntry) {
	if p.observing() {
		for _, e := range entries {
			p.world.keyer.fold(p, hashPath(e.Name)^uint64(e.Type))
		}
		p.world.keyer.fold(p, uint64(len(entries)))
	}
}

func (p *Proc) observeIdentity(id lease.ProcessIdentity) {
	if p.observing() {
		p.observeString(fmt.Sprintf("%+v", id))
	}
}

func (p *Proc) observeInspection(in lease.Inspection) {
	if p.observing() {
		p.observeString(fmt.Sprintf("%+v", in))
	}
}

func (p *Proc) observeTime(t time.Time) { p.observeValue(uint64(t.UnixNano())) }
