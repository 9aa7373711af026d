package realstress

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/modelmap"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/models"
)

// Engines a campaign can run.
const (
	EngineLease     = "lease"
	EngineAdmission = "admission"
	EngineDirlease  = "dirlease"
)

// WorkerConfig is one worker incarnation's assignment.
type WorkerConfig struct {
	// Engine is EngineLease (the default when empty), EngineAdmission or
	// EngineDirlease.
	Engine string
	// Namespace is the lease namespace, or the admission state home.
	Namespace  string
	Worker     int
	Lane       int
	Ops        int
	Seed       uint64
	LogPath    string
	SpawnsPath string
	DeathsPath string
	// NoInspect leaves Inspect out of the workload (a user's choice; the
	// tests run with Inspect: the empty instant inside a reclaiming Acquire
	// is explained by LeaseReclaim events).
	NoInspect bool
	// BarrierDir is the parent's pause barrier (quiesce.go); "" = none.
	BarrierDir string
	// Dirlease only: Role is RoleCreator or RoleRecoverer; WorkDir is where
	// creators make their leased directories; ChildPID and ChildLane are
	// the creator's child process (spawned by the parent), 0 if none.
	Role                string
	WorkDir             string
	ChildPID, ChildLane int
	// PlantBlindInspector is a planted bug for the harness's own tests: the
	// worker's inspector reports every other process absent, so the engine
	// steals live owners' leases. A run with it must report violations.
	PlantBlindInspector bool
}

// RootID is the lease root every stress worker uses.
const RootID = "leasereal-stress"

// newGatedManager is a lease Manager on the real OS whose inspector waits
// for the parent to publish the deaths it observes.
func newGatedManager(config WorkerConfig) (*lease.Manager, error) {
	return newGatedManagerOn(config, osenv.NewFS())
}

// newGatedManagerOn is newGatedManager over fs.
func newGatedManagerOn(config WorkerConfig, fs lease.FS) (*lease.Manager, error) {
	var inspector lease.Inspector = deathGate{inner: osenv.NewInspector(), spawnsPath: config.SpawnsPath, deathsPath: config.DeathsPath}
	if config.PlantBlindInspector {
		inspector = blindInspector{Inspector: osenv.NewInspector()}
	}
	return lease.NewManager(lease.Config{Namespace: config.Namespace, RootID: RootID,
		FS: fs, Clock: osenv.NewClock(), Inspector: inspector, IDs: osenv.NewIDSource()})
}

// blindInspector is the planted bug: every other process looks absent.
type blindInspector struct{ lease.Inspector }

func (b blindInspector) Inspect(pid int) lease.Inspection {
	if current, err := b.Current(); err == nil && current.PID == pid {
		return b.Inspector.Inspect(pid)
	}
	return lease.Inspection{Kind: lease.InspectAbsent}
}

// held is a (generation, session) pair: a release capability.
type held struct {
	generation string
	session    string
}

// opLog records one incarnation's operations.
type opLog struct {
	config WorkerConfig
	log    *LogWriter
	seq    int
	// reclaimErr is the first failure to log a reclaim line.
	reclaimErr error
	// quiesce is this incarnation's side of the parent's pauses (from
	// config.BarrierDir, set up at the first call): every call waits there
	// first, so a pause always falls between two operations.
	quiesce *quiesceWorker
}

// leaseWorker runs one incarnation's lease operations.
type leaseWorker struct {
	opLog
	manager *lease.Manager
	random  *rand.Rand
	host    string
	mine    *held // the lease this incarnation acquired and still holds
	learned *held // a capability learned from another's held/inspect result
}

// RunWorker runs the worker of config.Engine.
func RunWorker(config WorkerConfig) error {
	switch config.Engine {
	case "", EngineLease:
		return RunLeaseWorker(config)
	case EngineAdmission:
		return RunAdmissionWorker(config)
	case EngineDirlease:
		return RunDirleaseWorker(config)
	}
	return fmt.Errorf("stress-worker: unknown engine %q", config.Engine)
}

// RunLeaseWorker performs config.Ops lease operations, logging each call
// BEFORE it starts and each return AFTER it ends.
func RunLeaseWorker(config WorkerConfig) error {
	if config.Lane <= 0 || config.Ops < 0 {
		panic(fmt.Sprintf("realstress: worker lane %d ops %d", config.Lane, config.Ops))
	}
	host, log, err := startWorker(config)
	if err != nil {
		return err
	}
	defer log.Close()
	w := &leaseWorker{opLog: opLog{config: config, log: log}, host: host,
		random: rand.New(rand.NewPCG(config.Seed, uint64(config.Lane)))}
	if w.manager, err = newGatedManagerOn(config, reclaimLogFS{FS: osenv.NewFS(), log: &w.opLog}); err != nil {
		return err
	}
	for range config.Ops {
		if err := w.step(); err != nil {
			return err
		}
		if w.reclaimErr != nil {
			return w.reclaimErr
		}
	}
	return nil
}

// reclaimLogFS logs each move of receiver.lock into quarantine (an
// acquire's reclaim of a dead owner) as a PhaseReclaim line of the acquire
// in progress, right after the rename. An acquire that returns reports its
// reclaims anyway; this line is what an acquire cut short by a kill leaves:
// it reclaimed, and may have installed a new owner after a lock-free
// Inspect saw the lease empty, a history its single unknown-outcome step
// cannot explain. BuildHistory turns the line into a models.LeaseReclaim.
// A kill before the line is written also stops the acquire before its
// install: its unknown outcome covers "reclaimed, then cut short".
type reclaimLogFS struct {
	lease.FS
	log *opLog
}

func (f reclaimLogFS) Rename(oldpath, newpath string) error {
	err := f.FS.Rename(oldpath, newpath)
	f.observe(oldpath, newpath, err)
	return err
}

func (f reclaimLogFS) RenameNoReplace(oldpath, newpath string) error {
	err := f.FS.RenameNoReplace(oldpath, newpath)
	f.observe(oldpath, newpath, err)
	return err
}

func (f reclaimLogFS) observe(oldpath, newpath string, err error) {
	if err != nil || path.Base(oldpath) != "receiver.lock" || path.Base(path.Dir(newpath)) != "quarantine" ||
		!strings.HasPrefix(path.Base(newpath), "receiver.") {
		return
	}
	input := models.LeaseReclaim{Namespace: f.log.config.Namespace, Generation: quarantinedGeneration(path.Base(newpath))}
	if logErr := f.log.reclaimed(input); logErr != nil && f.log.reclaimErr == nil {
		f.log.reclaimErr = logErr // ends the worker after this operation
	}
}

// quarantinedGeneration is the generation in a quarantine entry's name
// "receiver.<generation>.<unix ms>.<id>", or "" (the model then accepts any
// dead owner) when it is not a UUID.
func quarantinedGeneration(name string) string {
	parts := strings.Split(name, ".")
	if len(parts) != 4 {
		return ""
	}
	if !statefile.IsUUIDv4(parts[1]) {
		return ""
	}
	return parts[1]
}

// step picks and performs one operation: a holder mostly uses its lease
// through WithCurrentLease and then releases it; a non-holder mostly
// acquires, sometimes inspects, sometimes releases a learned capability.
func (w *leaseWorker) step() error {
	roll := w.random.IntN(100)
	noInspect := w.config.NoInspect
	if w.mine != nil {
		switch {
		case roll < 55:
			return w.withCurrent()
		case roll < 95 || noInspect:
			return w.release(*w.mine)
		}
		return w.inspect()
	}
	switch {
	case roll < 75:
		return w.acquire()
	case roll < 90 && !noInspect:
		return w.inspect()
	case w.learned != nil:
		return w.release(*w.learned)
	case noInspect:
		return w.acquire()
	}
	return w.inspect()
}

func (w *opLog) call(op string, input any) (Record, error) {
	if w.quiesce == nil {
		w.quiesce = &quiesceWorker{dir: w.config.BarrierDir, lane: w.config.Lane}
	}
	if err := w.quiesce.wait(); err != nil {
		return Record{}, err
	}
	w.seq++
	data, err := json.Marshal(input)
	if err != nil {
		return Record{}, err
	}
	record := Record{Worker: w.config.Worker, Lane: w.config.Lane, Seq: w.seq, Phase: PhaseCall, Op: op,
		Input: data, Ns: MonotonicNs()}
	return record, w.log.Append(record)
}

// reclaimed logs a reclaim inside the operation in progress (seq).
func (w *opLog) reclaimed(input models.LeaseReclaim) error {
	data, err := json.Marshal(input)
	if err != nil {
		return err
	}
	return w.log.Append(Record{Worker: w.config.Worker, Lane: w.config.Lane, Seq: w.seq, Phase: PhaseReclaim,
		Op: OpAcquire, Input: data, Ns: MonotonicNs()})
}

// finish logs the return: the output, or the error (unknown outcome).
func (w *opLog) finish(call Record, output any, opErr error) error {
	record := Record{Worker: call.Worker, Lane: call.Lane, Seq: call.Seq, Phase: PhaseReturn, Op: call.Op}
	if opErr != nil {
		record.Error = opErr.Error()
	} else {
		data, err := json.Marshal(output)
		if err != nil {
			return err
		}
		record.Output = data
	}
	record.Ns = MonotonicNs()
	return w.log.Append(record)
}

func (w *leaseWorker) acquire() error {
	session := fmt.Sprintf("lane%d-op%d", w.config.Lane, w.seq+1)
	input := models.LeaseAcquire{Namespace: w.config.Namespace, Proc: w.config.Lane, Host: w.host, Session: session}
	call, err := w.call(OpAcquire, input)
	if err != nil {
		return err
	}
	result, opErr := w.manager.Acquire(context.Background(), lease.AcquireRequest{
		SessionID: session, SessionFile: filepath.Join(w.config.Namespace, "sessions", session)})
	if opErr != nil {
		return w.finish(call, nil, opErr)
	}
	output, _ := modelmap.LeaseAcquire(result) // an unmapped refusal records RefusalNone: a violation
	switch result.Kind {
	case lease.Acquired:
		w.mine = &held{generation: result.Owner.Generation, session: session}
	case lease.Held:
		w.learned = &held{generation: result.Owner.Generation, session: result.Owner.SessionID}
	}
	return w.finish(call, output, nil)
}

func (w *leaseWorker) release(capability held) error {
	input := models.LeaseRelease{Namespace: w.config.Namespace, Proc: w.config.Lane,
		Generation: capability.generation, Session: capability.session}
	call, err := w.call(OpRelease, input)
	if err != nil {
		return err
	}
	result, opErr := w.manager.Release(context.Background(), capability.generation)
	if w.mine != nil && *w.mine == capability && (opErr != nil || result.Kind != lease.ReleaseRefused) {
		w.mine = nil // released, lost, or unknown: never present it again as ours
	}
	if w.learned != nil && *w.learned == capability {
		w.learned = nil
	}
	if opErr != nil && result.Kind != lease.Released {
		return w.finish(call, nil, opErr)
	}
	output, _ := modelmap.LeaseRelease(result) // an unmapped refusal records RefusalNone: a violation
	return w.finish(call, output, nil)
}

func (w *leaseWorker) inspect() error {
	call, err := w.call(OpInspect, models.LeaseInspect{Namespace: w.config.Namespace, Proc: w.config.Lane})
	if err != nil {
		return err
	}
	projection, opErr := w.manager.Inspect(context.Background())
	if opErr != nil {
		return w.finish(call, nil, opErr)
	}
	if projection.Kind == lease.Owned && (w.mine == nil || w.mine.generation != projection.Owner.Generation) {
		w.learned = &held{generation: projection.Owner.Generation, session: projection.Owner.SessionID}
	}
	return w.finish(call, modelmap.LeaseInspect(projection), nil)
}

func (w *leaseWorker) withCurrent() error {
	mine := *w.mine
	input := models.LeaseWithCurrent{Namespace: w.config.Namespace, Proc: w.config.Lane,
		Generation: mine.generation, Session: mine.session}
	call, err := w.call(OpWithCurrent, input)
	if err != nil {
		return err
	}
	entered := false
	opErr := w.manager.WithCurrentLease(context.Background(), mine.generation,
		func(context.Context, lease.Owner) error { entered = true; return nil })
	output, known := modelmap.LeaseFence(entered, opErr)
	if !known {
		return w.finish(call, nil, opErr)
	}
	if output.Kind == models.FenceFenced {
		w.mine = nil
	}
	return w.finish(call, output, nil)
}

// LaneOfSession parses the lane out of a stress session ID "lane<L>-op<N>".
func LaneOfSession(session string) (int, error) {
	rest, ok := strings.CutPrefix(session, "lane")
	if !ok {
		return 0, fmt.Errorf("session %q is not a stress session", session)
	}
	laneText, _, ok := strings.Cut(rest, "-op")
	lane, err := strconv.Atoi(laneText)
	if !ok || err != nil || lane <= 0 {
		return 0, fmt.Errorf("session %q is not a stress session", session)
	}
	return lane, nil
}

// ReadDeaths reads a deaths file.
func ReadDeaths(path string) ([]Death, error) { return readJSONLines[Death](path) }
