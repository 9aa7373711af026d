package statecas

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/seederr"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// Config is what an engine built on statecas (admission, dirlease) touches
// outside its memory; each engine's Config is this type.
type Config struct {
	// StateHome is an existing absolute directory of this user, not group-
	// or world-writable.
	StateHome string
	FS        lease.FS
	Clock     lease.Clock
	Inspector lease.Inspector
	IDs       lease.IDSource
	// BootClock is the host's boot clock (dirlease's launching window is
	// measured on it). Nil means none: a launching lease of a dead owner
	// then waits for a provable reboot or an operator.
	BootClock BootClock
	// MessagePrefix starts every refusal's text ("<prefix>: <message>");
	// "" is DefaultMessagePrefix. The original implementations
	// used SeedMessagePrefix. It changes no on-disk name.
	MessagePrefix string
}

// Message prefixes for Config.MessagePrefix.
const (
	// DefaultMessagePrefix is neutral: the engines are not one product's.
	DefaultMessagePrefix = seederr.DefaultPrefix
	// SeedMessagePrefix is the original's wording, for programs that match it.
	SeedMessagePrefix = "Beeper Message Like Me recovery"
)

// BootClock reads the host's boot clock: the time since this host booted,
// the same reading in every process of one boot, never moved by wall-clock
// steps, restarting at reboot (Linux CLOCK_BOOTTIME, macOS
// CLOCK_MONOTONIC). Unlike lease.Clock.Monotonic, whose origin may be per
// process, two processes can compare its readings, provided both were
// taken in the same boot.
type BootClock interface {
	SinceBoot() time.Duration
}

// Prefix is the message prefix this configuration asks for.
func (c Config) Prefix() string {
	if c.MessagePrefix == "" {
		return DefaultMessagePrefix
	}
	return c.MessagePrefix
}

// Env is the statecas environment of a caller running as uid: every state
// file and claim it reads must belong to uid.
func (c Config) Env(uid uint32) Env {
	return Env{FS: c.FS, IDs: c.IDs, Inspector: c.Inspector, UID: uid}
}

type Env struct {
	FS        lease.FS
	IDs       lease.IDSource
	Inspector lease.Inspector
	// UID is the caller's uid (Inspector.Current().UID). Every state file
	// and claim read must belong to it: one of another uid is refused
	// (ErrUnsafe) and never judged, moved or removed.
	UID uint32
}

// Mutation claim format. One claim file guards one target file; it sits
// next to the target as ".<target>.mutation" and holds the claimant's full
// process identity, so that a claim left by a crashed process can be proven
// orphaned (its owner dead, by lease.ClassifyRecord) and recovered.
const (
	ClaimKind          = "leasekit-state-mutation"
	ClaimSchemaVersion = 1
	claimSuffix        = ".mutation"
	orphanSuffix       = ".orphan"
	// claimTempTag and dataTempTagPrefix name the statefile temps this
	// package makes: ".tmp-mutation-<uuid>" (a claim being published) and
	// ".tmp-cas-<claim id>-<uuid>" (a state file written under that claim).
	claimTempTag      = "mutation"
	dataTempTagPrefix = "cas-"
	// claimBytesMax bounds a claim file; a real one is about 400 bytes.
	claimBytesMax = 4096
	// claimAttemptsMax bounds how often one call retries publishing its
	// claim after recovering an orphaned one or seeing one vanish.
	claimAttemptsMax = 4
	// FileBytesMax bounds every state file these helpers compare.
	FileBytesMax = 64 * 1024
	// dirEntriesMax bounds any directory listing these helpers make.
	dirEntriesMax = 4096
)

var claimKeys = []string{"id", "kind", "owner", "schemaVersion", "target"}
var claimOwnerKeys = []string{"bootId", "executableDev", "executableIno", "hostname", "pid", "pidNamespace", "startTime", "uid"}

type claim struct {
	ID     string
	Target string
	Owner  lease.ProcessIdentity
}

func (c claim) bytes() []byte {
	object := statefile.NewCanonicalObject(512)
	object.String("id", c.ID)
	object.String("kind", ClaimKind)
	object.Open("owner")
	object.String("bootId", c.Owner.BootID)
	object.String("executableDev", strconv.FormatUint(c.Owner.ExecutableDev, 10))
	object.String("executableIno", strconv.FormatUint(c.Owner.ExecutableIno, 10))
	object.String("hostname", c.Owner.Hostname)
	object.Int("pid", int64(c.Owner.PID))
	object.String("pidNamespace", c.Owner.PIDNamespace)
	object.String("startTime", c.Owner.StartTime)
	object.Int("uid", int64(c.Owner.UID))
	object.Close()
	object.Int("schemaVersion", ClaimSchemaVersion)
	object.String("target", c.Target)
	return object.Bytes()
}

func parseClaim(data []byte) (claim, error) {
	object, err := statefile.DecodeObject(data, "state file mutation claim", claimKeys, nil)
	if err != nil {
		return claim{}, err
	}
	c := claim{ID: object.NonEmptyString("id"), Target: object.NonEmptyString("target")}
	if object.Int("schemaVersion", ClaimSchemaVersion, ClaimSchemaVersion); object.String("kind") != ClaimKind && object.Err() == nil {
		object.Fail("kind is not %q", ClaimKind)
	}
	if err := object.Err(); err != nil {
		return claim{}, err
	}
	owner, err := statefile.ObjectFrom(object.Raw("owner"), "state file mutation claim owner", claimOwnerKeys, nil)
	if err != nil {
		return claim{}, err
	}
	c.Owner.PID = int(owner.Int("pid", 1, PIDMax))
	c.Owner.StartTime = owner.String("startTime")
	c.Owner.BootID = owner.String("bootId")
	c.Owner.ExecutableDev = parseUint(owner, "executableDev")
	c.Owner.ExecutableIno = parseUint(owner, "executableIno")
	c.Owner.Hostname = owner.String("hostname")
	c.Owner.PIDNamespace = owner.String("pidNamespace")
	c.Owner.UID = int(owner.Int("uid", 0, 1<<32-1))
	if err := owner.Err(); err != nil {
		return claim{}, err
	}
	if !bytes.Equal(c.bytes(), data) {
		return claim{}, &statefile.SchemaError{Record: "state file mutation claim", Problem: "not canonical"}
	}
	return c, nil
}

func parseUint(object *statefile.Object, key string) uint64 {
	text := object.String(key)
	value, err := strconv.ParseUint(text, 10, 64)
	if object.Err() == nil && (err != nil || strconv.FormatUint(value, 10) != text) {
		object.Fail("%s must be a decimal string", key)
	}
	return value
}

// ClaimPath is the mutation claim that guards target.
func ClaimPath(target string) string {
	return fspath.JoinName(fspath.Dir(target), ".", path.Base(target), claimSuffix)
}

// heldClaim is a claim this call published; inode identifies it so that a
// displaced or replaced claim is noticed.
type heldClaim struct {
	path  string
	id    string
	inode lease.FileInfo
}

func sameInode(a, b lease.FileInfo) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino && a.HasBirth == b.HasBirth && a.BirthNs == b.BirthNs
}

func currentIdentity(env Env) (lease.ProcessIdentity, error) {
	current, err := env.Inspector.Current()
	if err == nil {
		err = current.Validate()
	}
	if err != nil {
		return lease.ProcessIdentity{}, newError(ErrUnsafe, "", "the current process identity is unavailable", err)
	}
	return current, nil
}

func checkTargetPath(target string) {
	if !path.IsAbs(target) || fspath.Clean(target) != target || target == "/" {
		panic("statecas: target path must be absolute and clean: " + strconv.Quote(target))
	}
}

// withClaim runs mutate while this process holds target's mutation claim.
// mutate gets the claim's ID (to tag its temps) and verify, which it must
// call right before its committing rename or unlink: verify fails with
// ErrClaimLost if the claim was displaced meanwhile.
func withClaim(env Env, target string, mutate func(claimID string, verify func() error) error) error {
	checkTargetPath(target)
	current, err := currentIdentity(env)
	if err != nil {
		return err
	}
	held, err := acquireClaim(env, current, target)
	if err != nil {
		return err
	}
	verify := func() error { return verifyClaim(env, held) }
	mutateErr := mutate(held.id, verify)
	releaseErr := releaseClaim(env, held)
	return errors.Join(mutateErr, releaseErr)
}

func acquireClaim(env Env, current lease.ProcessIdentity, target string) (heldClaim, error) {
	claimPath := ClaimPath(target)
	for attempt := 0; attempt < claimAttemptsMax; attempt++ {
		mine := claim{ID: env.IDs.NewID(), Target: path.Base(target), Owner: current}
		data := mine.bytes()
		// The identity comes from the temp, not from an Lstat of claimPath
		// after the publish: an orphan recovery may move the published claim
		// aside at once and another caller publish its own, whose inode this
		// call would then verify and release as its own.
		inode, err := statefile.CreateOnlyIdentity(env.FS, env.IDs, claimPath, claimTempTag, data)
		if err == nil {
			return heldClaim{path: claimPath, id: mine.ID, inode: inode}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return heldClaim{}, errors.Join(err, discardOwnClaim(env, claimPath, data))
		}
		retry, err := judgeExistingClaim(env, current, claimPath)
		if err != nil {
			return heldClaim{}, err
		}
		if !retry {
			break
		}
	}
	return heldClaim{}, newError(ErrMutationActive, claimPath, MutationActiveText+" (bounded claim attempts exhausted)", nil)
}

// discardOwnClaim removes a claim this call published before a later step
// (the directory fsync) failed, so that this live process does not block
// every later mutation of the file.
func discardOwnClaim(env Env, claimPath string, data []byte) error {
	content, err := statefile.ReadOwnedFile(env.FS, claimPath, claimBytesMax, env.UID)
	if err != nil || !bytes.Equal(content, data) {
		return nil
	}
	return env.FS.Remove(claimPath)
}

// judgeExistingClaim decides what an existing claim means: a live owner is
// contention, an owner that cannot be inspected is a refusal, a dead owner's
// claim is recovered (retry true).
func judgeExistingClaim(env Env, current lease.ProcessIdentity, claimPath string) (retry bool, err error) {
	observed, inode, err := readClaim(env, claimPath)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	state := lease.ClassifyRecord(observed.Owner, current, env.Inspector)
	switch state.Kind {
	case lease.OwnerLive:
		return false, newError(ErrMutationActive, claimPath, MutationActiveText, nil)
	case lease.OwnerRemote, lease.OwnerUnknown:
		return false, newError(ErrMutationIndeterminate, claimPath,
			"state file mutation claim owner cannot be inspected ("+state.Reason+")", nil)
	case lease.OwnerStale:
		return true, recoverOrphan(env, claimPath, observed, inode)
	}
	panic("statecas: unexpected owner kind " + state.Kind.String())
}

// readClaim reads and parses a claim file together with the full identity
// of the handle it was read through. (An Lstat before the read would name
// an inode the bytes may not come from: the claim name can be moved aside
// and another claim published between the two, and an orphan recovery
// would then judge one claim's bytes and move the other's inode.)
func readClaim(env Env, claimPath string) (claim, lease.FileInfo, error) {
	content, inode, err := readWithIdentity(env, claimPath, claimBytesMax)
	if errors.Is(err, fs.ErrNotExist) {
		return claim{}, lease.FileInfo{}, err
	}
	if err != nil {
		return claim{}, lease.FileInfo{}, classifyReadError(claimPath, err)
	}
	parsed, err := parseClaimCached(content)
	if err != nil {
		return claim{}, lease.FileInfo{}, newError(ErrCorrupt, claimPath, "state file mutation claim is corrupt", err)
	}
	return parsed, inode, nil
}

// classifyReadError types a failed read. errors.AsType, unlike errors.As,
// allocates no target per type asked.
func classifyReadError(name string, err error) error {
	if foreign, ok := errors.AsType[*statefile.ForeignOwnerError](err); ok {
		return newError(ErrUnsafe, name, "file is owned by uid "+strconv.FormatUint(uint64(foreign.UID), 10)+
			", not by this process's uid "+strconv.FormatUint(uint64(foreign.Want), 10), err)
	}
	switch {
	case statefile.IsError[*statefile.TooLargeError](err):
		return newError(ErrBound, name, "file exceeds its size bound", err)
	case statefile.IsError[*statefile.NotRegularError](err):
		return newError(ErrUnsafe, name, "not a regular file", err)
	case statefile.IsError[*statefile.ChangedError](err):
		return newError(ErrChanged, name, "file changed while it was read", err)
	}
	return err
}

// recoverOrphan removes the claim of a dead owner without ever deleting
// anyone else's: it renames the claim to a unique quarantine name (atomic:
// exactly one recoverer gets the inode), and deletes it only if that inode
// and its bytes are the dead claim it judged. Otherwise a concurrent
// recoverer already replaced it with a live claim, which is renamed back.
func recoverOrphan(env Env, claimPath string, dead claim, deadInode lease.FileInfo) error {
	quarantine := claimPath + "." + env.IDs.NewID() + orphanSuffix
	if err := env.FS.RenameNoReplace(claimPath, quarantine); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	moved, inode, err := readClaim(env, quarantine)
	if err == nil && sameInode(inode, deadInode) && moved == dead {
		return removeOrphanClaim(env, quarantine, dead.ID)
	}
	restoreErr := env.FS.RenameNoReplace(quarantine, claimPath)
	if errors.Is(restoreErr, fs.ErrNotExist) {
		// Its claimant, whose call failed with ErrClaimLost meanwhile, took
		// the displaced claim back (retractDisplacedClaim): the name is
		// free, and the caller retries.
		return nil
	}
	if restoreErr != nil {
		return newError(ErrClaimLost, claimPath,
			"a live mutation claim was displaced during orphan recovery and is kept at "+quarantine,
			errors.Join(err, restoreErr))
	}
	return statefile.SyncDir(env.FS, fspath.Dir(claimPath))
}

// removeOrphanClaim deletes the data temps a dead claimant left, then its
// claim (data temps first: a crash in between leaves the claim, so a later
// recovery still finds them).
func removeOrphanClaim(env Env, claimFile, claimID string) error {
	dir := fspath.Dir(claimFile)
	entries, err := readDirBounded(env, dir)
	if err != nil {
		return err
	}
	prefix := statefile.TempPrefix + dataTempTagPrefix + claimID + "-"
	for _, entry := range entries {
		if strings.HasPrefix(entry.Name, prefix) {
			if err := removeIfPresent(env, fspath.Join(dir, entry.Name)); err != nil {
				return err
			}
		}
	}
	if err := removeIfPresent(env, claimFile); err != nil {
		return err
	}
	return statefile.SyncDir(env.FS, dir)
}

func removeIfPresent(env Env, name string) error {
	if err := env.FS.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func readDirBounded(env Env, dir string) ([]lease.DirEntry, error) {
	entries, err := env.FS.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(entries) > dirEntriesMax {
		return nil, newError(ErrBound, dir, "directory holds more than "+strconv.Itoa(dirEntriesMax)+" entries", nil)
	}
	return entries, nil
}

func verifyClaim(env Env, held heldClaim) error {
	inode, err := env.FS.Lstat(held.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil || !sameInode(inode, held.inode) {
		return newError(ErrClaimLost, held.path, "the mutation claim of this call was displaced", err)
	}
	return nil
}

func releaseClaim(env Env, held heldClaim) error {
	if err := verifyClaim(env, held); err != nil {
		if KindOf(err) == ErrClaimLost {
			return errors.Join(err, retractDisplacedClaim(env, held))
		}
		return err
	}
	if err := env.FS.Remove(held.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Displaced between the verify and the remove.
			return errors.Join(err, retractDisplacedClaim(env, held))
		}
		return err
	}
	return statefile.SyncDir(env.FS, fspath.Dir(held.path))
}

// retractDisplacedClaim removes this call's claim from wherever an orphan
// recovery put it. A recoverer that judged an earlier, dead claim renames
// whatever sits under the claim name to an orphan name; when that is this
// call's live claim, it renames it back once it sees so. By then this call
// may have failed with ErrClaimLost and returned, so the restored claim
// would name a live process that holds nothing, and refuse every mutation
// of the file (this process's own too) until the process dies (found by
// guided search in the admission campaign). The claim is this call's: it
// is known by its inode (a rename keeps it), and removing it deletes
// nothing of anyone else's. The orphan names are scanned before the claim
// name because the only move left is the restore, orphan to claim name.
// A recoverer that then meets the name gone retries (recoverOrphan).
func retractDisplacedClaim(env Env, held heldClaim) error {
	dir := fspath.Dir(held.path)
	entries, err := readDirBounded(env, dir)
	if err != nil {
		return err
	}
	prefix := path.Base(held.path) + "."
	removed := false
	for _, entry := range entries {
		if !strings.HasPrefix(entry.Name, prefix) || !strings.HasSuffix(entry.Name, orphanSuffix) {
			continue
		}
		took, err := removeIfInode(env, fspath.Join(dir, entry.Name), held.inode)
		if err != nil {
			return err
		}
		removed = removed || took
	}
	took, err := removeIfInode(env, held.path, held.inode)
	if err != nil {
		return err
	}
	if !removed && !took {
		return nil
	}
	return statefile.SyncDir(env.FS, dir)
}

// removeIfInode removes name if it is the inode want; a name already gone
// is not an error.
func removeIfInode(env Env, name string, want lease.FileInfo) (bool, error) {
	info, err := env.FS.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil || !sameInode(info, want) {
		return false, err
	}
	if err := removeIfPresent(env, name); err != nil {
		return false, err
	}
	return true, nil
}

// MutationClaimBytes is the canonical claim file a process with identity
// owner writes (as ID id) to guard target: the format's encoder, for the
// simulator and for tests that plant claims.
func MutationClaimBytes(id, target string, owner lease.ProcessIdentity) []byte {
	return claim{ID: id, Target: path.Base(target), Owner: owner}.bytes()
}
