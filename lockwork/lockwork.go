// Package lockwork tests a mutual-exclusion lock in leasekit's simulator
// without a model or a workload of one's own: give it the lock (a Lock
// opened per simulated process, written against package env) and it returns
// the campaign.Engine that runs it. Each run puts several client processes
// on one host sharing a disk; each takes the lock, works in its critical
// section and releases it, for a few rounds, while the simulator crashes
// them, reuses their PIDs, steps the wall clock and reorders every step.
// Crashed clients are respawned, up to a budget (ParamRespawns). On a
// volume shared between hosts (Spec.ServerRestarts), the volume's server
// restarts too, losing every advisory lock, as NFS does (server.go).
//
// Two checks judge a run. A Recorder watches the answers as they come and
// stops the run at the first one that proves a bug, naming the hazard that
// caused it (a server restart, a failed liveness check, a clock step, a
// paused holder, PID reuse, a zombie, or one the lock's author names in
// Spec.Hazards), a built-in one only when the lock observed it (it read
// the stepped clock, it inspected the reused PID, its lock lived in
// descriptors); the finding's class carries that name, so shrinking keeps
// it. At the end, the whole history is checked by
// porcupine against models.LockModel, which also catches what no single
// answer proves.
//
// # Unknown outcomes
//
// A TryLock that returns an error other than ErrRefused (or whose process
// is killed inside it) has an unknown outcome. The client then calls
// TryLock again from the same process, within the round's attempts, and
// never calls Unlock for an acquire it did not see succeed. The model
// takes an unknown acquire as either no effect or a complete acquire, so
// the retry may answer held (the process now waits on its own hold) or
// acquired (the attempt changed nothing). Acquire is not re-entrant: once
// another process was answered held because of the unknown attempt, an
// acquired answer to the retry is two holders. A lock that recognises its
// own hold must answer held, or release it and acquire anew.
//
// An unknown acquire that took effect consumed a fencing token: the model
// gives it the token one above the last one seen, and every later answer
// must be above it. Tokens may be skipped. Handing one out twice is caught
// only when another answer proves the unknown acquire took the lock, so a
// lock must make its counter's advance durable before anyone can see the
// lock taken. TestUnknownAcquireStance holds these rules.
package lockwork

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Lock is one process's handle on the lock under test.
type Lock interface {
	// TryLock makes one attempt without waiting. ok true: the caller holds
	// the lock, with epoch its fencing token (0 if the lock has none). ok
	// false with a nil error: another process holds it. An error wrapping
	// ErrRefused: the lock could not decide and changed nothing; any other
	// error: the outcome is unknown (the lock may have been taken).
	TryLock() (ok bool, epoch uint64, err error)
	// Unlock releases the lock. nil: released; an error wrapping
	// ErrNotOwner: the caller did not hold it; any other error: unknown.
	Unlock() error
}

// Heartbeater is a Lock that shows it is alive while it holds the lock (an
// mtime heartbeat, a lease renewal), the way a holder's timer or renewal
// goroutine would: the holder's critical section is cut into pauses of
// HeartbeatEvery, each followed by a Heartbeat call, in the holder's
// process (a stopped process's heartbeats stop with it). A Heartbeat error
// is ignored, as a logging timer ignores it.
type Heartbeater interface {
	Heartbeat() error
	// HeartbeatEvery is the pause between heartbeats; it must be positive.
	HeartbeatEvery() time.Duration
}

var (
	// ErrRefused is the error of a TryLock that could not decide and
	// changed nothing.
	ErrRefused = errors.New("lock refused")
	// ErrNotOwner is the error of an Unlock by a process that does not
	// hold the lock.
	ErrNotOwner = errors.New("not the lock owner")
)

// Spec is a lock under test.
type Spec struct {
	// Name is the engine name (seed files are stored under it).
	Name string
	// Doc is one line for `leasesim run --help`.
	Doc string
	// Open returns process p's handle on the lock; it reaches the
	// environment only through p.FS(), p.Clock(), p.Inspector() and p.IDs().
	// The lock lives under Dir, which exists on the shared disk (mode 0700,
	// owned by the clients' uid).
	Open func(p *sim.Proc) Lock
	// Dir is the lock's directory; "" means DirDefault.
	Dir string
	// Rules are the properties the lock promises beyond mutual exclusion
	// (models.LockRules.DeadHolderFree for a lock that checks its
	// holder's liveness).
	Rules models.LockRules
	// Hazards name two-holder findings the built-in names cannot (a split
	// inode, ...); they are tried in order before the built-in ones.
	Hazards []Hazard
	// Setup, when not nil, runs after the world is built (to add a fault
	// hook, or state the lock needs beside the disk).
	Setup func(w *sim.World)
	// PerRun, when not nil, returns the Open, Setup and Hazards of one run
	// (the other fields of its answer are ignored): a lock whose processes
	// share state beside the disk (flockunlink's handles, which its
	// split-inode hazard compares) keeps it per run, since the runs of one
	// campaign execute in parallel and Setup runs again on every replay.
	PerRun func() Spec
	// DescriptorLocks says the lock's state lives in its holder's open
	// descriptors (flock, fcntl record locks), not on disk. The simulator
	// closes a killed process's descriptors at the kill, also when its
	// zombie fault leaves the PID in the process table as a zombie leader
	// with threads (those threads exist only in the table), so such a
	// lock is free at the kill, and the Recorder counts the holder dead
	// then instead of alive until reaped: no false "two holders".
	DescriptorLocks bool
	// Record, when not nil, reads the holder's PID from the lock's own
	// files (the PID a PID file holds); root is the shared disk as root
	// sees it, without scheduling points or injected errors, and Record
	// must only read. A finding then names the holder from the lock's
	// record when the lock checked no PID itself, and names both when the
	// record and the harness disagree.
	Record func(root lease.FS) (pid int, ok bool)
	// PausedAfter is how long a holder must have held the lock for a
	// second holder to be blamed on a paused holder; 0 means 500ms.
	PausedAfter time.Duration
	// ServerRestarts is the default of ParamServerRestarts: the lock's
	// directory is on a volume shared between hosts (NFS), whose server
	// restarts this many times in a run and loses every advisory lock
	// (server.go). A lock whose state lives only in the server's lock
	// table cannot survive that, so a finding is named "server restart".
	// A spec with it above 0 declares ProbeServerRestart.
	ServerRestarts int
}

// Hazard names the cause of a two-holder finding.
type Hazard struct {
	// Name appears in the finding's class: "two holders (Name)".
	Name string
	// Caused reports whether the hazard explains newcomer acquiring the
	// lock while holder still holds it.
	Caused func(holder, newcomer *sim.Proc) bool
}

// Probes every campaign must fire (Engine.Probes): a workload in which the
// lock is never taken, released, or contended tests nothing.
const (
	ProbeAcquired  = "lock-acquired"
	ProbeReleased  = "lock-released"
	ProbeContended = "lock-contended"
	// ProbeServerRestart fires at each restart of the shared volume's
	// server (ParamServerRestarts); ProbeLockLostAtRestart when a restart
	// dropped an advisory lock a live client held. Engine declares the
	// first when Spec.ServerRestarts is above 0; a descriptor lock's
	// engine should declare the second.
	ProbeServerRestart     = "lock-server-restart"
	ProbeLockLostAtRestart = "lock-lost-at-server-restart"
)

// DirDefault is Spec.Dir's default.
const DirDefault = "/locks"

// Knob names.
const (
	ParamProcesses = "processes"
	ParamRounds    = "rounds"
	ParamRespawns  = "respawns"
	// ParamServerRestarts is how many times the shared volume's server
	// restarts in a run, losing every advisory lock (Spec.ServerRestarts).
	ParamServerRestarts = "server-restarts"
)

// attemptsMax bounds one round's acquire attempts; retryPause separates them.
const (
	attemptsMax = 12
	retryPause  = 40 * time.Millisecond
	workPause   = 10 * time.Millisecond
	// workPauseShiftMax: the longest critical section is workPause<<6.
	workPauseShiftMax = 6
	checkTime         = 10 * time.Second
)

// Engine returns the engine that runs spec's lock.
func Engine(spec Spec) *campaign.Engine {
	if spec.Open == nil && spec.PerRun == nil {
		panic("lockwork: Spec.Open and Spec.PerRun are nil")
	}
	if spec.Dir == "" {
		spec.Dir = DirDefault
	}
	if spec.PausedAfter == 0 {
		spec.PausedAfter = 500 * time.Millisecond
	}
	doc := spec.Doc
	if doc == "" {
		doc = "mutual exclusion of the lock " + spec.Name + " (lockwork)"
	}
	probes := []string{ProbeAcquired, ProbeReleased, ProbeContended}
	if spec.ServerRestarts > 0 {
		probes = append(probes, ProbeServerRestart)
	}
	return &campaign.Engine{
		Name: spec.Name, Doc: doc, StepsMax: 20_000,
		Params: []campaign.Param{
			{Name: ParamProcesses, Default: 3, Min: 1, Max: 8, Doc: "client processes"},
			{Name: ParamRounds, Default: 3, Min: 1, Max: 20, Doc: "lock/unlock rounds per client"},
			{Name: ParamRespawns, Default: 4, Min: 0, Max: 32, Doc: "crashed clients respawned, in all"},
			{Name: ParamServerRestarts, Default: spec.ServerRestarts, Min: 0, Max: serverRestartsMax,
				Doc: "restarts of the shared volume's server, each losing every advisory lock (NFS)"},
		},
		Setup: func(params campaign.Params) func(w *sim.World) error {
			return func(w *sim.World) error { return newRecorder(spec.forRun(), params, w).setup() }
		},
		Check: func(result sim.Result, visualize bool) campaign.Verdict {
			return checkHistory(spec, result, visualize)
		},
		History: func(history []sim.Operation) ([]porcupine.Operation, porcupine.Model) {
			return Operations(history), models.LockModel(spec.Rules)
		},
		Probes:  probes,
		Explore: campaign.Params{ParamProcesses: 2, ParamRounds: 1, ParamRespawns: 0, ParamServerRestarts: min(spec.ServerRestarts, 1)},
	}
}

// forRun returns the spec of one run (PerRun's hooks).
func (s Spec) forRun() Spec {
	if s.PerRun == nil {
		return s
	}
	run := s.PerRun()
	s.Open, s.Setup, s.Hazards = run.Open, run.Setup, run.Hazards
	if s.Open == nil {
		panic("lockwork: Spec.PerRun returned no Open")
	}
	return s
}

// client is one process's loop: rounds of acquire, critical section,
// release. Every attempt is bounded.
func (r *Recorder) client(p *sim.Proc) {
	lock := r.spec.Open(p)
	ctx := context.Background()
	for range r.rounds {
		if !r.acquireRound(p, lock, ctx) {
			continue
		}
		if r.work(p, lock, ctx) != nil { // the critical section
			return
		}
		for range 3 { // an unknown release is retried
			if r.Release(p, lock) {
				break
			}
		}
	}
}

func (r *Recorder) acquireRound(p *sim.Proc, lock Lock, ctx context.Context) bool {
	for range attemptsMax {
		switch r.Acquire(p, lock) {
		case models.LockAcquired:
			return true
		case models.LockRefused: // the lock asks for an operator: this round is over
			return false
		}
		if p.Clock().Sleep(ctx, retryPause) != nil {
			return false
		}
	}
	return false
}

// work is the critical section: one pause of workTime, or, for a
// Heartbeater, pauses of its HeartbeatEvery with a heartbeat after each
// (at most workTime/HeartbeatEvery+1 of them).
func (r *Recorder) work(p *sim.Proc, lock Lock, ctx context.Context) error {
	total := r.workTime(p)
	beater, ok := lock.(Heartbeater)
	if !ok {
		return p.Clock().Sleep(ctx, total)
	}
	every := beater.HeartbeatEvery()
	if every <= 0 {
		panic("lockwork: HeartbeatEvery is not positive")
	}
	for left := total; left > 0; left -= every {
		if err := p.Clock().Sleep(ctx, min(every, left)); err != nil {
			return err
		}
		_ = beater.Heartbeat()
	}
	return nil
}

// workTime is how long a holder stays in its critical section: workPause,
// or (a decision, so shrinking can take it back) up to 64 times longer, the
// holder paused by a GC, a page-fault storm or SIGSTOP.
func (r *Recorder) workTime(p *sim.Proc) time.Duration {
	return workPause << p.World().Decisions().Intn(workPauseShiftMax+1)
}

// checkHistory is the porcupine check of a run's history.
func checkHistory(spec Spec, result sim.Result, visualize bool) campaign.Verdict {
	ops := Operations(result.History)
	verdict, info := models.CheckLock(spec.Rules, ops, checkTime)
	message := ""
	switch verdict {
	case porcupine.Illegal:
		message = "not linearizable: " + explainIllegal(result.History, ops, spec.Rules, info)
	case porcupine.Unknown:
		message = campaign.CheckTimeoutMessage
	}
	e := campaign.Engine{Name: spec.Name, History: func(h []sim.Operation) ([]porcupine.Operation, porcupine.Model) {
		return Operations(h), models.LockModel(spec.Rules)
	}}
	return e.HistoryVerdict(result, message, visualize)
}

// Operations maps a lockwork history to the porcupine operations of
// models.LockModel: a lane is a client id, the call and return ranks are the
// timestamps, a cut-short call is Unknown.
func Operations(history []sim.Operation) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(history))
	for _, op := range history {
		var input, output any
		switch op.Op {
		case opAcquire:
			input = models.LockAcquire{Proc: op.Lane}
		case opRelease:
			input = models.LockRelease{Proc: op.Lane}
		case opDeath:
			ops = append(ops, porcupine.Operation{ClientId: 0, Input: op.Input, Call: int64(op.CallOrder), Return: int64(op.ReturnOrder)})
			continue
		default:
			continue
		}
		output = op.Output
		if op.Unknown || output == nil {
			output = models.Unknown{}
		}
		ops = append(ops, porcupine.Operation{ClientId: op.Lane, Input: input, Output: output,
			Call: int64(op.CallOrder), Return: int64(op.ReturnOrder)})
	}
	return ops
}

func (r *Recorder) String() string { return fmt.Sprintf("lockwork recorder of %s", r.spec.Name) }
