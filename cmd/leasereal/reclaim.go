package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/leasecli"
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
	options := leasecli.ReclaimOptions{Confirmed: map[string]bool{}}
	flags.BoolVar(&options.Force, "force", false, "move every blocking entry into quarantine/ (without it: print the evidence only)")
	flags.Var(generationsFlag(options.Confirmed), "generation", "the generation of a valid record being reclaimed, as a confirmation (repeatable)")
	flags.Uint64Var(&options.EpochFloor, "epoch-floor", 0, "for a corrupt epoch counter or issued mark: the largest epoch known issued in this namespace "+
		"(at least the one inspect's provenEpoch names)")
	flags.BoolVar(&options.EpochUnproven, "epoch-floor-unproven", false,
		"for a corrupt epoch counter with no valid record of the highest epoch issued left: confirm that --epoch-floor is your own word")
	flags.BoolVar(&options.HolderMayRun, "holder-may-run", false,
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
			return reclaimNotDirectory(stdout, namespace, refusal, info, options.Force)
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
	outcome, err := leasecli.Reclaim(context.Background(), manager, projection, options)
	fillReclaim(&out, outcome)
	if err != nil {
		out.Result, out.Why = "error", err.Error()
		return errors.Join(printJSON(stdout, out), err)
	}
	return errors.Join(printJSON(stdout, out), codeOrNil(reclaimCode[outcome.Result]))
}

// reclaimCode is reclaim's exit code for each outcome.
var reclaimCode = map[leasecli.ReclaimResult]int{leasecli.ReclaimNothing: exitConflict, leasecli.ReclaimDryRun: exitRefused,
	leasecli.ReclaimRefused: exitRefused, leasecli.Reclaimed: exitOK}

// fillReclaim writes reclaim's outcome into its JSON: an action per target
// (pending until forced), the result and the quarantine path.
func fillReclaim(out *reclaimOutputJSON, outcome leasecli.ReclaimOutcome) {
	out.Result, out.Why, out.QuarantinePath = string(outcome.Result), outcome.Why, outcome.QuarantinePath
	for i, target := range outcome.Targets {
		action := actionJSON{Kind: string(target.Kind), Path: target.Path, Human: string(target.Human),
			Diagnostic: target.Diagnostic, Generation: target.Generation, Result: "pending"}
		if i < len(outcome.Forced) {
			result := outcome.Forced[i]
			action.Result, action.QuarantinePath, action.Why = result.Kind.String(), result.QuarantinePath, result.Why
			action.Evidence, action.Epoch = string(result.Evidence), result.Epoch
			action.ProvenEpoch, action.ProvenBy = result.ProvenEpoch, result.ProvenBy
		}
		out.Actions = append(out.Actions, action)
	}
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
