package lease

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/leasekit/leasekit/internal/statefile"
)

// projectAttemptsMax bounds re-reads when receiver.lock changes under a
// lock-free Inspect (a concurrent release or reclaim).
const projectAttemptsMax = 4

// Inspect reads the lease without the lifecycle guard and without judging
// liveness: Empty, Owned(owner) or Corrupt(diagnostic, human state), and
// every entry that blocks the namespace until an operator acts
// (Projection.Blockers: a corrupt guard, intent or epoch counter, a record
// of another host or PID namespace). It changes nothing on disk and does
// not create the namespace.
//
// Inspecting needs no caller identity. When Inspector.Current fails (an
// unreadable /proc/self, darwin's fail-closed inspector), files are held
// to the uid of CallerUID (if the Inspector is a CallerUIDReporter), else
// to the namespace directory's own uid; remote and foreign-namespace
// records are then not reported as blockers, since telling them apart
// needs the caller's hostname and PID namespace.
func (m *Manager) Inspect(ctx context.Context) (Projection, error) {
	if err := ctx.Err(); err != nil {
		return Projection{}, err
	}
	uid, current, err := m.inspectingUID()
	if err != nil {
		return Projection{}, err
	}
	refusal, err := m.checkDirectory(m.namespace, uid)
	if err != nil {
		return Projection{}, err
	}
	if !refusal.IsZero() {
		return Projection{}, refusal.Err()
	}
	projection, _, err := m.project(uid)
	if err != nil {
		return Projection{}, err
	}
	projection.Blockers, err = m.blockers(projection, uid, current)
	if err != nil {
		return Projection{}, err
	}
	return projection, m.syncWhatWasRead()
}

// CallerUIDReporter is an optional Inspector method set: the caller's real
// uid, known even where Current fails closed (darwin). Inspect uses it.
type CallerUIDReporter interface {
	CallerUID() (uint32, error)
}

// inspectingUID is the uid Inspect holds files to, and the caller's
// identity when it is readable (nil otherwise); see Inspect.
func (m *Manager) inspectingUID() (uint32, *ProcessIdentity, error) {
	current, err := m.currentIdentity()
	if err == nil {
		return uint32(current.UID), &current, nil
	}
	if reporter, ok := m.inspector.(CallerUIDReporter); ok {
		if uid, uidErr := reporter.CallerUID(); uidErr == nil {
			return uid, nil, nil
		}
	}
	info, statErr := m.fs.Lstat(m.namespace)
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return 0, nil, fmt.Errorf("lease: checking %s: %w", m.namespace, statErr)
	}
	// A missing namespace reads as Empty whatever the uid.
	return info.UID, nil, nil
}

// syncWhatWasRead fsyncs the namespace after Inspect has read it, before it
// reports. An acquirer that died (or lost power) after renaming its
// prepared directory to receiver.lock and before fsyncing the namespace
// leaves an owner a power loss can still undo; reporting it unsynced says
// something that may never have been true (the lease campaign's seed 11557
// at powerloss=0.02). Acquire and Release sync before they read, under the
// guard; Inspect takes no guard, so it syncs after reading: what it read is
// then durable, and any later change is a later event. A missing namespace
// has nothing to sync.
func (m *Manager) syncWhatWasRead() error {
	err := statefile.SyncDir(m.fs, m.namespace)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lease: syncing %s before reporting it: %w", m.namespace, err)
	}
	return nil
}

// project reads receiver.lock and its owner.json; data is the owner bytes.
// receiver.lock without owner.json is Corrupt only if the same directory is
// still there on a second look: a concurrent release renames it away
// between the two reads, which is Empty, not corrupt.
//
// receiver.lock or owner.json of another uid than uid is Corrupt
// (HumanForeignFile): it is never read as valid, nor reclaimed.
func (m *Manager) project(uid uint32) (Projection, []byte, error) {
	projection, data, _, err := m.projectWithInfo(uid)
	return projection, data, err
}

// projectWithInfo is project, also returning the Lstat of receiver.lock
// that the projection was read under (Release removes exactly that
// directory).
func (m *Manager) projectWithInfo(uid uint32) (Projection, []byte, FileInfo, error) {
	for attempt := 0; attempt < projectAttemptsMax; attempt++ {
		projection, data, receiver, stable, err := m.projectOnce(uid)
		if err != nil || stable {
			return projection, data, receiver, err
		}
	}
	return Projection{}, nil, FileInfo{}, fmt.Errorf("lease: %s kept changing during %d reads", m.receiverPath(), projectAttemptsMax)
}

func (m *Manager) projectOnce(uid uint32) (projection Projection, data []byte, receiver FileInfo, stable bool, err error) {
	projection, data, stable, err = m.projectReceiver(uid, &receiver)
	return projection, data, receiver, stable, err
}

func (m *Manager) projectReceiver(uid uint32, receiver *FileInfo) (projection Projection, data []byte, stable bool, err error) {
	before, err := m.fs.Lstat(m.receiverPath())
	*receiver = before
	if errors.Is(err, fs.ErrNotExist) {
		return Projection{Kind: Empty}, nil, true, nil
	}
	if err != nil {
		return Projection{}, nil, false, fmt.Errorf("lease: inspecting receiver.lock: %w", err)
	}
	if !before.IsDir() {
		return Projection{Kind: Corrupt, Human: HumanReceiverLockNotDirectory, Diagnostic: fmt.Sprintf(
			"%s is not a directory (mode %v); an operator must move it into quarantine/",
			m.receiverPath(), before.Mode)}, nil, true, nil
	}
	if before.UID != uid {
		return foreignFile(&statefile.ForeignOwnerError{Path: m.receiverPath(), UID: before.UID, Want: uid}), nil, true, nil
	}
	data, err = statefile.ReadOwnedFile(m.fs, m.ownerPath(), ownerBytesMax, uid)
	foreign, isForeign := errors.AsType[*statefile.ForeignOwnerError](err)
	switch {
	case err == nil:
	case isForeign:
		return foreignFile(foreign), nil, true, nil
	case errors.Is(err, fs.ErrNotExist):
		after, statErr := m.fs.Lstat(m.receiverPath())
		if statErr != nil || !statefile.SameInode(after, before) {
			return Projection{}, nil, false, nil
		}
		return Projection{Kind: Corrupt, Human: HumanEmptyReceiverLock, Diagnostic: fmt.Sprintf(
			"receiver.lock exists without a complete owner.json (%s); an operator must move it into quarantine/",
			m.receiverPath())}, nil, true, nil
	case isBadFile(err):
		if statefile.IsError[*statefile.ChangedError](err) {
			return Projection{}, nil, false, nil
		}
		return corruptOwner(err.Error()), nil, true, nil
	default:
		return Projection{}, nil, false, fmt.Errorf("lease: reading owner.json: %w", err)
	}
	owner, err := m.parseOwnerCached(data)
	if err != nil {
		return corruptOwner(fmt.Sprintf("%s: %v", m.ownerPath(), err)), data, true, nil
	}
	return Projection{Kind: Owned, Owner: owner}, data, true, nil
}

// foreignFile is the projection of a receiver.lock or owner.json of another uid.
func foreignFile(foreign *statefile.ForeignOwnerError) Projection {
	return Projection{Kind: Corrupt, Human: HumanForeignFile,
		Diagnostic: foreign.Error() + "; an operator must move receiver.lock into quarantine/"}
}

func corruptOwner(diagnostic string) Projection {
	return Projection{Kind: Corrupt, Human: HumanCorruptOwner,
		Diagnostic: "receiver owner is invalid: " + diagnostic + "; an operator must move receiver.lock into quarantine/"}
}
