package realstress

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/modelmap"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/models"
)

// The dirlease campaign. Creator workers make private 0700 directories
// under the work root, Create raw-working leases on them (state home: the
// run's namespace directory), walk them through their phases (running
// records a child process), look at them (Use), Release them and remove the
// directory; recoverer workers run Recover passes concurrently. The parent
// SIGKILLs workers at random, as for the other engines. Every worker
// operation is a models.Dir* operation in the history, checked by
// models.CheckDirLease.
//
// The child of a creator is a process the PARENT spawns with the creator
// (a sleeper, `stress-worker --child`) and hands to it by PID: the parent
// reaps every process of the run, so every death, a child's too, is stamped
// in the history after the process is gone, and the death gate delays any
// recovery that sees a child dead until then. A child outlives its creator
// by a random delay (a recovery must then find the claim active, not
// recoverable), and may die first (the creator's running update then fails
// to capture it: an unknown outcome).
//
// Left out: bundle stages (their publication is a rename whose outcome a
// killed creator never learns, and the model has no "maybe published"), and
// the hostile rename swap the simulator plays.

// Dirlease operation names in the logs.
const (
	OpDirCreate  = "dir-create"
	OpDirUpdate  = "dir-update"
	OpDirRelease = "dir-release"
	OpDirRecover = "dir-recover"
	OpDirUse     = "dir-use"
)

// Roles of a dirlease worker.
const (
	RoleCreator   = "creator"
	RoleRecoverer = "recoverer"
)

// dirLaunchWindowMs bounds RecoverAfterMs beyond a creation's wall time.
const dirLaunchWindowMs = 100

// dirRecovererRole says which worker slots of a dirlease run recover: one
// in four, and the last, so a run of two has one of each.
func dirRecovererRole(worker, procs int) string {
	if worker == procs || worker%4 == 0 {
		return RoleRecoverer
	}
	return RoleCreator
}

// fixedClock is a Clock whose wall time is one instant, so an operation's
// input can name the time the engine judges by (DirRecover.NowMs).
type fixedClock struct {
	lease.Clock
	now  time.Time
	boot time.Duration
}

func (c fixedClock) Now() time.Time { return c.now }

// SinceBoot is the host's boot clock read at the same instant as now, so
// the engine's launching window (boot clock) and the model's (NowMs, wall)
// are judged at one moment.
func (c fixedClock) SinceBoot() time.Duration { return c.boot }

// instant reads the wall and boot clocks together.
func instant() fixedClock {
	boot := osenv.NewBootClock().SinceBoot()
	return fixedClock{Clock: osenv.NewClock(), now: time.Now(), boot: boot}
}

// newDirConfig is the dirlease engine on the real OS with the death gate,
// judging at the instant at (wall and boot clocks), over fsys.
func newDirConfig(config WorkerConfig, at fixedClock, fsys lease.FS) dirlease.Config {
	var inspector lease.Inspector = deathGate{inner: osenv.NewInspector(), spawnsPath: config.SpawnsPath,
		deathsPath: config.DeathsPath}
	if config.PlantBlindInspector {
		inspector = blindInspector{Inspector: osenv.NewInspector()}
	}
	return dirlease.Config{StateHome: config.Namespace, FS: fsys, Clock: at, BootClock: at,
		Inspector: inspector, IDs: osenv.NewIDSource()}
}

// dirWorker runs one incarnation's dirlease operations.
type dirWorker struct {
	opLog
	host   string
	random *rand.Rand
	mine   *dirHeld
	// childGone: capturing the child failed once; it is dead (or its PID
	// taken), so this incarnation stops entering running.
	childGone bool
	made      int // directories made, for fresh names
}

// dirHeld is the lease a creator holds and what it knows of it.
type dirHeld struct {
	lease *dirlease.Lease
	path  string
	child int // the child lane the claim records (running), 0 if none
}

// RunDirleaseWorker performs config.Ops dirlease operations as a creator or
// a recoverer (config.Role).
func RunDirleaseWorker(config WorkerConfig) error {
	if config.Role != RoleCreator && config.Role != RoleRecoverer {
		return fmt.Errorf("stress-worker: dirlease role %q", config.Role)
	}
	host, log, err := startWorker(config)
	if err != nil {
		return err
	}
	defer log.Close()
	w := &dirWorker{opLog: opLog{config: config, log: log}, host: host,
		random: rand.New(rand.NewPCG(config.Seed, uint64(config.Lane)))}
	for range config.Ops {
		if config.Role == RoleRecoverer {
			_, err = w.recover()
			// A short pause: a recoverer's share lasts about as long as a
			// creator's, so kills keep meeting creators until the end.
			time.Sleep(time.Duration(w.random.IntN(1000)) * time.Microsecond)
		} else {
			err = w.step()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// step is one creator operation: create when holding nothing; otherwise
// sometimes look at the directory, else take the next lifecycle step.
func (w *dirWorker) step() error {
	if w.mine == nil {
		return w.create()
	}
	choice := w.random.IntN(100)
	phase := w.mine.lease.Claim().Phase
	// Running lingers (looks at the directory half the time): a kill then
	// often leaves a running claim whose child outlives its owner.
	if choice < 20 || (phase == dirlease.PhaseRunning && choice < 50) {
		return w.use()
	}
	switch phase {
	case dirlease.PhasePreparing, dirlease.PhaseSettled:
		if choice < 60 {
			return w.update(dirlease.PhaseLaunching)
		}
		return w.release()
	case dirlease.PhaseLaunching:
		if choice < 70 && !w.childGone && w.config.ChildPID > 0 {
			return w.update(dirlease.PhaseRunning)
		}
		return w.update(dirlease.PhaseSettled)
	}
	return w.update(dirlease.PhaseSettled) // running
}

// leasedName is a creator's directory name: l<lane>-<n>.
func leasedName(lane, n int) string { return fmt.Sprintf("l%d-%d", lane, n) }

// isLeasedName tells a creator's directory from a recovery's quarantine
// beside it in the work root.
func isLeasedName(name string) bool {
	var lane, n int
	parsed, err := fmt.Sscanf(name, "l%d-%d", &lane, &n)
	return err == nil && parsed == 2 && name == leasedName(lane, n)
}

// create makes a fresh private directory and leases it. A directory whose
// Create is cut short or fails is left where it is (and never reused).
func (w *dirWorker) create() error {
	w.made++
	path := filepath.Join(w.config.WorkDir, leasedName(w.config.Lane, w.made))
	if err := os.Mkdir(path, 0o700); err != nil {
		return err
	}
	at := instant()
	now := at.now
	request := dirlease.CreateRequest{Role: dirlease.RoleRawWorking, Path: path,
		RecoverAfterMs: now.UnixMilli() + int64(w.random.IntN(dirLaunchWindowMs))}
	call, err := w.call(OpDirCreate, models.DirCreate{Proc: w.config.Lane, Host: w.host, Path: path,
		Role: models.RoleRawWorking, RecoverAfterMs: request.RecoverAfterMs})
	if err != nil {
		return err
	}
	held, opErr := dirlease.Create(context.Background(), newDirConfig(w.config, at, osenv.NewFS()), request)
	if opErr != nil {
		return w.finish(call, nil, opErr)
	}
	w.mine = &dirHeld{lease: held, path: path}
	return w.finish(call, models.DirCreateResult{ClaimID: held.Claim().ID}, nil)
}

func (w *dirWorker) update(phase dirlease.Phase) error {
	h := w.mine
	claim := h.lease.Claim()
	input := models.DirUpdate{Proc: w.config.Lane, Path: h.path, ClaimID: claim.ID, Role: models.RoleRawWorking,
		FromPhase: modelmap.DirPhase(claim.Phase), ToPhase: modelmap.DirPhase(phase), FromChild: h.child}
	pid := 0
	if phase == dirlease.PhaseRunning {
		input.Child, input.ChildHost, pid = w.config.ChildLane, w.host, w.config.ChildPID
	}
	call, err := w.call(OpDirUpdate, input)
	if err != nil {
		return err
	}
	opErr := h.lease.Update(context.Background(), phase, pid)
	kind, known := modelmap.DirCAS(opErr)
	if errors.Is(opErr, dirlease.ErrChildIdentity) {
		w.childGone = true
	}
	if !known {
		return w.finish(call, nil, opErr)
	}
	switch {
	case kind == models.CASOK:
		h.child = input.Child
	case kind == models.CASChanged:
		w.mine = nil // the claim is not what this handle wrote: never present it again
	}
	return w.finish(call, models.DirUpdateResult{Kind: kind}, nil)
}

// release releases the lease and, once released, removes the directory.
func (w *dirWorker) release() error {
	h := w.mine
	claim := h.lease.Claim()
	call, err := w.call(OpDirRelease, models.DirRelease{Proc: w.config.Lane, Path: h.path, ClaimID: claim.ID,
		Phase: modelmap.DirPhase(claim.Phase), Child: h.child})
	if err != nil {
		return err
	}
	opErr := h.lease.Release(context.Background())
	kind, known := modelmap.DirCAS(opErr)
	w.mine = nil // released, changed or unknown: never present it again
	if !known {
		return w.finish(call, nil, opErr)
	}
	if err := w.finish(call, models.DirReleaseResult{Kind: kind}, nil); err != nil {
		return err
	}
	if kind != models.CASOK {
		return nil
	}
	// The claim is gone, so the model no longer tracks the path. Already
	// gone is no harness failure: only a broken recovery (a planted bug)
	// removes a live owner's directory, and the history shows that.
	if err := os.Remove(h.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// use looks at the leased directory: the one the claim records, another,
// or nothing. A recovery that removed a live owner's directory shows here.
func (w *dirWorker) use() error {
	h := w.mine
	call, err := w.call(OpDirUse, models.DirUse{Proc: w.config.Lane, Path: h.path})
	if err != nil {
		return err
	}
	info, statErr := osenv.NewFS().Lstat(h.path)
	kind := models.UseForeign
	switch {
	case errors.Is(statErr, fs.ErrNotExist):
		kind = models.UseMissing
	case statErr != nil:
		return w.finish(call, nil, statErr)
	default:
		if id, ok := info.Identity(); ok && info.IsDir() && dirlease.IdentityOf(id) == h.lease.Claim().DirectoryIdentity {
			kind = models.UsePresent
		}
	}
	return w.finish(call, models.DirUseResult{Kind: kind}, nil)
}

// recover runs one recovery pass at the wall time its input names.
func (w *dirWorker) recover() (dirlease.Report, error) {
	at := instant()
	now := at.now
	call, err := w.call(OpDirRecover, models.DirRecover{Proc: w.config.Lane, Host: w.host, NowMs: now.UnixMilli()})
	if err != nil {
		return dirlease.Report{}, err
	}
	fsys := moveLogFS{FS: osenv.NewFS(), workDir: w.config.WorkDir, movesPath: movesPath(w.config), lane: w.config.Lane}
	report, opErr := dirlease.Recover(context.Background(), newDirConfig(w.config, at, fsys))
	if opErr != nil {
		// The model treats a failed pass as one of unknown outcome (any
		// recoverable claim may be gone); the log keeps the error.
		return report, w.finish(call, nil, opErr)
	}
	return report, w.finish(call, models.DirRecoverResult{Recovered: report.Recovered, Published: report.Published,
		Active: report.Active, Indeterminate: report.Indeterminate}, nil)
}

// Move is a recovery's move of a leased directory out of its path (the
// first step of removing it, into a quarantine), logged by the recoverer
// (moves.jsonl beside spawns.jsonl) right after the rename succeeded, with
// Ns stamped right BEFORE the rename. The parent checks every move against
// the ground truth (checkDirMoves): a correct recovery judges the owner, and
// a running claim's child, dead through the death gate, which waits until
// their deaths are stamped, so it moves only after those stamps.
type Move struct {
	Lane int    `json:"lane"`
	Path string `json:"path"`
	Ns   int64  `json:"ns"`
}

func movesPath(config WorkerConfig) string {
	return filepath.Join(filepath.Dir(config.SpawnsPath), "moves.jsonl")
}

// moveLogFS logs every rename of an entry of the work root (a leased
// directory) as a Move.
type moveLogFS struct {
	lease.FS
	workDir, movesPath string
	lane               int
}

func (f moveLogFS) Rename(oldpath, newpath string) error {
	return f.logged(oldpath, func() error { return f.FS.Rename(oldpath, newpath) })
}

func (f moveLogFS) RenameNoReplace(oldpath, newpath string) error {
	return f.logged(oldpath, func() error { return f.FS.RenameNoReplace(oldpath, newpath) })
}

func (f moveLogFS) logged(oldpath string, rename func() error) error {
	ns := MonotonicNs()
	err := rename()
	if err != nil || f.workDir == "" || filepath.Dir(oldpath) != f.workDir || !isLeasedName(filepath.Base(oldpath)) {
		return err // a quarantine put back (or nothing of the work root)
	}
	if logErr := appendJSONLine(f.movesPath, Move{Lane: f.lane, Path: oldpath, Ns: ns}); logErr != nil {
		return fmt.Errorf("realstress: logging a recovery move: %w (the rename itself succeeded)", logErr)
	}
	return nil
}

// checkDirMoves checks every logged recovery move against the ground truth
// the logs and deaths give, and describes each violation: the leased
// directory's creator must have died (its death stamped) before the move;
// and if the last change the creator made to the claim before the move was
// a successful update to running, so the claim surely recorded that child,
// the child must have died before it too. This sees what the model cannot:
// a pass whose counts a maybe-gone claim of another dead owner explains
// (models/dirlease.go, phantoms).
func checkDirMoves(lanes map[int][]Record, deaths []Death, moves []Move) ([]string, error) {
	deathOf := map[int]int64{}
	for _, death := range deaths {
		deathOf[death.Lane] = death.Ns
	}
	owner, changes, err := dirClaimChanges(lanes)
	if err != nil {
		return nil, err
	}
	var violations []string
	for _, move := range moves {
		lane, known := owner[move.Path]
		if !known {
			return nil, fmt.Errorf("recovery moved %s, which no creator leased", move.Path)
		}
		if death, dead := deathOf[lane]; !dead || death >= move.Ns {
			violations = append(violations, fmt.Sprintf("lane %d's recovery moved %s while its creator, lane %d, was alive", move.Lane, move.Path, lane))
			continue
		}
		var last *claimChange
		for i := range changes[move.Path] {
			if change := &changes[move.Path][i]; change.callNs < move.Ns && (last == nil || change.callNs > last.callNs) {
				last = change
			}
		}
		if last == nil || last.runningChild == 0 || last.returnNs >= move.Ns {
			continue // no child, or unsure which content the claim had
		}
		if death, dead := deathOf[last.runningChild]; !dead || death >= move.Ns {
			violations = append(violations, fmt.Sprintf("lane %d's recovery moved %s while the running child its claim records, lane %d, was alive",
				move.Lane, move.Path, last.runningChild))
		}
	}
	return violations, nil
}

// claimChange is a creator operation that changed, or may have changed, a
// claim: runningChild is set only for an update to running that surely did.
type claimChange struct {
	callNs, returnNs int64
	runningChild     int
}

// dirClaimChanges reads, from the creators' logs, who leased each path and
// the operations that changed (or may have changed) its claim. A lookup, a
// refused compare-and-swap and a recovery change nothing a creator knows.
func dirClaimChanges(lanes map[int][]Record) (map[string]int, map[string][]claimChange, error) {
	owner := map[string]int{}
	changes := map[string][]claimChange{}
	for lane, records := range lanes {
		for i := 0; i < len(records); i++ {
			call := records[i]
			if call.Phase != PhaseCall || call.Op == OpDirRecover || call.Op == OpDirUse {
				continue
			}
			input, err := decodeInput(call)
			if err != nil {
				return nil, nil, err
			}
			change := claimChange{callNs: call.Ns, returnNs: 1<<63 - 1} // cut short: unsure from its call on
			var output any = models.Unknown{}
			if i+1 < len(records) && records[i+1].Phase == PhaseReturn {
				i++
				change.returnNs = records[i].Ns
				if output, err = decodeOutput(records[i]); err != nil {
					return nil, nil, err
				}
			}
			var path string
			switch in := input.(type) {
			case models.DirCreate:
				path, owner[in.Path] = in.Path, lane
			case models.DirUpdate:
				path = in.Path
				if out, ok := output.(models.DirUpdateResult); ok && out.Kind != models.CASOK {
					continue // refused: nothing changed
				} else if ok && in.ToPhase == models.DirRunning {
					change.runningChild = in.Child
				}
			case models.DirRelease:
				path = in.Path
				if out, ok := output.(models.DirReleaseResult); ok && out.Kind != models.CASOK {
					continue
				}
			default:
				return nil, nil, fmt.Errorf("lane %d: a %s in a dirlease log", lane, call.Op)
			}
			changes[path] = append(changes[path], change)
		}
	}
	return owner, changes, nil
}

// childMain is the hidden `stress-worker --child`: a process a creator
// records as its running child; the parent kills it.
func childMain() error {
	time.Sleep(childLifeMax)
	return nil
}

// childLifeMax bounds a child's life if the parent never kills it.
const childLifeMax = 15 * time.Minute

// livenessDirlease is the final recovery after every process died (and
// every launching window passed): it must leave no claim.
func (r *runner) livenessDirlease(w *opLog) (string, bool, error) {
	time.Sleep((dirLaunchWindowMs + 20) * time.Millisecond)
	host, err := os.Hostname()
	if err != nil {
		return "", false, err
	}
	dw := &dirWorker{opLog: *w, host: host}
	report, err := dw.recover()
	if err != nil {
		return "", false, err
	}
	if records, err := ReadLog(w.config.LogPath); err == nil && len(records) == 2 && records[1].Error != "" {
		return "recovery failed: " + records[1].Error, false, nil
	}
	left, err := filepath.Glob(filepath.Join(append([]string{r.namespace}, append(dirlease.RootDir, "*.json")...)...))
	if err != nil {
		return "", false, err
	}
	text := fmt.Sprintf("recovered %d, %d claim(s) left", report.Recovered, len(left))
	return text, len(left) == 0, nil
}
