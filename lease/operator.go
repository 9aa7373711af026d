package lease

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
)

// The operator path. Every refusal whose Human state asks for an operator
// names an entry that the engine will not touch by itself: receiver.lock
// (corrupt, of another uid, a remote or uninspectable owner), the lifecycle
// guard, a reclaim intent, or the epoch counter. Inspect lists those
// entries (Projection.Blockers) and ForceReclaim resolves each one,
// moving the evidence into quarantine/ and never deleting anything.
//
// The one operator state with no library action is RefusalUnsafeNamespace:
// a symlinked, group- or world-writable or foreign-owned directory is fixed
// with chmod/chown (or by moving it away), which only the operator can
// judge.

// BlockerKind names the entry a Blocker is about.
type BlockerKind string

// The entries that can block a namespace.
const (
	// BlockerReceiver: receiver.lock (a corrupt or foreign entry, or an
	// owner on another host or in another PID namespace).
	BlockerReceiver BlockerKind = "receiver-lock"
	// BlockerGuard: receiver.lifecycle.guard.json.
	BlockerGuard BlockerKind = "lifecycle-guard"
	// BlockerIntent: one lifecycle-reclaims/reclaim.*.json.
	BlockerIntent BlockerKind = "reclaim-intent"
	// BlockerEpoch: receiver.epoch.json.
	BlockerEpoch BlockerKind = "epoch-counter"
)

// Blocker is an entry that makes Acquire, Release or WithCurrentLease
// refuse until an operator resolves it with ForceReclaim.
type Blocker struct {
	Kind BlockerKind
	// Path is the entry's absolute path.
	Path string
	// Human is the operator state (never HumanNone).
	Human      HumanState
	Diagnostic string
	// Generation is the record's generation when the entry is a valid
	// record (a remote owner or guard): ForceReclaim asks for it back as a
	// confirmation. "" for a corrupt entry.
	Generation string
	// ProvenEpoch and ProvenBy are for BlockerEpoch: the highest epoch the
	// namespace can still prove issued (0: none) and the file that proves
	// it (the issued mark receiver.epoch.issued.json, a valid counter, or
	// owner.json). ForceReclaim refuses an EpochFloor below ProvenEpoch.
	ProvenEpoch uint64
	ProvenBy    string
	// EpochUnproven is for BlockerEpoch: no valid epoch file is left, so
	// nothing here proves the highest epoch issued; ForceReclaim then asks
	// for ForceRequest.EpochUnprovenConfirmed.
	EpochUnproven bool
}

// ForceRequest names the entry ForceReclaim acts on.
type ForceRequest struct {
	Kind BlockerKind
	// Path is the intent file (Blocker.Path) for BlockerIntent; ignored
	// for the other kinds, whose path is fixed.
	Path string
	// Generation must equal the record's generation when the entry is a
	// valid owner, guard or intent: the operator confirms which record
	// they judged. It is ignored for a corrupt entry.
	Generation string
	// EpochFloor is for BlockerEpoch only: the largest epoch the operator
	// knows to have been issued in this namespace. It must be at least 1,
	// and at least what the namespace can still prove (Blocker.ProvenEpoch:
	// the issued mark receiver.epoch.issued.json, which release leaves in
	// place); a lower floor is refused (ForceRefused, ForceResult.ProvenEpoch).
	EpochFloor uint64
	// EpochUnprovenConfirmed is for BlockerEpoch only, and only matters
	// when no valid epoch file is left (Blocker.EpochUnproven): the floor
	// is then the operator's word alone (take it from the fenced
	// resources: the largest epoch they saw). Without it ForceReclaim
	// refuses.
	EpochUnprovenConfirmed bool
	// HolderMayRunConfirmed is for BlockerReceiver only, and only matters
	// when receiver.lock is corrupt (owner.json unreadable, invalid, of
	// another uid, or missing): nothing then says who holds the lease or
	// whether that process still runs, so moving it may hand the lease to a
	// second owner while the first still works under it. Without this
	// confirmation ForceReclaim refuses such a receiver.lock and says how
	// to check for a holder first (see UnidentifiedHolderAdvice).
	HolderMayRunConfirmed bool
}

// UnidentifiedHolderAdvice is what ForceReclaim says when it refuses a
// corrupt receiver.lock without ForceRequest.HolderMayRunConfirmed: the
// holder may still run, and how an operator finds out before confirming
// (callers add how to confirm in their own terms).
const UnidentifiedHolderAdvice = "the holder of this lease cannot be identified, and it may still be running: " +
	"a second owner would then work beside it. Before forcing, check that no process still uses the lease: " +
	"read the evidence (receiver.lock/owner.json) for a PID, host and executable; look for the program that " +
	"took the lease on every host that shares this directory (ps, pgrep, your service manager), " +
	"and stop it or wait for it to end"

// ForceKind is the outcome class of ForceReclaim.
type ForceKind int

const (
	// ForceMoved: the entry is now in quarantine/ (QuarantinePath); for
	// BlockerEpoch, the counter was rewritten (Epoch).
	ForceMoved ForceKind = iota + 1
	// ForceNothing: there was nothing to resolve (no entry, or a valid
	// one); Why says which. Nothing changed.
	ForceNothing
	// ForceRefused: the entry must not be moved (a live holder, a
	// generation that does not match, another blocker in the way); Why
	// (and Refusal, when the lifecycle refused) says why. Nothing changed.
	ForceRefused
)

func (k ForceKind) String() string {
	switch k {
	case ForceMoved:
		return "moved"
	case ForceNothing:
		return "nothing"
	case ForceRefused:
		return "refused"
	}
	return fmt.Sprintf("ForceKind(%d)", int(k))
}

// ForceResult is what ForceReclaim did.
type ForceResult struct {
	Kind ForceKind
	// QuarantinePath is where the entry now is (ForceMoved). For
	// BlockerEpoch it is "" when no corrupt entry had to be preserved.
	QuarantinePath string
	// Evidence is the record's bytes as judged (owner.json for
	// receiver.lock), when they could be read.
	Evidence []byte
	// Epoch is the value the epoch counter holds afterwards (BlockerEpoch,
	// ForceMoved): the next acquire issues Epoch+1.
	Epoch uint64
	// ProvenEpoch and ProvenBy are for BlockerEpoch: the highest epoch the
	// namespace could still prove issued, and the file proving it (see
	// Blocker.ProvenEpoch). A refused floor is below ProvenEpoch.
	ProvenEpoch uint64
	ProvenBy    string
	// Why says why, for ForceNothing and ForceRefused.
	Why string
	// Refusal is set when ForceRefused comes from the lifecycle guard
	// (another blocker, a busy guard, an unsafe namespace).
	Refusal Refusal
}

// ForceReclaim is the operator action for a blocked namespace: it moves
// the entry req names into quarantine/ (under a "<kind>.forced.*" name)
// and never deletes anything. It refuses (ForceRefused) an entry whose
// record is valid and whose process is live on this host, and a valid
// record whose generation is not req.Generation.
//
//   - BlockerReceiver runs under the lifecycle guard, like Acquire, so a
//     blocked guard or intent must be forced first (ForceRefused, with
//     their Refusal). A moved owner's epoch is kept: the epoch counter is
//     raised to it if lower.
//   - BlockerGuard and BlockerIntent run without the guard (they are what
//     blocks it). A valid stale one is left to the engine's own reclaim,
//     which announces an intent first (ForceNothing). The moved entry is
//     compared with the judged one (dev+ino and bytes); if a different
//     record had taken the name meanwhile, it is put back (ForceRefused).
//   - BlockerEpoch runs under the guard. A floor below the highest epoch
//     the namespace can still prove issued (the issued mark, a valid
//     counter, the current owner) is refused, as is a floor nothing proves
//     without EpochUnprovenConfirmed. A corrupt counter or issued mark is
//     preserved in quarantine/ (hard-linked, so the path never goes
//     missing) and both are then rewritten to max(EpochFloor, the current
//     owner's epoch), the mark first; a valid counter below that is raised
//     (ForceMoved, QuarantinePath "").
//
// The error is for unexpected I/O failures and ctx cancellation only.
func (m *Manager) ForceReclaim(ctx context.Context, req ForceRequest) (ForceResult, error) {
	if err := m.validateForce(req); err != nil {
		return ForceResult{}, err
	}
	c, refusal, err := m.begin(ctx)
	if err != nil {
		return ForceResult{}, err
	}
	if !refusal.IsZero() {
		return ForceResult{Kind: ForceRefused, Why: refusal.Diagnostic, Refusal: refusal}, nil
	}
	switch req.Kind {
	case BlockerGuard:
		return m.forceGuard(c, req.Generation)
	case BlockerIntent:
		return m.forceRecordFile(c, req.Path, "intent", "receiver lifecycle reclaim intent", req.Generation)
	}
	var result ForceResult
	refusal, err = m.withGuard(c, func() error {
		var err error
		if req.Kind == BlockerReceiver {
			result, err = m.forceReceiver(c, req.Generation, req.HolderMayRunConfirmed)
		} else {
			result, err = m.forceEpoch(c, req.EpochFloor, req.EpochUnprovenConfirmed)
		}
		return err
	})
	if !refusal.IsZero() {
		result = ForceResult{Kind: ForceRefused, Why: "the lifecycle guard refused: " + refusal.String(), Refusal: refusal}
	}
	return result, err
}

func (m *Manager) validateForce(req ForceRequest) error {
	if req.Generation != "" {
		if err := checkGeneration(req.Generation); err != nil {
			return err
		}
	}
	if problem := checkText("intent path", req.Path, requestTextBytesMax); problem != "" {
		return &RequestError{problem}
	}
	switch req.Kind {
	case BlockerReceiver, BlockerGuard:
	case BlockerIntent:
		name := path.Base(req.Path)
		if fspath.Clean(req.Path) != req.Path || fspath.Dir(req.Path) != m.reclaimsPath() ||
			!strings.HasPrefix(name, intentPrefix) || !strings.HasSuffix(name, intentSuffix) {
			return &RequestError{fmt.Sprintf("intent %s is not a %s/%s*%s file", quotedPrefix(req.Path),
				m.reclaimsPath(), intentPrefix, intentSuffix)}
		}
	case BlockerEpoch:
		if req.EpochFloor == 0 || req.EpochFloor >= epochMax {
			return &RequestError{fmt.Sprintf("epoch floor %d must be in 1..%d", req.EpochFloor, uint64(epochMax)-1)}
		}
	default:
		return &RequestError{fmt.Sprintf("unknown blocker kind %s", quotedPrefix(string(req.Kind)))}
	}
	return nil
}

// forcedEntry returns a fresh quarantine/ name for a forced move.
func (m *Manager) forcedEntry(kind, label, suffix string) string {
	if label == "" {
		label = "corrupt"
	}
	return m.quarantineEntry(kind+".forced", label, suffix)
}

// forceReceiver is ForceReclaim(BlockerReceiver) under the guard.
func (m *Manager) forceReceiver(c *call, generation string, holderMayRunConfirmed bool) (ForceResult, error) {
	projection, data, judged, err := m.projectWithInfo(c.uid)
	if err != nil {
		return ForceResult{}, err
	}
	label := ""
	switch projection.Kind {
	case Empty:
		return ForceResult{Kind: ForceNothing, Why: "there is no receiver.lock"}, nil
	case Owned:
		owner := projection.Owner
		if why := m.forceRefusal(owner.Generation, generation, owner.Identity(), owner.legacy(), c.current); why != "" {
			return ForceResult{Kind: ForceRefused, Why: why, Evidence: data}, nil
		}
		label = owner.Generation
	default:
		if why := corruptConfirmRefusal("receiver.lock", generation); why != "" {
			return ForceResult{Kind: ForceRefused, Why: why, Evidence: data}, nil
		}
		if !holderMayRunConfirmed {
			return ForceResult{Kind: ForceRefused, Evidence: data,
				Why: fmt.Sprintf("receiver.lock is corrupt (%s); %s; then force again with the confirmation that the holder may run "+
					"(ForceRequest.HolderMayRunConfirmed)", projection.Diagnostic, UnidentifiedHolderAdvice)}, nil
		}
	}
	target := m.forcedEntry("receiver", label, "")
	if err := m.moveToQuarantine(m.receiverPath(), target); err != nil {
		return ForceResult{}, fmt.Errorf("lease: moving receiver.lock into quarantine: %w", err)
	}
	same, err := m.movedIsJudged(target, fspath.Join(target, ownerName), judged, data, ownerBytesMax)
	if err != nil {
		return ForceResult{}, fmt.Errorf("lease: checking the quarantined receiver.lock: %w", err)
	}
	if !same {
		// Only a writer outside the protocol can swap receiver.lock under
		// the guard. What moved stays in quarantine as evidence.
		return ForceResult{Kind: ForceMoved, QuarantinePath: target, Why: fmt.Sprintf(
			"receiver.lock was swapped between the judgement and the move; %s holds the entry that moved, not the one judged",
			target)}, nil
	}
	if projection.Kind == Owned {
		if err := m.raiseEpoch(c, projection.Owner.Epoch); err != nil {
			return ForceResult{}, err
		}
	}
	return ForceResult{Kind: ForceMoved, QuarantinePath: target, Evidence: data}, nil
}

// movedIsJudged reports whether the entry now at target is the one judged:
// the same inode (judged: dev, ino and birth time) and, when the judged bytes were read (data not
// nil), the same bytes at record. An inode number alone is not enough: a
// file removed and another created in its place may reuse it.
func (m *Manager) movedIsJudged(target, record string, judged FileInfo, data []byte, maxBytes int64) (bool, error) {
	moved, err := m.fs.Lstat(target)
	if err != nil {
		return false, err
	}
	if !statefile.SameInode(moved, judged) {
		return false, nil
	}
	if data == nil {
		return true, nil
	}
	now, err := statefile.ReadFile(m.fs, record, maxBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isBadFile(err) {
			return false, nil
		}
		return false, err
	}
	return bytes.Equal(now, data), nil
}

// forceRefusal says why a valid record must not be forced, or "".
func (m *Manager) forceRefusal(recorded, confirmed string, rec ProcessIdentity, legacy bool, current ProcessIdentity) string {
	if confirmed != recorded {
		return fmt.Sprintf("the record has generation %s: pass it as the generation to confirm", recorded)
	}
	if state := m.classify(rec, legacy, current); state.Kind == OwnerLive {
		return fmt.Sprintf("its process (PID %d) is alive on this host; it is not stuck", rec.PID)
	}
	return ""
}

// corruptConfirmRefusal is why a corrupt entry is not moved under a
// confirmation that names a generation: the operator judged a valid record
// of that generation, and what is there now (garbage written since, by a
// co-tenant or a torn write) is not it. A confirmation binds to the state
// judged, as admission's and dirlease's content hashes do; a corrupt entry
// is confirmed with no generation, after inspecting it again.
func corruptConfirmRefusal(entry, generation string) string {
	if generation == "" {
		return ""
	}
	return fmt.Sprintf("%s is corrupt now (no generation), not the record of generation %s that was confirmed: inspect again, then force it with no generation", entry, generation)
}

// forceRecordFile is ForceReclaim for the guard or an intent: file is
// judged, moved into quarantine/ and the moved bytes compared with the
// judged ones.
func (m *Manager) forceRecordFile(c *call, file, kind, record, generation string) (ForceResult, error) {
	read, err := m.readGuardFile(file, record, c.uid)
	if err != nil {
		return ForceResult{}, err
	}
	if !read.present {
		return ForceResult{Kind: ForceNothing, Why: file + " does not exist"}, nil
	}
	label := ""
	if read.corrupt != "" {
		if why := corruptConfirmRefusal(file, generation); why != "" {
			return ForceResult{Kind: ForceRefused, Why: why, Evidence: read.data}, nil
		}
	}
	if read.corrupt == "" {
		if why := m.forceRefusal(read.guard.Generation, generation, read.guard.Identity, read.guard.legacy(), c.current); why != "" {
			return ForceResult{Kind: ForceRefused, Why: why, Evidence: read.data}, nil
		}
		// A stale record is the engine's to reclaim, under its own
		// protocol (an intent first): moving it here could race a
		// reclaimer that already replaced it with a live guard.
		state := m.classify(read.guard.Identity, read.guard.legacy(), c.current)
		if state.Kind == OwnerStale {
			return ForceResult{Kind: ForceNothing, Evidence: read.data, Why: fmt.Sprintf(
				"%s is stale (%s): the next call reclaims it by itself", file, state.Reason)}, nil
		}
		label = read.guard.Generation
	}
	judged, err := m.fs.Lstat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return ForceResult{Kind: ForceNothing, Why: file + " went away meanwhile"}, nil
	}
	if err != nil {
		return ForceResult{}, fmt.Errorf("lease: %s: %w", record, err)
	}
	target := m.forcedEntry(kind, label, ".json")
	if err := m.moveToQuarantine(file, target); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ForceResult{Kind: ForceNothing, Why: file + " went away meanwhile"}, nil
		}
		return ForceResult{}, fmt.Errorf("lease: moving the %s into quarantine: %w", record, err)
	}
	same, err := m.movedIsJudged(target, target, judged, read.data, guardBytesMax)
	if err != nil {
		return ForceResult{}, fmt.Errorf("lease: checking the quarantined %s: %w", record, err)
	}
	if same {
		return ForceResult{Kind: ForceMoved, QuarantinePath: target, Evidence: read.data}, nil
	}
	if moved, err := statefile.ReadFile(m.fs, target, guardBytesMax); (err == nil && m.unparsableGuard(moved, record)) || isNobodysEntry(err) {
		// Garbage written over the judged record in between, or an entry
		// that is no regular file of a sane size (a planted symlink), is
		// nobody's guard or intent: giving it back would block the
		// namespace again. It stays in quarantine/ as evidence (as in
		// quarantineGuard). An entry that could not be read (an I/O
		// error) may be a holder's new guard, and is given back.
		return ForceResult{Kind: ForceMoved, QuarantinePath: target, Evidence: moved, Why: fmt.Sprintf(
			"%s was replaced by an entry that is no record between the judgement and the move; %s holds it",
			file, target)}, nil
	}
	// Another record took the name between the judgement and the move (a
	// new guard holder). Give it back; if the name is taken again, it
	// stays in quarantine as evidence.
	if err := m.fs.RenameNoReplace(target, file); err != nil {
		return ForceResult{Kind: ForceRefused, QuarantinePath: target, Why: fmt.Sprintf(
			"%s changed between the judgement and the move, and could not be put back (%v); "+
				"the entry that moved is %s", file, err, target)}, nil
	}
	if err := statefile.SyncDir(m.fs, fspath.Dir(file)); err != nil {
		return ForceResult{}, err
	}
	if err := statefile.SyncDir(m.fs, m.quarantinePath()); err != nil {
		return ForceResult{}, err
	}
	return ForceResult{Kind: ForceRefused, Why: file + " changed between the judgement and the move; " +
		"the new entry was put back: inspect again"}, nil
}

// forceGuard is ForceReclaim(BlockerGuard). It announces a reclaim intent
// before it reads the guard it judges, as the engine's own reclaim does:
// a process that takes the guard after that read sees the intent in its
// post-scan and waits (or refuses) without running its operation, so a
// guard moved by mistake and put back never left a running holder without
// its guard. Without the intent, a holder that took the guard between the
// judgement and the move ran its fenced body while the guard was in
// quarantine, and a second process could take the guard meanwhile.
func (m *Manager) forceGuard(c *call, generation string) (ForceResult, error) {
	intentPath, err := m.announceIntent(c)
	if err != nil {
		return ForceResult{}, err
	}
	result, err := m.forceRecordFile(c, m.guardPath(), "lifecycle", "receiver lifecycle guard", generation)
	return result, statefile.JoinErrors(err, m.withdrawIntent(intentPath))
}

// isNobodysEntry reports whether a read failed because the entry is not a
// record any process wrote: not a regular file, or past the size bound
// (the engine writes neither).
func isNobodysEntry(err error) bool {
	return statefile.IsError[*statefile.NotRegularError](err) || statefile.IsError[*statefile.TooLargeError](err)
}

// unparsableGuard reports whether data is no guard or intent record.
func (m *Manager) unparsableGuard(data []byte, record string) bool {
	_, err := m.parseGuardCached(data, record)
	return err != nil
}

// forceEpoch is ForceReclaim(BlockerEpoch) under the guard. It refuses a
// floor below the highest epoch the namespace can still prove issued (the
// issued mark, a valid counter, the current owner), and a floor nothing
// proves unless the operator confirms it (unprovenConfirmed).
func (m *Manager) forceEpoch(c *call, floor uint64, unprovenConfirmed bool) (ForceResult, error) {
	projection, _, err := m.project(c.uid)
	if err != nil {
		return ForceResult{}, err
	}
	want := floor
	var ownerEpoch uint64
	if projection.Kind == Owned {
		ownerEpoch = projection.Owner.Epoch
		want = max(want, ownerEpoch)
	}
	ev, err := m.readEpochEvidence(c.uid, ownerEpoch)
	if err != nil {
		return ForceResult{}, err
	}
	proven := ForceResult{ProvenEpoch: ev.proven, ProvenBy: ev.provenBy}
	_, blocked := ev.blocked()
	if !blocked && ev.counter.valid && ev.counter.value >= want && (!ev.issued.present || ev.issued.value >= ev.counter.value) {
		proven.Kind, proven.Epoch, proven.Evidence = ForceNothing, ev.counter.value, ev.counter.data
		proven.Why = fmt.Sprintf("the epoch counter is valid and already holds %d", ev.counter.value)
		return proven, nil
	}
	if floor < ev.proven {
		proven.Kind, proven.Evidence = ForceRefused, ev.counter.data
		proven.Why = fmt.Sprintf("epoch floor %d is below epoch %d, which %s proves this namespace issued: "+
			"the next lease would get an epoch already issued; force again with an epoch floor of at least %d",
			floor, ev.proven, ev.provenBy, ev.proven)
		return proven, nil
	}
	if ev.unproven() && !unprovenConfirmed {
		proven.Kind, proven.Evidence = ForceRefused, ev.counter.data
		proven.Why = ev.advice() + " (ForceRequest.EpochUnprovenConfirmed)"
		return proven, nil
	}
	result := proven
	result.Kind, result.Epoch = ForceMoved, want
	if ev.counter.present {
		result.Evidence = ev.counter.data
	}
	for _, bad := range []epochFile{ev.issued, ev.counter} {
		if !bad.corrupt() {
			continue
		}
		kind := "epoch"
		if bad.path == ev.issued.path {
			kind = "epoch-issued"
		}
		target := m.forcedEntry(kind, "", ".json")
		if err := m.preserveEpoch(bad.path, target); err != nil {
			return ForceResult{}, err
		}
		if bad.path == ev.counter.path || result.QuarantinePath == "" {
			result.QuarantinePath = target
		}
	}
	return result, m.writeEpoch(want)
}

// preserveEpoch keeps a corrupt epoch file at target: a hard link for a
// regular file, so that the path never goes missing (a crash before the
// rewrite leaves the corrupt file, which still refuses), and a rename for
// anything else (a crash before the rewrite then leaves no file there:
// rerunning ForceReclaim writes it).
func (m *Manager) preserveEpoch(file, target string) error {
	info, err := m.fs.Lstat(file)
	if err != nil {
		return fmt.Errorf("lease: the corrupt epoch file %s: %w", file, err)
	}
	if info.IsRegular() {
		if err := m.fs.Link(file, target); err != nil {
			return fmt.Errorf("lease: preserving the corrupt epoch file %s: %w", file, err)
		}
		return statefile.SyncDir(m.fs, m.quarantinePath())
	}
	if err := m.moveToQuarantine(file, target); err != nil {
		return fmt.Errorf("lease: moving the corrupt epoch file %s into quarantine: %w", file, err)
	}
	return nil
}

// raiseEpoch makes valid or missing epoch files hold at least epoch, so
// that an owner moved into quarantine by hand still bounds every later
// epoch: the issued mark first. A corrupt file is left alone: it keeps
// refusing, and is its own blocker.
func (m *Manager) raiseEpoch(c *call, epoch uint64) error {
	if epoch == 0 {
		return nil
	}
	ev, err := m.readEpochEvidence(c.uid, 0)
	if err != nil {
		return err
	}
	for _, f := range []epochFile{ev.issued, ev.counter} {
		if f.corrupt() || (f.valid && f.value >= epoch) {
			continue
		}
		if err := statefile.ReplaceAtomic(m.fs, m.ids, f.path, epochTempTag, encodeEpoch(epoch)); err != nil {
			return fmt.Errorf("lease: raising %s: %w", f.path, err)
		}
	}
	return nil
}

// blockers lists the entries that need an operator, as Inspect reports
// them. current is nil when the caller's identity is unavailable: remote
// and foreign-namespace records are then not told apart from local ones.
func (m *Manager) blockers(projection Projection, uid uint32, current *ProcessIdentity) ([]Blocker, error) {
	var found []Blocker
	switch projection.Kind {
	case Corrupt:
		found = append(found, Blocker{Kind: BlockerReceiver, Path: m.receiverPath(), Human: projection.Human,
			Diagnostic: projection.Diagnostic})
	case Owned:
		owner := projection.Owner
		if blocker, ok := unreachableRecord(BlockerReceiver, m.ownerPath(), "receiver owner", owner.Generation,
			owner.Identity(), owner.legacy(), current); ok {
			blocker.Path = m.receiverPath()
			found = append(found, blocker)
		}
	}
	guard, err := m.recordBlocker(BlockerGuard, m.guardPath(), "receiver lifecycle guard", HumanCorruptGuard, uid, current)
	if err != nil {
		return nil, err
	}
	found = append(found, guard...)
	intents, err := m.intentBlockers(uid, current)
	if err != nil {
		return nil, err
	}
	found = append(found, intents...)
	var ownerEpoch uint64
	if projection.Kind == Owned {
		ownerEpoch = projection.Owner.Epoch
	}
	epoch, err := m.epochBlocker(uid, ownerEpoch)
	if err != nil {
		return nil, err
	}
	return append(found, epoch...), nil
}

func (m *Manager) intentBlockers(uid uint32, current *ProcessIdentity) ([]Blocker, error) {
	entries, err := m.fs.ReadDir(m.reclaimsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lease: listing lifecycle reclaim intents: %w", err)
	}
	var found []Blocker
	for _, entry := range entries {
		if !strings.HasPrefix(entry.Name, intentPrefix) || !strings.HasSuffix(entry.Name, intentSuffix) {
			continue
		}
		blocker, err := m.recordBlocker(BlockerIntent, fspath.Join(m.reclaimsPath(), entry.Name),
			"receiver lifecycle reclaim intent", HumanCorruptIntent, uid, current)
		if err != nil {
			return nil, err
		}
		found = append(found, blocker...)
	}
	return found, nil
}

// recordBlocker reads a guard or intent file: corrupt, remote or in
// another PID namespace is a blocker.
func (m *Manager) recordBlocker(kind BlockerKind, file, record string, corrupt HumanState, uid uint32, current *ProcessIdentity) ([]Blocker, error) {
	read, err := m.readGuardFile(file, record, uid)
	if err != nil || !read.present {
		return nil, err
	}
	if read.corrupt != "" {
		return []Blocker{{Kind: kind, Path: file, Human: corrupt, Diagnostic: record + " is corrupt: " + read.corrupt +
			"; an operator must move it into quarantine/"}}, nil
	}
	if blocker, ok := unreachableRecord(kind, file, record, read.guard.Generation, read.guard.Identity, read.guard.legacy(), current); ok {
		return []Blocker{blocker}, nil
	}
	return nil, nil
}

// unreachableRecord is the blocker for a record this host can never judge
// (ClassifyRecord's rules 1 and 2: another host, another PID namespace).
func unreachableRecord(kind BlockerKind, file, record, generation string, rec ProcessIdentity, legacy bool, current *ProcessIdentity) (Blocker, bool) {
	if current == nil {
		return Blocker{}, false
	}
	blocker := Blocker{Kind: kind, Path: file, Generation: generation}
	switch {
	case rec.Hostname != current.Hostname:
		blocker.Human, blocker.Diagnostic = HumanRemoteRecord, remoteAdvice(record, file, rec)
	case !legacy && rec.PIDNamespace != current.PIDNamespace:
		blocker.Human, blocker.Diagnostic = HumanForeignNamespace, fmt.Sprintf(
			"%s %s names PID %d in PID namespace %q, this process is in %q; it cannot be inspected from here. "+
				"If that process is gone, an operator must move %s into quarantine/",
			record, file, rec.PID, rec.PIDNamespace, current.PIDNamespace, file)
	default:
		return Blocker{}, false
	}
	return blocker, true
}

// epochBlocker is the blocker of a corrupt epoch counter or issued mark
// (one blocker: both are forced together), with the evidence of the
// highest epoch issued; ownerEpoch is the current owner's (0: none).
func (m *Manager) epochBlocker(uid uint32, ownerEpoch uint64) ([]Blocker, error) {
	ev, err := m.readEpochEvidence(uid, ownerEpoch)
	if err != nil {
		return nil, err
	}
	blocker := Blocker{Kind: BlockerEpoch, Human: HumanCorruptEpoch, ProvenEpoch: ev.proven, ProvenBy: ev.provenBy,
		EpochUnproven: ev.unproven()}
	bad, blocked := ev.blocked()
	switch {
	case blocked && bad.changed:
		return nil, nil // replaced while read: a writer under the guard
	case blocked:
		blocker.Path = bad.path
		blocker.Diagnostic = fmt.Sprintf("%s %s is invalid (%s); %s", epochFileName(bad, ev), bad.path, bad.problem, ev.advice())
	case ev.stored() >= epochMax:
		blocker.Path = ev.counter.path
		blocker.Diagnostic = fmt.Sprintf("epoch counter %s holds epoch %d, the largest an epoch may be; an operator "+
			"must retire this namespace", ev.counter.path, ev.stored())
	default:
		return nil, nil
	}
	return []Blocker{blocker}, nil
}
