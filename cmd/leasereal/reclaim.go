package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
)

// The operator action of ARCHITECTURE.md: a forced reclaim, into
// quarantine, of every entry the engine refuses to touch by itself (the
// blockers of lease.Projection: a corrupt lifecycle guard or reclaim
// intent, a corrupt, foreign or remote receiver.lock, a corrupt epoch
// counter), and of an owned receiver.lock whose owner is not provably
// alive. It prints the evidence first, never deletes anything, and goes
// through lease.Manager.ForceReclaim, which takes the lifecycle guard
// where the entry needs it and refuses an owner provably alive on this
// host.

// evidenceBytesMax bounds the owner.json bytes printed as evidence.
const evidenceBytesMax = 64 << 10

type evidenceJSON struct {
	Projection inspectJSON `json:"projection"`
	// OwnerBytes is owner.json as found (bounded), when readable.
	OwnerBytes string `json:"ownerBytes,omitempty"`
	// Mode, Dev and Ino identify the receiver.lock entry that was judged
	// (empty when there is none).
	Mode string `json:"mode"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
	// OwnerState is the liveness verdict for an owned record.
	OwnerState string `json:"ownerState,omitempty"`
}

// actionJSON is what reclaim did (or, in a dry run, would do) with one
// entry: ForceReclaim's result.
type actionJSON struct {
	Kind           string `json:"kind"`
	Path           string `json:"path"`
	Human          string `json:"human,omitempty"`
	Diagnostic     string `json:"diagnostic,omitempty"`
	Generation     string `json:"generation,omitempty"`
	Result         string `json:"result"` // pending (dry run) | moved | nothing | refused
	QuarantinePath string `json:"quarantinePath,omitempty"`
	Evidence       string `json:"evidence,omitempty"`
	Epoch          uint64 `json:"epoch,omitempty"`
	// ProvenEpoch and ProvenBy (epoch-counter only): the highest epoch the
	// namespace could still prove issued, and the file proving it.
	ProvenEpoch uint64 `json:"provenEpoch,omitempty"`
	ProvenBy    string `json:"provenBy,omitempty"`
	Why         string `json:"why,omitempty"`
}

type reclaimOutputJSON struct {
	Result    string       `json:"result"` // reclaimed | dry-run | nothing | refused
	Namespace string       `json:"namespace"`
	Evidence  evidenceJSON `json:"evidence"`
	// Actions lists each entry in the order it is resolved: guard,
	// intents, receiver.lock, epoch counter.
	Actions []actionJSON `json:"actions"`
	// QuarantinePath is where receiver.lock went (else the first entry
	// moved).
	QuarantinePath string `json:"quarantinePath,omitempty"`
	Why            string `json:"why,omitempty"`
}

// reclaimOptions are reclaim's flags.
type reclaimOptions struct {
	force      bool
	confirmed  map[string]bool
	epochFloor uint64
	// epochUnproven confirms an epoch floor nothing in the namespace
	// proves (lease.ForceRequest.EpochUnprovenConfirmed).
	epochUnproven bool
	// holderMayRun confirms forcing a receiver.lock whose holder cannot be
	// identified (lease.ForceRequest.HolderMayRunConfirmed).
	holderMayRun bool
}

// generationsFlag collects every --generation G.
type generationsFlag map[string]bool

func (g generationsFlag) String() string { return "" }
func (g generationsFlag) Set(value string) error {
	g[value] = true
	return nil
}

func cmdReclaim(args []string, stdout io.Writer) error {
	flags := newFlagSet("reclaim")
	var common leaseFlags
	common.register(flags)
	options := reclaimOptions{confirmed: map[string]bool{}}
	flags.BoolVar(&options.force, "force", false, "move every blocking entry into quarantine/ (without it: print the evidence only)")
	flags.Var(generationsFlag(options.confirmed), "generation", "the generation of a valid record being reclaimed, as a confirmation (repeatable)")
	flags.Uint64Var(&options.epochFloor, "epoch-floor", 0, "for a corrupt epoch counter or issued mark: the largest epoch known issued in this namespace "+
		"(at least the one inspect's provenEpoch names)")
	flags.BoolVar(&options.epochUnproven, "epoch-floor-unproven", false,
		"for a corrupt epoch counter with no valid record of the highest epoch issued left: confirm that --epoch-floor is your own word")
	flags.BoolVar(&options.holderMayRun, "holder-may-run", false,
		"for a corrupt receiver.lock: confirm forcing it although its holder cannot be identified and may still run (check first)")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		return usagef("reclaim takes no arguments")
	}
	manager, refusal, err := common.open(osenv.NewInspector())
	if err != nil {
		return err
	}
	namespace := manager.Namespace()
	if refusal.Reason == refusalNotDirectory {
		if info, err := osenv.NewFS().Lstat(namespace); err == nil && !info.IsDir() && !info.IsSymlink() {
			return reclaimNotDirectory(stdout, namespace, refusal, info, options.force)
		}
	}
	out := reclaimOutputJSON{Namespace: namespace, Actions: []actionJSON{}}
	projection, refusal, err := inspectNamespace(manager, refusal)
	if err != nil {
		return err
	}
	if !refusal.IsZero() {
		out.Result, out.Why = "refused", refusal.String()
		out.Evidence.Projection = refusedInspection(namespace, refusal)
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	if out.Evidence, err = evidenceOf(osenv.NewFS(), namespace, projection); err != nil {
		return err
	}
	targets := reclaimTargets(namespace, projection)
	for _, target := range targets {
		out.Actions = append(out.Actions, actionJSON{Kind: string(target.Kind), Path: target.Path,
			Human: string(target.Human), Diagnostic: target.Diagnostic, Generation: target.Generation, Result: "pending"})
	}
	code := decideReclaim(&out, targets, options)
	if code < 0 {
		code, err = forceAll(manager, &out, targets, options)
		if err != nil {
			return errors.Join(printJSON(stdout, out), err)
		}
	}
	return errors.Join(printJSON(stdout, out), codeOrNil(code))
}

// decideReclaim settles the outcome of everything but a forced run that
// may proceed (-1): nothing to do (exit 1), a dry run (3), or a forced run
// missing a confirmation, refused before anything moves (3).
func decideReclaim(out *reclaimOutputJSON, targets []lease.Blocker, options reclaimOptions) int {
	switch {
	case len(targets) == 0:
		out.Result, out.Why = "nothing", "no receiver.lock and nothing blocks the namespace"
		return exitConflict
	case !options.force:
		out.Result, out.Why = "dry-run", "rerun with --force to move every entry listed in actions into quarantine/"
		if unidentifiedHolder(targets) {
			out.Why += " (and --holder-may-run for receiver.lock: " + holderMayRunAdvice + ")"
		}
		return exitRefused
	}
	if why := missingConfirmation(targets, options); why != "" {
		out.Result, out.Why = "refused", why
		return exitRefused
	}
	return -1
}

// missingConfirmation says which flag a forced reclaim still needs, or "".
func missingConfirmation(targets []lease.Blocker, options reclaimOptions) string {
	for _, target := range targets {
		switch {
		case target.Generation != "" && !options.confirmed[target.Generation]:
			return fmt.Sprintf("%s is owned by generation %s: pass --generation %s to confirm",
				filepath.Base(target.Path), target.Generation, target.Generation)
		case unidentifiedHolder([]lease.Blocker{target}) && !options.holderMayRun:
			return "receiver.lock is corrupt: " + holderMayRunAdvice
		case target.Kind == lease.BlockerEpoch && options.epochFloor == 0:
			return "the epoch counter is invalid: pass" + epochFloorAdvice(target) +
				"; the counter becomes N, and the next lease gets N+1"
		case target.Kind == lease.BlockerEpoch && options.epochFloor < target.ProvenEpoch:
			return fmt.Sprintf("--epoch-floor %d is below epoch %d, which %s proves this namespace issued: "+
				"the next lease would get an epoch already issued; pass --epoch-floor %d or larger",
				options.epochFloor, target.ProvenEpoch, target.ProvenBy, target.ProvenEpoch)
		case target.Kind == lease.BlockerEpoch && target.EpochUnproven && !options.epochUnproven:
			return "no valid record of the highest epoch issued is left in this namespace: --epoch-floor is your word " +
				"alone; take it from your fenced resources (the largest epoch they saw), then rerun with --epoch-floor-unproven"
		}
	}
	return ""
}

// holderMayRunAdvice is lease.UnidentifiedHolderAdvice with the flag that
// confirms.
const holderMayRunAdvice = lease.UnidentifiedHolderAdvice + "; then rerun with --force --holder-may-run"

// unidentifiedHolder reports whether a target is a receiver.lock whose
// holder nothing identifies (corrupt: no generation to confirm).
func unidentifiedHolder(targets []lease.Blocker) bool {
	return slices.ContainsFunc(targets, func(b lease.Blocker) bool {
		return b.Kind == lease.BlockerReceiver && b.Generation == ""
	})
}

// reclaimOrder is the order a namespace's blockers are resolved in: the
// guard first (receiver.lock and the epoch counter are forced under it),
// then the reclaim intents, receiver.lock, and the epoch counter.
var reclaimOrder = map[lease.BlockerKind]int{lease.BlockerGuard: 0, lease.BlockerIntent: 1, lease.BlockerReceiver: 2, lease.BlockerEpoch: 3}

// reclaimTargets are the projection's blockers, plus an owned receiver.lock
// that is no blocker (a local owner: ForceReclaim refuses it while alive),
// in reclaimOrder.
func reclaimTargets(namespace string, projection lease.Projection) []lease.Blocker {
	targets := slices.Clone(projection.Blockers)
	listed := slices.ContainsFunc(targets, func(b lease.Blocker) bool { return b.Kind == lease.BlockerReceiver })
	if !listed && projection.Kind != lease.Empty {
		receiver := lease.Blocker{Kind: lease.BlockerReceiver, Path: filepath.Join(namespace, "receiver.lock"),
			Human: projection.Human, Diagnostic: projection.Diagnostic}
		if projection.Kind == lease.Owned {
			receiver.Generation = projection.Owner.Generation
			receiver.Diagnostic = fmt.Sprintf("owned by pid %d on %s (generation %s)",
				projection.Owner.PID, projection.Owner.Hostname, projection.Owner.Generation)
		}
		targets = append(targets, receiver)
	}
	slices.SortStableFunc(targets, func(a, b lease.Blocker) int { return reclaimOrder[a.Kind] - reclaimOrder[b.Kind] })
	return targets
}

// forceAll resolves each target with ForceReclaim, in order, and stops at
// the first refusal (a later entry may depend on it: receiver.lock is
// forced under the guard). Exit 0 when something moved and nothing was
// refused, 1 when there was nothing to do after all, 3 on a refusal.
func forceAll(manager *lease.Manager, out *reclaimOutputJSON, targets []lease.Blocker, options reclaimOptions) (int, error) {
	moved := false
	for i, target := range targets {
		result, err := manager.ForceReclaim(context.Background(), lease.ForceRequest{Kind: target.Kind, Path: target.Path,
			Generation: target.Generation, EpochFloor: options.epochFloor,
			EpochUnprovenConfirmed: options.epochUnproven && target.Kind == lease.BlockerEpoch,
			HolderMayRunConfirmed:  options.holderMayRun && target.Kind == lease.BlockerReceiver})
		if err != nil {
			out.Result, out.Why = "error", err.Error()
			return 0, err
		}
		action := &out.Actions[i]
		action.Result, action.QuarantinePath, action.Why = result.Kind.String(), result.QuarantinePath, result.Why
		action.Evidence, action.Epoch = string(result.Evidence), result.Epoch
		action.ProvenEpoch, action.ProvenBy = result.ProvenEpoch, result.ProvenBy
		if result.Kind == lease.ForceRefused {
			out.Result, out.Why = "refused", fmt.Sprintf("%s %s: %s", target.Kind, target.Path, result.Why)
			return exitRefused, nil
		}
		if result.Kind == lease.ForceMoved {
			moved = true
			if out.QuarantinePath == "" || target.Kind == lease.BlockerReceiver {
				out.QuarantinePath = result.QuarantinePath
			}
		}
	}
	if !moved {
		out.Result, out.Why = "nothing", "every entry was resolved meanwhile (see actions)"
		return exitConflict, nil
	}
	out.Result = "reclaimed"
	return exitOK, nil
}

// evidenceOf is the projection and, when receiver.lock exists, its entry's
// mode, device and inode, its owner.json bytes and the owner's liveness.
func evidenceOf(fsys lease.FS, namespace string, projection lease.Projection) (evidenceJSON, error) {
	evidence := evidenceJSON{Projection: projectionOf(namespace, projection)}
	receiver := filepath.Join(namespace, "receiver.lock")
	judged, err := fsys.Lstat(receiver)
	if missing(err) {
		return evidence, nil
	}
	if err != nil {
		return evidence, err
	}
	evidence.Mode, evidence.Dev, evidence.Ino = judged.Mode.String(), judged.Dev, judged.Ino
	if projection.Kind == lease.Owned {
		current, err := osenv.NewInspector().Current()
		if err == nil {
			evidence.OwnerState = lease.ClassifyRecord(projection.Owner.Identity(), current, osenv.NewInspector()).Kind.String()
		}
	}
	if judged.IsDir() {
		if data, err := readBounded(filepath.Join(receiver, "owner.json")); err == nil {
			evidence.OwnerBytes = string(data)
		}
	}
	return evidence, nil
}

// renameToFreshName is RenameNoReplace, or Rename where the filesystem
// lacks it (errors.ErrUnsupported, as on FUSE): target carries a fresh
// random ID, so nothing is there to replace.
func renameToFreshName(fsys lease.FS, from, target string) error {
	err := fsys.RenameNoReplace(from, target)
	if errors.Is(err, errors.ErrUnsupported) {
		return fsys.Rename(from, target)
	}
	return err
}

// reclaimNotDirectory is reclaim of a namespace path taken by a
// non-directory (a regular file...): the evidence (its mode, device,
// inode) first; with force, a rename, without replacing anything, to
// <namespace>.not-a-directory.<unix ms>.<id> beside it, the parent fsynced.
// The next run then makes the namespace. Nothing is deleted.
func reclaimNotDirectory(stdout io.Writer, namespace string, refusal lease.Refusal, judged lease.FileInfo, force bool) error {
	out := reclaimOutputJSON{Namespace: namespace, Evidence: evidenceJSON{
		Projection: refusedInspection(namespace, refusal),
		Mode:       judged.Mode.String(), Dev: judged.Dev, Ino: judged.Ino}}
	if !force {
		out.Result, out.Why = "dry-run", "rerun with --force to rename "+namespace+" aside"
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	fsys := osenv.NewFS()
	target := fmt.Sprintf("%s.not-a-directory.%d.%s", namespace, time.Now().UnixMilli(), osenv.NewIDSource().NewID())
	if err := renameToFreshName(fsys, namespace, target); err != nil {
		return err
	}
	if err := syncDir(fsys, filepath.Dir(namespace)); err != nil {
		return err
	}
	moved, err := fsys.Lstat(target)
	if err != nil {
		return err
	}
	if moved.Dev != judged.Dev || moved.Ino != judged.Ino {
		return fmt.Errorf("%s changed between the evidence and the move; %s holds the new entry (dev %d ino %d, judged %d/%d): inspect it",
			namespace, target, moved.Dev, moved.Ino, judged.Dev, judged.Ino)
	}
	out.Result, out.QuarantinePath = "reclaimed", target
	return printJSON(stdout, out)
}

func syncDir(fsys lease.FS, dir string) error {
	handle, err := fsys.OpenFile(dir, lease.O_RDONLY|lease.O_DIRECTORY|lease.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	return errors.Join(handle.Sync(), handle.Close())
}

func readBounded(name string) ([]byte, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return io.ReadAll(io.LimitReader(file, evidenceBytesMax))
}
