// Package admission is the export admission engine: a single slot
// (StateHome/recovery/beeper-message-like-me-export-admission/active.json)
// that at most one export holds, with a phased helper lifecycle. Every write
// is a compare-and-swap on the SHA-256 of the file's canonical bytes and
// rotates a revision UUID, so the bytes never repeat and a stale controller
// can never win an ABA compare. It is a Go port of the export admission
// half of beeper-message-like-me-recovery.ts, one of the original
// implementations, whose on-disk formats the engines read; see
// docs/FORMAT-admission-dirlease.md.
package admission

import (
	"context"
	"errors"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/seederr"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// RootDir is the admission directory under StateHome.
var RootDir = []string{"recovery", "beeper-message-like-me-export-admission"}

// Config is everything the engine touches outside its memory: StateHome
// (an existing absolute directory of this user, not group- or
// world-writable), FS, Clock, Inspector and IDs, and MessagePrefix, the
// product wording refusals start with ("" is statecas.DefaultMessagePrefix,
// "leasekit recovery"; statecas.SeedMessagePrefix is the original's). It is
// statecas.Config, the same type as dirlease.Config; admission does not use
// its BootClock.
type Config = statecas.Config

// Message prefixes for Config.MessagePrefix: the default is neutral; the
// original implementations used SeedMessagePrefix.
const (
	DefaultMessagePrefix = statecas.DefaultMessagePrefix
	SeedMessagePrefix    = statecas.SeedMessagePrefix
)

// label gives every refusal in err the configured message prefix.
func label(config Config, err error) error { return seederr.Label[Kind](err, config.Prefix()) }

// Admission is a held export admission: the handle of the controller that
// acquired it. It is not safe for concurrent use.
type Admission struct {
	config Config
	// uid is the acquirer's uid: the admission file must stay its.
	uid      uint32
	path     string
	claim    Claim
	sha      string
	released bool
}

// Path is the admission file.
func (a *Admission) Path() string { return a.path }

// Claim is the record this handle last wrote.
func (a *Admission) Claim() Claim { return a.claim }

// ContentSHA256 is the SHA-256 of the bytes this handle last wrote: its
// compare-and-swap token.
func (a *Admission) ContentSHA256() string { return a.sha }

// Released reports whether Release succeeded.
func (a *Admission) Released() bool { return a.released }

type snapshot struct {
	claim Claim
	sha   string
}

func readAdmission(config Config, uid uint32, file string) (*snapshot, error) {
	content, present, err := statecas.ReadIfPresent(config.Env(uid), file, RecordBytesMax)
	if err != nil {
		if statecas.KindOf(err) == statecas.ErrBound {
			return nil, fail(ErrCorrupt, file, "export admission exceeds its size bound", err)
		}
		return nil, err
	}
	if !present {
		return nil, nil
	}
	claim, err := Parse(content, file)
	if err != nil {
		return nil, err
	}
	return &snapshot{claim: claim, sha: statefile.SHA256Hex(content)}, nil
}

// Inspect reads the admission file, if any, and says what it would mean for
// Acquire, without changing anything. A file that is not a valid record is
// an ErrCorrupt refusal; InspectState reports it as a state instead.
func Inspect(ctx context.Context, config Config) (claim *Claim, disposition Disposition, err error) {
	defer func() { err = label(config, err) }()
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	current, err := currentIdentity(config)
	if err != nil {
		return nil, "", err
	}
	uid := uint32(current.UID)
	if complete, err := checkInspectable(config, uid); err != nil || !complete {
		return nil, "", err
	}
	observed, err := readAdmission(config, uid, admissionFile(config))
	if err != nil || observed == nil {
		return nil, "", err
	}
	return &observed.claim, dispose(observed.claim, statusFunc(config, current), statecas.BootDigest(current.BootID)), nil
}

// checkInspectable checks the state home and the admission directories as
// Acquire does (statecas.CheckPrivateDirs: no create, no sync), so that an
// inspection of a home Acquire refuses (missing, group-writable, a
// symlink, a part not 0700) is that same ErrUnsafe refusal, never "no
// admission" and never a reading of a record no call can then act on.
// complete is false when a directory is not made yet: no admission.
func checkInspectable(config Config, uid uint32) (complete bool, err error) {
	complete, err = statecas.CheckPrivateDirs(config.Env(uid), uid, config.StateHome, RootDir...)
	if err != nil {
		return false, wrapUnexpected(err, config.StateHome, "export admission cannot be inspected safely")
	}
	return complete, nil
}

// admissionFile is the admission file's path.
func admissionFile(config Config) string {
	return fspath.Join(append([]string{config.StateHome}, append(RootDir, FileName)...)...)
}

func currentIdentity(config Config) (lease.ProcessIdentity, error) {
	current, err := config.Inspector.Current()
	if err == nil {
		err = current.Validate()
	}
	if err != nil {
		return lease.ProcessIdentity{}, fail(ErrUnsafe, "", "current process identity is unavailable", err)
	}
	return current, nil
}

func statusFunc(config Config, current lease.ProcessIdentity) func(statecas.Owner) statecas.Status {
	return func(owner statecas.Owner) statecas.Status {
		return statecas.OwnerStatus(owner, current, config.Inspector).Status
	}
}

// Acquire takes the export admission, in at most AcquireAttemptsMax
// attempts. A prior admission is judged by the original's disposition rules:
// active refuses with ErrActive, indeterminate with ErrIndeterminate, and
// recoverable is removed (compare-and-swap) before a fresh schema-3 record
// is created. Contention (a concurrent mutation, a record that changed
// under the compare) retries; running out of attempts is ErrContention.
//
// ctx is honoured before each attempt: a cancelled Acquire returns
// ctx.Err() having created nothing (an attempt, once begun, completes).
func Acquire(ctx context.Context, config Config) (admission *Admission, err error) {
	defer func() { err = label(config, err) }()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	current, err := currentIdentity(config)
	if err != nil {
		return nil, err
	}
	root, err := statecas.EnsurePrivateDir(config.Env(uint32(current.UID)), uint32(current.UID), config.StateHome, RootDir...)
	if err != nil {
		return nil, wrapUnexpected(err, config.StateHome, "export admission could not be acquired safely")
	}
	file := fspath.Join(root, FileName)
	for attempt := 0; attempt < AcquireAttemptsMax; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		admission, retry, err := acquireOnce(config, current, file)
		if err != nil {
			return nil, wrapUnexpected(err, file, "export admission could not be acquired safely")
		}
		if !retry {
			return admission, nil
		}
	}
	return nil, fail(ErrContention, file, "export admission could not be acquired after bounded contention", nil)
}

// acquireOnce is one attempt of Acquire; retry reports contention.
func acquireOnce(config Config, current lease.ProcessIdentity, file string) (admission *Admission, retry bool, err error) {
	observed, err := readAdmission(config, uint32(current.UID), file)
	if err != nil {
		return nil, false, err
	}
	if observed != nil {
		switch dispose(observed.claim, statusFunc(config, current), statecas.BootDigest(current.BootID)) {
		case DispositionActive:
			return nil, false, fail(ErrActive, file, "another export is active", nil)
		case DispositionIndeterminate:
			return nil, false, fail(ErrIndeterminate, file, "prior export owner cannot be inspected safely", nil)
		}
		removed, err := statecas.RemoveIfUnchanged(config.Env(uint32(current.UID)), file, observed.sha)
		if errors.Is(err, statecas.ErrMutationActive) || (err == nil && !removed) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
	claim := Claim{
		SchemaVersion: SchemaVersion,
		ID:            config.IDs.NewID(),
		Owner:         statecas.OwnerOf(current),
		Phase:         PhaseParentOwned,
		Revision:      config.IDs.NewID(),
	}
	mine := &snapshot{claim: claim, sha: statefile.SHA256Hex(claim.Bytes())}
	created, createErr := statecas.CreateIfAbsent(config.Env(uint32(current.UID)), file, claim.Bytes())
	if createErr != nil {
		// The record may be durable even though a later step (the claim
		// release, a directory fsync) failed: if it is ours, we hold it.
		if committed, err := readAdmission(config, uint32(current.UID), file); err == nil && committed != nil && committed.sha == mine.sha {
			return acquired(config, uint32(current.UID), file, mine)
		}
		if !errors.Is(createErr, statecas.ErrMutationActive) {
			return nil, false, createErr
		}
		return nil, true, nil
	}
	if !created {
		return nil, true, nil
	}
	return acquired(config, uint32(current.UID), file, mine)
}

func acquired(config Config, uid uint32, file string, mine *snapshot) (*Admission, bool, error) {
	if !mine.claim.Current() || mine.claim.Revision == "" {
		return nil, false, fail(ErrLegacy, file, "a legacy export admission cannot be acquired as current ownership", nil)
	}
	return &Admission{config: config, uid: uid, path: file, claim: mine.claim, sha: mine.sha}, false, nil
}

// The lifecycle calls and Release check ctx before they start and return
// ctx.Err() without writing; a write, once begun, completes, so a
// cancellation never leaves a half-made record.

// BeginHelperLaunch moves parent-owned → helper-launching.
func (a *Admission) BeginHelperLaunch(ctx context.Context) error {
	return a.update(ctx, PhaseHelperLaunching, nil)
}

// BindHelper moves helper-launching → helper-active, recording the full
// identity of the helper process pid (which must be live). A helper that
// already exited cannot be bound (ErrHelperIdentity); its parent settles
// instead (helper-launching → parent-owned).
func (a *Admission) BindHelper(ctx context.Context, pid int) error {
	if pid < 1 || pid > statecas.PIDMax {
		return label(a.config, fail(ErrHelperIdentity, a.path, "export admission helper PID is invalid", nil))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	helper, err := statecas.Capture(a.config.Inspector, pid)
	if err != nil {
		return label(a.config, fail(ErrHelperIdentity, a.path, "export admission helper identity cannot be captured", err))
	}
	return a.update(ctx, PhaseHelperActive, &helper)
}

// Settle moves helper-launching or helper-active back to parent-owned.
func (a *Admission) Settle(ctx context.Context) error {
	return a.update(ctx, PhaseParentOwned, nil)
}

// MarkCleanupUnsafe records that the helper's cleanup is not proven: only a
// reboot, or an operator (Quarantine), will make the admission recoverable
// by another process.
func (a *Admission) MarkCleanupUnsafe(ctx context.Context) error {
	return a.update(ctx, PhaseCleanupUnsafe, a.claim.HelperOwner)
}

// Transition reports whether the original's table allows moving from phase
// current to next with the given helper (present or not):
//
//	parent-owned     → helper-launching (no helper)
//	helper-launching → helper-active    (helper)
//	helper-launching, helper-active → parent-owned (no helper)
//	any but parent-owned → cleanup-unsafe (no helper, or from helper-active)
func Transition(current, next Phase, helper bool) bool {
	switch next {
	case PhaseHelperLaunching:
		return current == PhaseParentOwned && !helper
	case PhaseHelperActive:
		return current == PhaseHelperLaunching && helper
	case PhaseParentOwned:
		return (current == PhaseHelperLaunching || current == PhaseHelperActive) && !helper
	case PhaseCleanupUnsafe:
		return current != PhaseParentOwned && (!helper || current == PhaseHelperActive)
	}
	return false
}

func (a *Admission) update(ctx context.Context, phase Phase, helper *statecas.Owner) (err error) {
	defer func() { err = label(a.config, err) }()
	if err := ctx.Err(); err != nil {
		return err
	}
	if a.released {
		return fail(ErrReleased, a.path, "released export admission cannot change lifecycle", nil)
	}
	if !Transition(a.claim.Phase, phase, helper != nil) {
		return fail(ErrInvalidTransition, a.path, "export admission lifecycle transition is invalid", nil)
	}
	next := a.claim
	next.Phase = phase
	next.HelperOwner = helper
	next.Revision = a.config.IDs.NewID()
	if next.Revision == a.claim.Revision {
		panic("admission: IDSource repeated a revision")
	}
	data := next.Bytes()
	written, err := statecas.WriteIfUnchanged(a.config.Env(a.uid), a.path, data, a.sha)
	if err != nil {
		return wrapUnexpected(err, a.path, "export admission lifecycle could not be updated safely")
	}
	if !written {
		return fail(ErrChanged, a.path, "export admission changed before lifecycle update", nil)
	}
	a.claim = next
	a.sha = statefile.SHA256Hex(data)
	return nil
}

// Release removes the admission (compare-and-swap). Only a parent-owned
// admission with no helper can be released; releasing twice is a no-op.
func (a *Admission) Release(ctx context.Context) (err error) {
	if a.released {
		return nil
	}
	defer func() { err = label(a.config, err) }()
	if err := ctx.Err(); err != nil {
		return err
	}
	if a.claim.Phase != PhaseParentOwned || a.claim.HelperOwner != nil {
		return fail(ErrInvalidTransition, a.path, "export admission cannot release an unsettled helper lifecycle", nil)
	}
	removed, err := statecas.RemoveIfUnchanged(a.config.Env(a.uid), a.path, a.sha)
	if err != nil {
		return wrapUnexpected(err, a.path, "export admission could not be released safely")
	}
	if !removed {
		return fail(ErrChanged, a.path, "export admission changed before release", nil)
	}
	a.released = true
	return nil
}
