package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
)

// The operator action of ARCHITECTURE.md: a forced reclaim, into
// quarantine, of a lease the engine refuses to touch (a corrupt owner, an
// empty receiver.lock, a remote or unverifiable owner). It prints the
// evidence first, never deletes anything, and refuses an owner that is
// provably alive on this host.

// evidenceBytesMax bounds the owner.json bytes printed as evidence.
const evidenceBytesMax = 64 << 10

type evidenceJSON struct {
	Projection inspectJSON `json:"projection"`
	// OwnerBytes is owner.json as found (bounded), when readable.
	OwnerBytes string `json:"ownerBytes,omitempty"`
	// Mode, Dev and Ino identify the receiver.lock entry that was judged.
	Mode string `json:"mode"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
	// OwnerState is the liveness verdict for an owned record.
	OwnerState string `json:"ownerState,omitempty"`
}

type reclaimOutputJSON struct {
	Result         string       `json:"result"` // reclaimed | dry-run | nothing | refused
	Namespace      string       `json:"namespace"`
	Evidence       evidenceJSON `json:"evidence"`
	QuarantinePath string       `json:"quarantinePath,omitempty"`
	Why            string       `json:"why,omitempty"`
}

func cmdReclaim(args []string, stdout io.Writer) error {
	flags := newFlagSet("reclaim")
	var common leaseFlags
	common.register(flags)
	force := flags.Bool("force", false, "move receiver.lock into quarantine/ (without it: print the evidence only)")
	generation := flags.String("generation", "", "for an owned lease: the generation being reclaimed, as a confirmation")
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
			return reclaimNotDirectory(stdout, namespace, refusal, info, *force)
		}
	}
	out := reclaimOutputJSON{Namespace: namespace}
	projection, refusal, err := inspectNamespace(manager, refusal)
	if err != nil {
		return err
	}
	if !refusal.IsZero() {
		out.Result, out.Why = "refused", refusal.String()
		out.Evidence.Projection = refusedInspection(namespace, refusal)
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	if projection.Kind == lease.Empty {
		out.Result, out.Why = "nothing", "no receiver.lock"
		return errors.Join(printJSON(stdout, out), &codeError{code: exitConflict})
	}
	fsys := osenv.NewFS()
	receiver := filepath.Join(namespace, "receiver.lock")
	judged, err := fsys.Lstat(receiver)
	if err != nil {
		return err
	}
	out.Evidence = evidenceOf(fsys, namespace, projection, judged)
	if refusal := reclaimRefusal(projection, *generation); refusal != "" {
		out.Result, out.Why = "refused", refusal
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	if !*force {
		out.Result, out.Why = "dry-run", "rerun with --force to move receiver.lock into quarantine/"
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	target, err := forceQuarantine(fsys, namespace, judged, projection)
	if err != nil {
		return err
	}
	out.Result, out.QuarantinePath = "reclaimed", target
	return printJSON(stdout, out)
}

func evidenceOf(fsys lease.FS, namespace string, projection lease.Projection, judged lease.FileInfo) evidenceJSON {
	receiver := filepath.Join(namespace, "receiver.lock")
	evidence := evidenceJSON{Projection: projectionOf(namespace, projection),
		Mode: judged.Mode.String(), Dev: judged.Dev, Ino: judged.Ino}
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
	return evidence
}

// reclaimRefusal says why a forced reclaim must not proceed, or "".
func reclaimRefusal(projection lease.Projection, generation string) string {
	if projection.Kind != lease.Owned {
		return ""
	}
	if generation != projection.Owner.Generation {
		return fmt.Sprintf("receiver.lock is owned by generation %s: pass --generation %s to confirm",
			projection.Owner.Generation, projection.Owner.Generation)
	}
	current, err := osenv.NewInspector().Current()
	if err != nil {
		return "this process's identity is unavailable: " + err.Error()
	}
	state := lease.ClassifyRecord(projection.Owner.Identity(), current, osenv.NewInspector())
	if state.Kind == lease.OwnerLive {
		return fmt.Sprintf("the owner (pid %d) is alive on this host; release it instead", projection.Owner.PID)
	}
	return ""
}

// forceQuarantine renames receiver.lock (no-replace) to a fresh name in
// quarantine/ and fsyncs both directories; it then checks that what moved
// is the entry that was judged, and says so if not (nothing is deleted
// either way).
func forceQuarantine(fsys lease.FS, namespace string, judged lease.FileInfo, projection lease.Projection) (string, error) {
	quarantine := filepath.Join(namespace, "quarantine")
	label := "corrupt"
	if projection.Kind == lease.Owned {
		label = projection.Owner.Generation
	}
	if err := fsys.Mkdir(quarantine, 0o700); err == nil {
		if err := syncDir(fsys, namespace); err != nil {
			return "", err
		}
	} else if !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if info, err := fsys.Lstat(quarantine); err != nil || !info.IsDir() || info.IsSymlink() {
		return "", fmt.Errorf("%s is not a plain directory (%v); move it away first", quarantine, err)
	}
	target := filepath.Join(quarantine, fmt.Sprintf("receiver.forced.%s.%d.%s", label,
		time.Now().UnixMilli(), osenv.NewIDSource().NewID()))
	if err := renameToFreshName(fsys, filepath.Join(namespace, "receiver.lock"), target); err != nil {
		return "", err
	}
	for _, dir := range []string{namespace, quarantine} {
		if err := syncDir(fsys, dir); err != nil {
			return target, err
		}
	}
	moved, err := fsys.Lstat(target)
	if err != nil {
		return target, err
	}
	if moved.Dev != judged.Dev || moved.Ino != judged.Ino {
		return target, fmt.Errorf("receiver.lock changed between the evidence and the move; %s holds the new entry (dev %d ino %d, judged %d/%d): inspect it",
			target, moved.Dev, moved.Ino, judged.Dev, judged.Ino)
	}
	return target, nil
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
