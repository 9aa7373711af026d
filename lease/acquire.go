package lease

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
)

// AcquireRequest names the session that wants the lease. Both fields are
// the original's vocabulary (piSessionId, piSessionFile) and both are optional:
// the owner record needs them, so an empty one is filled in (see Acquire).
type AcquireRequest struct {
	// SessionID is piSessionId; "" means the new owner's generation.
	SessionID string
	// SessionFile is piSessionFile: an absolute path (cleaned on write);
	// "" means the calling process's executable.
	SessionFile string
}

// RequestError says a call's arguments are invalid.
type RequestError struct{ Problem string }

func (e *RequestError) Error() string { return "lease: invalid request: " + e.Problem }

// validate refuses a request whose fields the owner record cannot carry as
// written (see checkText), before the call takes the guard or writes
// anything: the record's round-trip check would otherwise fail under the
// guard.
func (r AcquireRequest) validate() error {
	if problem := checkText("session id", r.SessionID, requestTextBytesMax); problem != "" {
		return &RequestError{problem}
	}
	if problem := checkText("session file", r.SessionFile, requestTextBytesMax); problem != "" {
		return &RequestError{problem}
	}
	if r.SessionFile != "" && !path.IsAbs(r.SessionFile) {
		return &RequestError{fmt.Sprintf("session file %s must be absolute", quotedPrefix(r.SessionFile))}
	}
	return nil
}

// Acquire takes the lease for the calling process, or reports who holds it.
// Under the lifecycle guard it reads receiver.lock: empty → a new owner with
// a fresh generation and the next epoch is published (Acquired); a live
// owner → Held; a stale owner → moved into quarantine (reported in
// Reclaimed with the reason) and the state re-read; a remote, unverifiable
// or corrupt owner → Refused, nothing changed. The whole call, every retry
// and reclaim included, is bounded by one GuardWait deadline on monotonic
// time and by attempt counters. The error is for unexpected I/O failures
// and ctx cancellation only.
//
// An empty req.SessionID is recorded as the new owner's generation and an
// empty req.SessionFile as the caller's executable path, so the record
// stays one the original reads. To wait for a held lease, use AcquireWait.
func (m *Manager) Acquire(ctx context.Context, req AcquireRequest) (AcquireResult, error) {
	if err := req.validate(); err != nil {
		return AcquireResult{}, err
	}
	if req.SessionFile != "" {
		req.SessionFile = fspath.Clean(req.SessionFile)
	}
	c, refusal, err := m.begin(ctx)
	if err != nil {
		return AcquireResult{}, err
	}
	if !refusal.IsZero() {
		return AcquireResult{Kind: Refused, Refusal: refusal}, nil
	}
	var result AcquireResult
	refusal, err = m.withGuard(c, func() error {
		var err error
		result, err = m.acquireHeld(c, req)
		return err
	})
	if !refusal.IsZero() {
		result = AcquireResult{Kind: Refused, Refusal: refusal}
	}
	if err != nil {
		return result, err
	}
	if result.Kind == 0 {
		panic("lease: acquire finished without a result")
	}
	return result, nil
}

// acquireHeld is Acquire's work under the guard.
func (m *Manager) acquireHeld(c *call, req AcquireRequest) (AcquireResult, error) {
	if err := m.cleanLeftovers(c); err != nil {
		return AcquireResult{}, err
	}
	result := AcquireResult{}
	var epochFloor uint64
	for step := 0; step < ownerStepsMax; step++ {
		projection, data, err := m.project(c.uid)
		if err != nil {
			return result, err
		}
		switch projection.Kind {
		case Corrupt:
			result.Kind, result.Refusal = Refused, Refusal{
				Reason: RefusalCorruptOwner, Diagnostic: projection.Diagnostic, Human: projection.Human}
			return result, nil
		case Empty:
			owner, refusal, created, err := m.createOwner(c, req, epochFloor)
			if err != nil {
				return result, err
			}
			if !refusal.IsZero() {
				result.Kind, result.Refusal = Refused, refusal
				return result, nil
			}
			if created {
				result.Kind, result.Owner = Acquired, owner
				return result, nil
			}
		case Owned:
			done, err := m.judgeOwner(c, projection.Owner, data, &result, &epochFloor)
			if err != nil || done {
				return result, err
			}
		}
	}
	result.Kind, result.Refusal = Refused, busy(fmt.Sprintf(
		"receiver.lock did not settle after %d inspect/reclaim rounds", ownerStepsMax))
	return result, nil
}

// judgeOwner classifies the current owner. done is false after a reclaim
// (or a lost race), when the caller must read the state again.
func (m *Manager) judgeOwner(c *call, owner Owner, data []byte, result *AcquireResult, epochFloor *uint64) (done bool, err error) {
	*epochFloor = max(*epochFloor, owner.Epoch)
	state := m.classify(owner.Identity(), owner.legacy(), c.current)
	switch state.Kind {
	case OwnerLive:
		result.Kind, result.Owner = Held, owner
		return true, nil
	case OwnerRemote:
		result.Kind, result.Refusal = Refused, Refusal{Reason: RefusalRemoteOwner,
			Diagnostic: remoteAdvice("receiver owner", m.ownerPath(), owner.Identity()), Human: HumanRemoteRecord}
		return true, nil
	case OwnerUnknown:
		result.Kind, result.Refusal = Refused, Refusal{Reason: RefusalUnverifiableOwner,
			Diagnostic: fmt.Sprintf("receiver owner %s: %s", m.ownerPath(), state.Reason),
			Human:      humanFor(state, owner.Identity(), owner.legacy(), c.current)}
		return true, nil
	case OwnerStale:
		// Refuse BEFORE the reclaim: an owner whose epoch leaves no next
		// epoch could be quarantined but never replaced.
		if owner.Epoch >= epochMax {
			result.Kind, result.Refusal = Refused, Refusal{Reason: RefusalCorruptEpoch, Human: HumanCorruptEpoch,
				Diagnostic: fmt.Sprintf("receiver owner %s has epoch %d, the largest an epoch may be: no later "+
					"epoch can exceed it; an operator must retire this namespace", m.ownerPath(), owner.Epoch)}
			return true, nil
		}
		reclaim, err := m.reclaimOwner(c, owner, data, state.Reason)
		if err != nil || reclaim == nil {
			return false, err
		}
		result.Reclaimed = append(result.Reclaimed, *reclaim)
		return false, nil
	}
	panic(fmt.Sprintf("lease: ClassifyRecord returned %v", state.Kind))
}

// reclaimOwner moves a stale receiver.lock into quarantine, after checking
// that owner.json still holds the bytes that were judged. nil means the
// state changed first.
func (m *Manager) reclaimOwner(c *call, owner Owner, data []byte, reason string) (*Reclaim, error) {
	projection, reread, err := m.project(c.uid)
	if err != nil || projection.Kind != Owned || string(reread) != string(data) {
		return nil, err
	}
	target := m.quarantineEntry("receiver", owner.Generation, "")
	if err := m.moveToQuarantine(m.receiverPath(), target); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("lease: moving the stale receiver.lock into quarantine: %w", err)
	}
	quarantined, err := statefile.ReadFile(m.fs, fspath.Join(target, ownerName), ownerBytesMax)
	if err == nil && string(quarantined) == string(data) {
		return &Reclaim{Owner: owner, QuarantinePath: target, Reason: reason}, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !isBadFile(err) {
		return nil, fmt.Errorf("lease: re-reading the quarantined owner: %w", err)
	}
	// A foreign writer (one that ignores the guard) swapped receiver.lock
	// or owner.json between the re-read and the rename: what moved is not
	// the owner judged stale. Give it back if the name is still free, and
	// judge again; if it is not free, the moved entry stays in quarantine
	// as evidence, and is not reported as a reclaim.
	if err := m.fs.RenameNoReplace(target, m.receiverPath()); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("lease: giving back a receiver.lock moved by mistake: %w", err)
	}
	if err := statefile.SyncDir(m.fs, m.quarantinePath()); err != nil {
		return nil, err
	}
	return nil, statefile.SyncDir(m.fs, m.namespace)
}

// createOwner publishes a new owner: the epoch files first (so the epoch is
// durable BEFORE any owner carries it), then owner.json in a private
// prepare directory, fsynced, renamed (no-replace) to receiver.lock, and the
// namespace fsynced. created is false when receiver.lock appeared meanwhile.
func (m *Manager) createOwner(c *call, req AcquireRequest, epochFloor uint64) (Owner, Refusal, bool, error) {
	epoch, refusal, err := m.nextEpoch(epochFloor, c.uid)
	if err != nil || !refusal.IsZero() {
		return Owner{}, refusal, false, err
	}
	current := c.current
	generation := m.ids.NewID()
	if req.SessionID == "" {
		req.SessionID = generation
	}
	if req.SessionFile == "" {
		req.SessionFile = fspath.Clean(current.Executable)
	}
	owner := Owner{
		Schema: OwnerSchema, Generation: generation, SessionID: req.SessionID, SessionFile: req.SessionFile,
		PID: current.PID, ProcessStartIdentity: current.StartTime, BootIdentity: current.BootID,
		Executable: fspath.Clean(current.Executable), ExecutableDev: current.ExecutableDev,
		ExecutableIno: current.ExecutableIno, PIDNamespace: current.PIDNamespace, Hostname: current.Hostname,
		RootID: m.rootID, CreatedAt: formatTimestamp(m.clock.Now()), Epoch: epoch, UID: current.UID,
	}
	data := m.encodeOwner(owner)
	if err := m.writeEpoch(epoch); err != nil {
		return Owner{}, Refusal{}, false, err
	}
	prepared, err := m.fs.MkdirTemp(m.namespace, preparePrefix)
	if err != nil {
		return Owner{}, Refusal{}, false, fmt.Errorf("lease: making the prepare directory: %w", err)
	}
	installed, err := m.install(prepared, data)
	if !installed {
		if _, removeErr := m.removeLeftoverDir(c, prepared, nil); removeErr != nil {
			err = statefile.JoinErrors(err, removeErr)
		}
	}
	if err != nil {
		return Owner{}, Refusal{}, false, err
	}
	return owner, Refusal{}, installed, nil
}

func (m *Manager) install(prepared string, data []byte) (bool, error) {
	// CreateOnly fsyncs owner.json's data before naming it and fsyncs the
	// prepare directory after: the whole directory is durable before it is
	// published, so no second fsync of it is needed here.
	if err := statefile.CreateOnly(m.fs, m.ids, fspath.Join(prepared, ownerName), ownerTempTag, data); err != nil {
		return false, fmt.Errorf("lease: writing owner.json: %w", err)
	}
	if err := m.renameNoReplace(prepared, m.receiverPath()); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("lease: publishing receiver.lock: %w", err)
	}
	return true, statefile.SyncDir(m.fs, m.namespace)
}

// epochMax is the largest epoch a record may carry (the JSON readers of
// other languages hold integers up to MaxInt64 exactly).
const epochMax = math.MaxInt64

// Temp tags of files only a guard holder writes.
const (
	epochTempTag = "epoch"
	ownerTempTag = "owner"
)

// nextEpoch returns max(epoch counter, issued mark, floor) + 1, refusing
// when either file is not valid: a guessed epoch could repeat an earlier
// one.
//
// An epoch file of another uid is invalid: that uid could lower it.
func (m *Manager) nextEpoch(floor uint64, uid uint32) (uint64, Refusal, error) {
	ev, err := m.readEpochEvidence(uid, 0)
	if err != nil {
		return 0, Refusal{}, err
	}
	if refusal := ev.refusal(); !refusal.IsZero() {
		return 0, refusal, nil
	}
	stored := ev.stored()
	// judgeOwner refuses an owner at epochMax before reclaiming it, so
	// the floor is below epochMax here.
	if floor >= epochMax {
		panic(fmt.Sprintf("lease: epoch floor %d reached createOwner", floor))
	}
	next := max(stored, floor) + 1
	if next <= stored || next <= floor || next > epochMax {
		panic("lease: epoch overflow")
	}
	return next, Refusal{}, nil
}

// isBadFile reports whether err is statefile's refusal of a file that is
// not a small regular file.
func isBadFile(err error) bool {
	return statefile.IsError[*statefile.NotRegularError](err) || statefile.IsError[*statefile.TooLargeError](err) ||
		statefile.IsError[*statefile.ChangedError](err) || statefile.IsError[*statefile.ForeignOwnerError](err)
}
