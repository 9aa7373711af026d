package lease

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
)

// The on-disk layout inside the namespace directory (docs/FORMAT-lease.md).
const (
	receiverName = "receiver.lock"
	ownerName    = "owner.json"
	guardName    = "receiver.lifecycle.guard.json"
	epochName    = "receiver.epoch.json"
	// epochIssuedName is the epoch counter's issued mark (epoch.go).
	epochIssuedName = "receiver.epoch.issued.json"
	reclaimsName    = "lifecycle-reclaims"
	quarantineName  = "quarantine"
	preparePrefix   = ".receiver.prepare-"
	releasedPrefix  = ".receiver.released-"
	// guardReleasedPrefix names a guard being released (releaseGuardFile).
	guardReleasedPrefix = ".receiver.lifecycle.released-"
	intentPrefix        = "reclaim."
	intentSuffix        = ".json"
)

// Bounds on the engine's loops. Each is a verdict when hit, never a hang.
const (
	// DefaultGuardWait is how long a call waits for a busy guard.
	DefaultGuardWait = time.Second
	// pollInterval is the original's 5 ms poll between guard attempts.
	pollInterval = 5 * time.Millisecond
	// guardAttemptsMin is the attempt bound when GuardWait is tiny; the
	// bound grows with GuardWait so that the deadline, not the counter,
	// normally ends a wait.
	guardAttemptsMin = 64
	// ownerStepsMax bounds inspect/reclaim/create rounds inside one guard
	// hold: each reclaim removes one owner, and only a foreign writer that
	// ignores the guard could make more than a couple necessary.
	ownerStepsMax = 8
	// leftoverRemovalsMax bounds leftover entries removed per call.
	leftoverRemovalsMax = 32
	// leftoverEntriesMax bounds the entries of one leftover directory.
	leftoverEntriesMax = 16
)

// Config configures a Manager. Every external effect goes through FS, Clock,
// Inspector and IDs.
type Config struct {
	// Namespace is the absolute, clean directory holding the lease.
	Namespace string
	// RootID names the receiver root; only owners with this RootID can be
	// released or used through this Manager.
	RootID    string
	FS        FS
	Clock     Clock
	Inspector Inspector
	IDs       IDSource
	// GuardWait bounds how long one call waits for the lifecycle guard and
	// for live reclaim intents; 0 means DefaultGuardWait. It is measured on
	// Clock.Monotonic, once per call.
	GuardWait time.Duration
}

// Manager is the generation-fenced, epoch-numbered single-owner lease of one
// namespace directory: a Go port of the original's ReceiverLeaseManager. All
// mutations happen under the lifecycle guard file; Inspect reads without it.
// A Manager holds no lease state between calls (only a cache of the last
// records it parsed, keyed by their bytes, and the guard it could not give
// back, if any), so any number of Managers (in
// any number of processes) may share a namespace.
type Manager struct {
	namespace string
	rootID    string
	fs        FS
	clock     Clock
	inspector Inspector
	ids       IDSource
	guardWait time.Duration
	paths     namespacePaths
	cache     recordCache
	// stranded is the last guard this Manager published and could not
	// give back (a fault struck its removal, or the read that would tell
	// whether it is still ours). While it stays, this live process holds
	// the guard and every caller waits; the Manager's next call that meets
	// it gives it back (contendGuard) rather than waiting for itself.
	stranded atomic.Pointer[guardRecord]
}

// namespacePaths are the fixed names inside the namespace, joined once:
// every call names several of them, often in a retry loop.
type namespacePaths struct {
	receiver, owner, guard, epoch, epochIssued, reclaims, quarantine string
}

// newNamespacePaths joins by concatenation: NewManager checked namespace is
// absolute, clean and not "/", and the names are single components, so
// each result is path.Join's (TestNamespacePathsAreJoins). The paths are
// substrings of one string, one allocation for the seven: the simulator
// makes a Manager for every process it starts.
func newNamespacePaths(namespace string) namespacePaths {
	names := [...]string{receiverName, receiverName + "/" + ownerName, guardName, epochName, epochIssuedName,
		reclaimsName, quarantineName}
	size := 0
	for _, name := range names {
		size += len(namespace) + 1 + len(name)
	}
	var all strings.Builder
	all.Grow(size)
	var starts [len(names) + 1]int
	for i, name := range names {
		all.WriteString(namespace)
		all.WriteByte('/')
		all.WriteString(name)
		starts[i+1] = all.Len()
	}
	joined := all.String()
	path := func(i int) string { return joined[starts[i]:starts[i+1]] }
	return namespacePaths{
		receiver: path(0), owner: path(1), guard: path(2), epoch: path(3), epochIssued: path(4),
		reclaims: path(5), quarantine: path(6),
	}
}

// ConfigError says a Config is unusable.
type ConfigError struct{ Problem string }

func (e *ConfigError) Error() string { return "lease: invalid config: " + e.Problem }

// NewManager validates cfg and returns a Manager. It touches nothing on disk.
func NewManager(cfg Config) (*Manager, error) {
	switch {
	case !path.IsAbs(cfg.Namespace) || fspath.Clean(cfg.Namespace) != cfg.Namespace:
		return nil, &ConfigError{fmt.Sprintf("namespace %s must be an absolute clean path", quotedPrefix(cfg.Namespace))}
	case cfg.Namespace == "/":
		return nil, &ConfigError{"namespace must not be the root directory"}
	case cfg.RootID == "":
		return nil, &ConfigError{"rootId is required"}
	case configTextProblem(cfg) != "":
		return nil, &ConfigError{configTextProblem(cfg)}
	case cfg.FS == nil || cfg.Clock == nil || cfg.Inspector == nil || cfg.IDs == nil:
		return nil, &ConfigError{"FS, Clock, Inspector and IDs are all required"}
	case cfg.GuardWait < 0:
		return nil, &ConfigError{fmt.Sprintf("guard wait %v is negative", cfg.GuardWait)}
	}
	wait := cfg.GuardWait
	if wait == 0 {
		wait = DefaultGuardWait
	}
	return &Manager{
		namespace: cfg.Namespace, rootID: cfg.RootID, fs: cfg.FS, clock: cfg.Clock,
		inspector: cfg.Inspector, ids: cfg.IDs, guardWait: wait, paths: newNamespacePaths(cfg.Namespace),
	}, nil
}

// configTextProblem is what checkText says of the namespace or the root id
// ("" when both are fine): the root id is recorded in every owner.
func configTextProblem(cfg Config) string {
	if problem := checkText("namespace", cfg.Namespace, requestTextBytesMax); problem != "" {
		return problem
	}
	return checkText("rootId", cfg.RootID, rootIDBytesMax)
}

// Namespace returns the namespace directory.
func (m *Manager) Namespace() string { return m.namespace }

func (m *Manager) receiverPath() string    { return m.paths.receiver }
func (m *Manager) ownerPath() string       { return m.paths.owner }
func (m *Manager) guardPath() string       { return m.paths.guard }
func (m *Manager) epochPath() string       { return m.paths.epoch }
func (m *Manager) epochIssuedPath() string { return m.paths.epochIssued }
func (m *Manager) reclaimsPath() string    { return m.paths.reclaims }
func (m *Manager) quarantinePath() string  { return m.paths.quarantine }

// call is the per-call context: who we are and when the call must end.
// One deadline for the whole call (no restart on retry or reclaim).
type call struct {
	ctx     context.Context
	current ProcessIdentity
	// uid is current.UID: every file and directory the call acts on must
	// belong to it.
	uid      uint32
	deadline time.Duration
	attempts int
	// readSynced says the call fsynced the namespace after reading it
	// outside its own guard (syncBeforeActing).
	readSynced bool
}

// begin starts a call: the caller's identity, the one monotonic deadline,
// and the namespace directories.
//
// A refusal means the namespace is not safe to use (see checkDirectory);
// nothing was created inside it.
func (m *Manager) begin(ctx context.Context) (*call, Refusal, error) {
	if err := ctx.Err(); err != nil {
		return nil, Refusal{}, err
	}
	current, err := m.currentIdentity()
	if err != nil {
		return nil, Refusal{}, err
	}
	c := &call{ctx: ctx, current: current, uid: uint32(current.UID), deadline: m.clock.Monotonic() + m.guardWait}
	refusal, err := m.initialize(c.uid)
	if err != nil || !refusal.IsZero() {
		return nil, refusal, err
	}
	return c, Refusal{}, nil
}

// currentIdentity is the caller's validated identity.
func (m *Manager) currentIdentity() (ProcessIdentity, error) {
	current, err := m.inspector.Current()
	if err != nil {
		return ProcessIdentity{}, fmt.Errorf("lease: current process identity: %w", err)
	}
	if err := current.Validate(); err != nil {
		return ProcessIdentity{}, fmt.Errorf("lease: current process identity: %w", err)
	}
	if current.PID > math.MaxInt32 || int64(current.UID) > math.MaxUint32 {
		return ProcessIdentity{}, fmt.Errorf("lease: current process identity: PID %d or UID %d out of range", current.PID, current.UID)
	}
	return current, nil
}

// attemptsMax is the bound on guard attempts in one call.
func (m *Manager) attemptsMax() int {
	return guardAttemptsMin + 2*int(m.guardWait/pollInterval)
}

// expired reports whether the call's deadline has passed.
func (m *Manager) expired(c *call) bool { return m.clock.Monotonic() >= c.deadline }

// pause sleeps one poll interval (never past the deadline) and honours ctx.
func (m *Manager) pause(c *call) error {
	wait := c.deadline - m.clock.Monotonic()
	if wait > pollInterval {
		wait = pollInterval
	}
	if wait < 0 {
		wait = 0
	}
	if err := m.clock.Sleep(c.ctx, wait); err != nil {
		return fmt.Errorf("lease: waiting for the lifecycle guard: %w", err)
	}
	return c.ctx.Err()
}

// initialize creates the namespace (and missing parents), quarantine/ and
// lifecycle-reclaims/, each mode 0700, fsyncing every directory it made and
// that directory's parent, so the layout is durable before any record is
// written into it.
//
// Finding a directory already there does not prove it durable: its creator
// may have crashed between mkdir and the parent's fsync, and a power loss
// would then take the namespace, epoch counter included, away. So the call
// makes the namespace durable (makeNamespaceDurable). quarantine/ and
// lifecycle-reclaims/ are made durable by the namespace fsync that follows
// the guard's publication (statefile.CreateOnlyPublished), before the call
// writes anything into them.
//
// The namespace, quarantine/ and lifecycle-reclaims/ must each be a real
// directory (never a symlink: Lstat), owned by uid and not writable by group
// or others; otherwise the call is refused before anything is made inside
// the namespace (directoryRefusal).
func (m *Manager) initialize(uid uint32) (Refusal, error) {
	for _, dir := range []string{m.namespace, m.quarantinePath(), m.reclaimsPath()} {
		info, err := m.ensureDirectory(dir)
		if err != nil {
			return Refusal{}, err
		}
		if refusal, err := directoryRefusal(dir, info, uid); err != nil || !refusal.IsZero() {
			return refusal, err
		}
	}
	return Refusal{}, m.makeNamespaceDurable()
}

// makeNamespaceDurable fsyncs the namespace's parent, making the
// namespace's own entry durable, unless an epoch file in the namespace
// proves that was done: every epoch file is written under the guard by a
// call that had made the namespace durable first (this function, or the
// mkdir's own fsyncs), and the namespace's entry in its parent does not
// change while it exists. A namespace copied into place by hand carries its
// epoch files without that fsync; whoever copies one must sync it
// (docs/FORMAT-lease.md, "Durability").
func (m *Manager) makeNamespaceDurable() error {
	for _, proof := range []string{m.epochPath(), m.epochIssuedPath()} {
		if info, err := m.fs.Lstat(proof); err == nil && info.IsRegular() {
			return nil
		}
	}
	return m.syncAncestor(fspath.Dir(m.namespace))
}

// syncBeforeActing fsyncs the namespace once per call, after the call read
// it outside its own guard (another process's guard, the intents scan) and
// before it acts on or reports what it read: a process that crashed before
// its own fsync leaves a visible state that a power loss can still undo.
// Under its own guard the call needs no fsync of its own for this: the
// guard's publication fsyncs the namespace before anything is read.
func (m *Manager) syncBeforeActing(c *call) error {
	if c.readSynced {
		return nil
	}
	if err := statefile.SyncDir(m.fs, m.namespace); err != nil {
		return err
	}
	c.readSynced = true
	return nil
}

// checkDirectory is directoryRefusal of dir's Lstat. A missing dir passes.
func (m *Manager) checkDirectory(dir string, uid uint32) (Refusal, error) {
	info, err := m.fs.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Refusal{}, nil
	}
	if err != nil {
		return Refusal{}, fmt.Errorf("lease: checking %s: %w", dir, err)
	}
	return directoryRefusal(dir, info, uid)
}

// directoryRefusal refuses dir (whose Lstat is info) if it is a symlink,
// writable by group or others, or owned by another uid than uid: another
// user could then plant, swap or remove records in it. A non-directory is
// an error (errNotDirectory).
func directoryRefusal(dir string, info FileInfo, uid uint32) (Refusal, error) {
	var problem string
	switch {
	case info.IsSymlink():
		problem = "is a symlink; the namespace and its directories must be real directories"
	case !info.IsDir():
		return Refusal{}, &fs.PathError{Op: "lease: initialize", Path: dir, Err: errNotDirectory}
	case info.Perm()&0o022 != 0:
		problem = fmt.Sprintf("is group- or world-writable (mode %v); it must be writable by its owner only", info.Perm())
	case info.UID != uid:
		problem = fmt.Sprintf("is owned by uid %d, not by this process's uid %d", info.UID, uid)
	default:
		return Refusal{}, nil
	}
	return Refusal{Reason: RefusalUnsafeNamespace, Human: HumanUnsafeNamespace,
		Diagnostic: fmt.Sprintf("%s %s; an operator must fix it", dir, problem)}, nil
}

// ensureDirectory returns the Lstat of dir (never following a symlink at
// dir itself), making dir first if it is missing: for the namespace, with
// its missing ancestors, which may be symlinks (/var/run -> /run).
func (m *Manager) ensureDirectory(dir string) (FileInfo, error) {
	info, err := m.fs.Lstat(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return info, err
	}
	parent := fspath.Dir(dir)
	if dir == m.namespace && parent != dir {
		if err := m.ensureAncestor(parent); err != nil {
			return FileInfo{}, err
		}
	}
	if err := m.fs.Mkdir(dir, statefile.DirMode); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return m.fs.Lstat(dir)
		}
		return FileInfo{}, err
	}
	if err := statefile.SyncDir(m.fs, dir); err != nil {
		return FileInfo{}, err
	}
	syncParent := statefile.SyncDir
	if dir == m.namespace {
		syncParent = syncAncestorDir
	}
	if err := syncParent(m.fs, parent); err != nil {
		return FileInfo{}, err
	}
	return m.fs.Lstat(dir)
}

// ensureAncestor makes a missing ancestor of the namespace (and its own
// missing ancestors). An existing one must be a directory, possibly behind
// a symlink: the ancestors are the caller's path, and only the engine's
// own entries (the namespace and everything in it) are never followed.
//
// The recursion climbs one component per call, so the path's depth bounds
// it. A Mkdir that finds the name taken (EEXIST) after Stat said it was
// missing is either a concurrent creator (Stat now sees a directory) or a
// symlink whose target does not exist: the second look decides, once,
// and a dangling link is a DanglingAncestorError naming it.
func (m *Manager) ensureAncestor(dir string) error {
	info, err := m.fs.Stat(dir)
	if err == nil {
		return ancestorIsDirectory(dir, info)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := fspath.Dir(dir)
	if parent != dir {
		if err := m.ensureAncestor(parent); err != nil {
			return err
		}
	}
	if err := m.fs.Mkdir(dir, statefile.DirMode); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return m.takenAncestor(dir)
		}
		return err
	}
	if err := m.syncAncestor(dir); err != nil {
		return err
	}
	return m.syncAncestor(parent)
}

// takenAncestor judges an ancestor that Stat found missing and Mkdir
// found taken, with one more Stat (no retry: see ensureAncestor).
func (m *Manager) takenAncestor(dir string) error {
	info, err := m.fs.Stat(dir)
	if err == nil {
		return ancestorIsDirectory(dir, info)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	link, lstatErr := m.fs.Lstat(dir)
	if lstatErr != nil || !link.IsSymlink() {
		// Neither a directory nor a symlink, yet Mkdir said EEXIST and
		// Stat ENOENT: the entry changed twice under us.
		return fmt.Errorf("lease: namespace ancestor %s keeps changing: %w", dir, err)
	}
	target, readErr := m.fs.Readlink(dir)
	if readErr != nil {
		target = "?"
	}
	return &DanglingAncestorError{Link: dir, Target: target}
}

func ancestorIsDirectory(dir string, info FileInfo) error {
	if !info.IsDir() {
		return &fs.PathError{Op: "lease: initialize", Path: dir, Err: errNotDirectory}
	}
	return nil
}

// DanglingAncestorError says an ancestor of the namespace is a symlink
// whose target does not exist, so the namespace cannot be made below it.
// Nothing was created. An operator must create the target, or remove the
// link, or choose another namespace.
type DanglingAncestorError struct {
	// Link is the ancestor path that is a dangling symlink; Target is
	// what it points to ("?" when it could not be read).
	Link, Target string
}

func (e *DanglingAncestorError) Error() string {
	return fmt.Sprintf("lease: the namespace's ancestor %s is a symlink to %s, which does not exist; "+
		"an operator must create %s (or remove the link), or choose another namespace", e.Link, e.Target, e.Target)
}

// syncAncestor fsyncs an ancestor of the namespace (its parent, or one it
// made), following a symlink at it (/var/lock -> /run/lock): see
// syncAncestorDir.
func (m *Manager) syncAncestor(dir string) error { return syncAncestorDir(m.fs, dir) }

// syncAncestorDir is statefile.SyncDir without O_NOFOLLOW. The namespace's
// ancestors are the path the caller named, which may pass through
// symlinks; the engine's own entries (the namespace itself, quarantine/,
// lifecycle-reclaims/, the records) are opened with O_NOFOLLOW and never
// followed (docs/FORMAT-lease.md, "Symlinks").
func syncAncestorDir(fsys FS, dir string) error {
	handle, err := fsys.OpenFile(dir, O_RDONLY|O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	return statefile.JoinErrors(handle.Sync(), handle.Close())
}

var errNotDirectory = errors.New("exists and is not a directory; an operator must move it away")

// safePathPart keeps a value usable inside a file name, as the original does:
// every rune but ASCII letters, digits, '.', '_' and '-' becomes '_'. A
// value made only of those (a generation, an ID) is returned as it is.
func safePathPart(value string) string {
	if strings.IndexFunc(value, func(r rune) bool { return !safePathRune(r) }) < 0 {
		return value
	}
	var b strings.Builder
	b.Grow(len(value))
	for _, r := range value {
		if safePathRune(r) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func safePathRune(r rune) bool {
	return r < 128 && (r == '.' || r == '_' || r == '-' || ('0' <= r && r <= '9') ||
		('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))
}

// quarantineEntry returns a fresh name in quarantine/ for a record of kind
// ("receiver" or "lifecycle") and generation, as the original names them.
func (m *Manager) quarantineEntry(kind, generation, suffix string) string {
	return fspath.Join(m.quarantinePath(), fmt.Sprintf("%s.%s.%d.%s%s", kind, safePathPart(generation),
		m.clock.Now().UnixMilli(), safePathPart(m.ids.NewID()), suffix))
}

// moveToQuarantine renames from to the fresh name to in quarantine/ without
// replacing anything, then fsyncs both directories: a cross-directory
// rename is durable only when both entries are.
func (m *Manager) moveToQuarantine(from, to string) error {
	if err := m.renameNoReplace(from, to); err != nil {
		return err
	}
	if err := statefile.SyncDir(m.fs, fspath.Dir(from)); err != nil {
		return err
	}
	return statefile.SyncDir(m.fs, fspath.Dir(to))
}

// renameNoReplace is FS.RenameNoReplace, falling back to Rename where the
// kernel lacks it; every caller has made sure, under the guard, that the
// target is a fresh unique name.
func (m *Manager) renameNoReplace(from, to string) error {
	err := m.fs.RenameNoReplace(from, to)
	if errors.Is(err, errors.ErrUnsupported) {
		return m.fs.Rename(from, to)
	}
	return err
}
