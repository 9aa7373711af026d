// Package dirlease is the directory lease engine: leases on private working
// directories (raw-working, bundle-stage), recorded one claim file per lease
// under StateHome/recovery/beeper-message-like-me-directory-leases, and
// recovery of the directories whose owners are gone. Removal is bound to the
// directory's physical identity (dev+ino+birth time) and never follows a
// symlink; recovery fails closed. It is a Go port of the directory lease
// half of beeper-message-like-me-recovery.ts, one of the original
// implementations, whose on-disk formats the engines read; see
// docs/FORMAT-admission-dirlease.md.
package dirlease

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/seederr"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// RootDir is the claim directory under StateHome.
var RootDir = []string{"recovery", "beeper-message-like-me-directory-leases"}

// Config is everything the engine touches outside its memory: StateHome
// (an existing absolute directory of this user, not group- or
// world-writable), FS, Clock, Inspector and IDs; BootClock, on which the
// launching window is measured (without one, a launching lease of a dead
// owner waits for a provable reboot or an operator); and MessagePrefix,
// the product wording refusals start with ("" is
// statecas.DefaultMessagePrefix). It is statecas.Config, the same type as
// admission.Config.
type Config = statecas.Config

// Message prefixes for Config.MessagePrefix: the default is neutral; the
// original implementations used SeedMessagePrefix.
const (
	DefaultMessagePrefix = statecas.DefaultMessagePrefix
	SeedMessagePrefix    = statecas.SeedMessagePrefix
)

// BootClock is Config.BootClock's type: the host's boot clock, the same
// reading in every process of one boot, never stepped, restarting at reboot.
type BootClock = statecas.BootClock

// label gives every refusal in err the configured message prefix.
func label(config Config, err error) error { return seederr.Label[Kind](err, config.Prefix()) }

// Lease is a held directory lease. It is not safe for concurrent use.
type Lease struct {
	config Config
	// uid is the creator's uid: the claim file must stay its.
	uid       uint32
	claimPath string
	claim     Claim
	sha       string
	released  bool
}

// ClaimPath is the claim file.
func (l *Lease) ClaimPath() string { return l.claimPath }

// Claim is the record this handle last wrote.
func (l *Lease) Claim() Claim { return l.claim }

// ContentSHA256 is the SHA-256 of the bytes this handle last wrote.
func (l *Lease) ContentSHA256() string { return l.sha }

// Released reports whether Release succeeded.
func (l *Lease) Released() bool { return l.released }

// CreateRequest is what Create needs.
type CreateRequest struct {
	Role Role
	// Path is the leased directory: absolute, canonical (no symlink on the
	// way), mode 0700, owned by this user, in a parent that is not group- or
	// world-writable.
	Path string
	// OutputRoot is required for bundle-stage (a sibling of Path, where the
	// stage is published by rename) and forbidden for raw-working.
	OutputRoot string
	// RecoverAfterMs is the wall time (Unix ms), not before now, after which
	// a launching lease of a dead owner may be recovered. Only its distance
	// from the creation time is used (the window, measured on the boot
	// clock); the wall time itself is recorded as the original records it.
	RecoverAfterMs int64
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

// physicalIdentity is the original's physicalDirectoryIdentity: name must be
// canonical (no component is a symlink, as realpath(name) == name), a
// directory owned by uid, with a birth time, and mode 0700 (private) or at
// least not group- or world-writable.
func physicalIdentity(config Config, uid uint32, name string, private bool) (Identity, error) {
	const message = "directory lease target is not an owned physical directory"
	rooted := rootedName(name)
	var info lease.FileInfo
	for end := 0; end < len(rooted); {
		end = nextPrefixEnd(rooted, end)
		prefix := rooted[:end]
		var err error
		if info, err = config.FS.Lstat(prefix); err != nil {
			return Identity{}, fail(ErrNotOwnedDirectory, name, message, err)
		}
		if info.IsSymlink() {
			return Identity{}, fail(ErrNotOwnedDirectory, name, message+" (a symlink is on its path: "+prefix+")", nil)
		}
	}
	mode := statecas.DirNotShared
	if private {
		mode = statecas.DirPrivate
	}
	identity, err := statecas.CheckDir(info, name, uid, mode)
	if err != nil {
		return Identity{}, fail(ErrNotOwnedDirectory, name, message, err)
	}
	return IdentityOf(identity), nil
}

// rootedName is name with a leading slash: the walk of physicalIdentity
// Lstats "/" joined with one more component of name at a time, and those
// are the prefixes of rootedName(name) that end before one of its slashes
// after the first, and the whole of it (TestWalkPrefixesAreJoins).
func rootedName(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/" + name
}

// nextPrefixEnd is where the walk's next prefix of rooted ends, after the
// one ending at end (0 to start): slices of the name instead of a string
// built per component.
func nextPrefixEnd(rooted string, end int) int {
	if next := strings.IndexByte(rooted[end+1:], '/'); next >= 0 {
		return end + 1 + next
	}
	return len(rooted)
}

// identityIfPresent is physicalIdentity (private), with absence as nil.
func identityIfPresent(config Config, uid uint32, name string) (*Identity, error) {
	identity, err := physicalIdentity(config, uid, name, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &identity, nil
}

func nowMs(config Config) int64 { return config.Clock.Now().UnixMilli() }

// bootMs reads the boot clock, NoBootTime without one.
func bootMs(config Config) int64 {
	if config.BootClock == nil {
		return NoBootTime
	}
	reading := config.BootClock.SinceBoot().Milliseconds()
	if reading < 0 || reading > safeIntegerMax {
		panic("dirlease: the boot clock reads outside [0, 2^53)")
	}
	return reading
}

// Create records a lease on request.Path in phase preparing. A cancelled
// ctx returns ctx.Err() before anything is written.
func Create(ctx context.Context, config Config, request CreateRequest) (held *Lease, err error) {
	defer func() { err = label(config, err) }()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !validPath(request.Path) {
		return nil, fail(ErrInvalidRequest, request.Path, "directory lease path is invalid", nil)
	}
	if request.OutputRoot != "" && !validPath(request.OutputRoot) {
		return nil, fail(ErrInvalidRequest, request.OutputRoot, "directory lease output is invalid", nil)
	}
	now := nowMs(config)
	if now < 0 || now > safeIntegerMax {
		return nil, fail(ErrInvalidRequest, "", "directory lease creation time is invalid", nil)
	}
	parent := fspath.Dir(request.Path)
	bundle := request.Role == RoleBundleStage
	if (request.Role != RoleRawWorking && !bundle) || request.RecoverAfterMs < now ||
		request.RecoverAfterMs > safeIntegerMax || bundle != (request.OutputRoot != "") ||
		(request.OutputRoot != "" && fspath.Dir(request.OutputRoot) != parent) {
		return nil, fail(ErrInvalidRequest, request.Path, "directory lease request is invalid", nil)
	}
	current, err := currentIdentity(config)
	if err != nil {
		return nil, err
	}
	uid := uint32(current.UID)
	parentIdentity, err := physicalIdentity(config, uid, parent, false)
	if err != nil {
		return nil, err
	}
	directoryIdentity, err := physicalIdentity(config, uid, request.Path, true)
	if err != nil {
		return nil, err
	}
	claim := Claim{
		SchemaVersion: SchemaVersion, ID: config.IDs.NewID(), Role: request.Role,
		Path: request.Path, ParentPath: parent, ParentIdentity: parentIdentity,
		DirectoryIdentity: directoryIdentity, OutputRoot: request.OutputRoot,
		Owner: statecas.OwnerOf(current), Phase: PhasePreparing,
		CreatedAtMs: now, RecoverAfterMs: request.RecoverAfterMs,
		Revision: config.IDs.NewID(), CreatedAtBootMs: bootMs(config),
	}
	return create(config, uid, claim)
}

func create(config Config, uid uint32, claim Claim) (*Lease, error) {
	const message = "directory lease could not be created safely"
	root, err := statecas.EnsurePrivateDir(config.Env(uid), uid, config.StateHome, RootDir...)
	if err != nil {
		return nil, wrapUnexpected(err, config.StateHome, message)
	}
	if err := checkRoom(config, uid, root); err != nil {
		return nil, wrapUnexpected(err, root, message)
	}
	name := claim.ID + ".json"
	claimPath := fspath.Join(root, name)
	data := claim.Bytes()
	if _, err := Parse(data, name, claimPath); err != nil {
		panic("dirlease: built a claim that does not parse: " + err.Error())
	}
	created, err := statecas.CreateIfAbsent(config.Env(uid), claimPath, data)
	if err != nil {
		return nil, wrapUnexpected(err, claimPath, message)
	}
	if !created {
		return nil, fail(ErrDuplicate, claimPath, "directory lease ID was already present", nil)
	}
	held := &Lease{config: config, uid: uid, claimPath: claimPath, claim: claim, sha: statefile.SHA256Hex(data)}
	if err := checkAlone(config, uid, root, claim); err != nil {
		return nil, withdraw(config, uid, held, err)
	}
	return held, nil
}

// RawTransition reports whether the original allows a raw-working lease to move
// from current to next: launching from preparing or settled; running from
// launching; settled from launching or running.
func RawTransition(current, next Phase) bool {
	switch next {
	case PhaseLaunching:
		return current == PhasePreparing || current == PhaseSettled
	case PhaseRunning:
		return current == PhaseLaunching
	case PhaseSettled:
		return current == PhaseLaunching || current == PhaseRunning
	}
	return false
}

// Update moves a raw-working lease to phase (compare-and-swap), with a new
// revision. Running needs childPID, the live child whose full identity is
// recorded (a child that already exited cannot be recorded: its parent
// settles instead, launching → settled); every other phase needs childPID
// 0. A cancelled ctx returns ctx.Err() before anything is written.
func (l *Lease) Update(ctx context.Context, phase Phase, childPID int) (err error) {
	defer func() { err = label(l.config, err) }()
	if err := ctx.Err(); err != nil {
		return err
	}
	if l.released || l.claim.Role != RoleRawWorking {
		return fail(ErrInvalidTransition, l.claimPath, "only an active raw directory lease can change phase", nil)
	}
	if !RawTransition(l.claim.Phase, phase) {
		return fail(ErrInvalidTransition, l.claimPath, "raw directory lease lifecycle transition is invalid", nil)
	}
	var child *statecas.Owner
	if phase == PhaseRunning {
		if childPID < 1 || childPID > statecas.PIDMax {
			return fail(ErrChildIdentity, l.claimPath, "running directory lease requires a child process identity", nil)
		}
		captured, err := statecas.Capture(l.config.Inspector, childPID)
		if err != nil {
			return fail(ErrChildIdentity, l.claimPath, "running directory lease requires a child process identity", err)
		}
		child = &captured
	} else if childPID != 0 {
		return fail(ErrChildIdentity, l.claimPath, "only a running directory lease accepts a child process identity", nil)
	}
	next := l.claim
	next.Phase = phase
	next.ChildOwner = child
	next.Revision = l.config.IDs.NewID()
	if next.Revision == l.claim.Revision {
		panic("dirlease: IDSource repeated a revision")
	}
	data := next.Bytes()
	written, err := statecas.WriteIfUnchanged(l.config.Env(l.uid), l.claimPath, data, l.sha)
	if err != nil {
		return wrapUnexpected(err, l.claimPath, "directory lease lifecycle could not be updated safely")
	}
	if !written {
		return fail(ErrChanged, l.claimPath, "directory lease changed before its lifecycle update", nil)
	}
	l.claim = next
	l.sha = statefile.SHA256Hex(data)
	return nil
}

// Release removes the claim (compare-and-swap); the directory itself is the
// caller's. Releasing twice is a no-op. A cancelled ctx returns ctx.Err()
// with the claim kept.
func (l *Lease) Release(ctx context.Context) (err error) {
	if l.released {
		return nil
	}
	defer func() { err = label(l.config, err) }()
	if err := ctx.Err(); err != nil {
		return err
	}
	removed, err := statecas.RemoveIfUnchanged(l.config.Env(l.uid), l.claimPath, l.sha)
	if err != nil {
		return wrapUnexpected(err, l.claimPath, "directory lease could not be released safely")
	}
	if !removed {
		return fail(ErrChanged, l.claimPath, "directory lease changed before release", nil)
	}
	l.released = true
	return nil
}
