package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/leasecli"
)

// defaultRootID is the receiver root of leases made by this binary.
const defaultRootID = "leasereal"

// leaseFlags are the flags every lease subcommand shares.
type leaseFlags struct {
	dir       string
	rootID    string
	guardWait time.Duration
}

func (f *leaseFlags) register(flags *flag.FlagSet) {
	flags.StringVar(&f.dir, "dir", "", "lease namespace directory (created if missing)")
	flags.StringVar(&f.rootID, "root-id", defaultRootID, "receiver root ID recorded in the owner")
	flags.DurationVar(&f.guardWait, "guard-wait", lease.DefaultGuardWait, "how long one call waits for a busy lifecycle guard")
}

// namespace returns --dir made absolute and clean, with the symlinks among
// its ancestors resolved (osenv.ResolveNamespace: /var/lock -> /run/lock);
// the directory itself is never followed.
func (f *leaseFlags) namespace() (string, error) {
	if f.dir == "" {
		return "", usagef("--dir is required")
	}
	return osenv.ResolveNamespace(f.dir)
}

// missing reports an error of a path that does not exist, or lies below a
// non-directory (ENOTDIR).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func (f *leaseFlags) manager(inspector lease.Inspector) (*lease.Manager, error) {
	namespace, err := f.namespace()
	if err != nil {
		return nil, err
	}
	manager, err := lease.NewManager(lease.Config{Namespace: namespace, RootID: f.rootID, FS: osenv.NewFS(),
		Clock: osenv.NewClock(), Inspector: inspector, IDs: osenv.NewIDSource(), GuardWait: f.guardWait})
	var config *lease.ConfigError
	if errors.As(err, &config) {
		// What the flags asked for cannot be a lease (the root directory,
		// a --root-id no record can carry): bad input, exit 2, not an error.
		return nil, usagef("%s", config.Problem)
	}
	return manager, err
}

// open is manager, plus the refusal of a namespace path that cannot be a
// namespace (namespaceRefusal). The manager is returned either way, for
// its Namespace.
func (f *leaseFlags) open(inspector lease.Inspector) (*lease.Manager, lease.Refusal, error) {
	manager, err := f.manager(inspector)
	if err != nil {
		return nil, lease.Refusal{}, err
	}
	refusal, err := namespaceRefusal(osenv.NewFS(), manager.Namespace())
	return manager, refusal, err
}

// The refusal of a namespace path held by something that is not a
// directory. The engine reports it as an error naming no command; here it
// is an operator state with one (exit 3).
const (
	refusalNotDirectory lease.RefusalReason = "namespace-not-directory"
	humanNotDirectory   lease.HumanState    = "namespace-not-directory"
)

// The refusal of an existing directory that holds files and no lease: the
// idiom `flock DIR cmd` locks a directory without writing into it, while
// leasereal makes its --dir the lease's namespace and writes its records
// there. Adopting a project or spool directory silently would mix them.
const (
	refusalForeignDirectory lease.RefusalReason = "namespace-foreign-directory"
	humanForeignDirectory   lease.HumanState    = "namespace-foreign-directory"
)

// leaseEntry reports whether name is one the lease engine creates in a
// namespace (its records, directories and temporaries).
func leaseEntry(name string) bool {
	switch name {
	case "receiver.lock", "receiver.epoch.json", "receiver.epoch.issued.json", "receiver.lifecycle.guard.json", "lifecycle-reclaims", "quarantine":
		return true
	}
	return strings.HasPrefix(name, ".tmp-") || strings.HasPrefix(name, ".receiver.")
}

// foreignDirectoryRefusal refuses a non-empty directory with no lease entry
// in it: not a namespace yet, and not leasereal's to fill. A directory with
// any lease entry is a namespace (whatever else an operator put there).
func foreignDirectoryRefusal(fsys lease.FS, namespace string) (lease.Refusal, error) {
	entries, err := fsys.ReadDir(namespace)
	if err != nil || len(entries) == 0 {
		return lease.Refusal{}, nil // an unreadable directory is the engine's to report
	}
	for _, entry := range entries {
		if leaseEntry(entry.Name) {
			return lease.Refusal{}, nil
		}
	}
	return lease.Refusal{Reason: refusalForeignDirectory, Human: humanForeignDirectory, Diagnostic: fmt.Sprintf(
		"%s is a non-empty directory that holds no lease (%d entries, e.g. %q); leasereal writes the lease's records into its --dir, "+
			"where `flock DIR` only locks DIR: name a new or empty directory for the lease (e.g. %s.lease)",
		namespace, len(entries), entries[0].Name, namespace)}, nil
}

// namespaceRefusal refuses a namespace whose path is taken by a
// non-directory (a regular file, a FIFO...: `leasereal reclaim` moves it
// aside), or lies below one (the operator must move that away or choose
// another directory). A symlink at the namespace is the engine's own
// refusal (unsafe-namespace), left to it.
func namespaceRefusal(fsys lease.FS, namespace string) (lease.Refusal, error) {
	info, err := fsys.Lstat(namespace)
	switch {
	case err == nil && info.IsDir():
		return foreignDirectoryRefusal(fsys, namespace)
	case err == nil && info.IsSymlink():
		return lease.Refusal{}, nil
	case err == nil:
		return lease.Refusal{Reason: refusalNotDirectory, Human: humanNotDirectory, Diagnostic: fmt.Sprintf(
			"%s exists and is not a directory (mode %v); an operator must move it aside: `leasereal reclaim --dir %s` shows it, "+
				"and with --force renames it to %s.not-a-directory.<unix ms>.<id> (nothing is deleted)",
			namespace, info.Mode, namespace, namespace)}, nil
	case !missing(err):
		return lease.Refusal{}, err
	}
	for dir := filepath.Dir(namespace); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		info, err := fsys.Stat(dir)
		if missing(err) {
			continue
		}
		if err != nil {
			return lease.Refusal{}, err
		}
		if info.IsDir() {
			return lease.Refusal{}, nil
		}
		return lease.Refusal{Reason: refusalNotDirectory, Human: humanNotDirectory, Diagnostic: fmt.Sprintf(
			"%s, an ancestor of the namespace %s, is not a directory (mode %v); an operator must move it away (mv), or choose another directory",
			dir, namespace, info.Mode)}, nil
	}
	return lease.Refusal{}, nil
}

// parentInspector records another live process (by default the parent: the
// shell or program that ran leasereal) as the current process, so
// `leasereal acquire` leaves a lease held by its caller rather than by
// itself, which exits at once.
type parentInspector struct {
	lease.Inspector
	parent int
}

func (p parentInspector) Current() (lease.ProcessIdentity, error) {
	inspection := p.Inspector.Inspect(p.parent)
	if inspection.Kind != lease.InspectLive || inspection.State == lease.StateZombie {
		return lease.ProcessIdentity{}, fmt.Errorf("the parent process %d cannot be inspected (%v: %s)",
			p.parent, inspection.Kind, inspection.Diagnostic)
	}
	return inspection.Identity, nil
}

func newFlagSet(name string) *flag.FlagSet {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	return flags
}

func parseFlags(flags *flag.FlagSet, args []string) error {
	if err := flags.Parse(args); err != nil {
		return usagef("%s: %v", flags.Name(), err)
	}
	return nil
}

// printJSON prints value indented, without HTML escaping (diagnostics say
// <unix ms>, not \u003cunix ms\u003e).
func printJSON(out io.Writer, value any) error {
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	encoder.SetIndent("", "  ")
	return encoder.Encode(value)
}

// Stable JSON shapes (docs/LEASEREAL.md).

type ownerJSON struct {
	Generation           string `json:"generation"`
	Epoch                uint64 `json:"epoch"`
	SessionID            string `json:"sessionId"`
	SessionFile          string `json:"sessionFile"`
	PID                  int    `json:"pid"`
	ProcessStartIdentity string `json:"processStartIdentity"`
	BootIdentity         string `json:"bootIdentity"`
	Executable           string `json:"executable"`
	Hostname             string `json:"hostname"`
	PIDNamespace         string `json:"pidNamespace"`
	UID                  int    `json:"uid"`
	RootID               string `json:"rootId"`
	CreatedAt            string `json:"createdAt"`
}

func ownerOf(owner lease.Owner) *ownerJSON {
	return &ownerJSON{Generation: owner.Generation, Epoch: owner.Epoch, SessionID: owner.SessionID,
		SessionFile: owner.SessionFile, PID: owner.PID, ProcessStartIdentity: owner.ProcessStartIdentity,
		BootIdentity: owner.BootIdentity, Executable: owner.Executable, Hostname: owner.Hostname,
		PIDNamespace: owner.PIDNamespace, UID: owner.UID, RootID: owner.RootID, CreatedAt: owner.CreatedAt}
}

type refusalJSON struct {
	Reason     string `json:"reason"`
	Human      string `json:"human,omitempty"`
	Diagnostic string `json:"diagnostic"`
	// Operator is the command that resolves a refusal needing an operator.
	Operator string `json:"operator,omitempty"`
}

func refusalOf(namespace string, refusal lease.Refusal) *refusalJSON {
	if refusal.IsZero() {
		return nil
	}
	return &refusalJSON{Reason: string(refusal.Reason), Human: string(refusal.Human), Diagnostic: refusal.Diagnostic,
		Operator: operatorCommand(namespace, refusal)}
}

// operatorCommand is what resolves a refusal that needs an operator: the
// blockers that `leasereal inspect` lists and `leasereal reclaim --force`
// moves into quarantine/ (lease.Manager.ForceReclaim). "" for a refusal
// that needs none (a retry may help), for a namespace-not-directory, whose
// diagnostic names its own command, for an unsafe namespace, which
// only chmod/chown (or moving it away) fixes, and for a foreign directory,
// which is the user's (another --dir is the fix).
func operatorCommand(namespace string, refusal lease.Refusal) string {
	if refusal.Human == lease.HumanNone || refusal.Human == lease.HumanUnsafeNamespace || refusal.Reason == refusalNotDirectory ||
		refusal.Reason == refusalForeignDirectory {
		return ""
	}
	return fmt.Sprintf("leasereal inspect --dir %s lists what blocks the namespace; leasereal reclaim --dir %s "+
		"shows the evidence and with --force moves it into quarantine/ (nothing is deleted)", namespace, namespace)
}

// refusedError is the exit-3 error of a refusal, naming its operator
// command when it needs one.
func refusedError(namespace string, refusal lease.Refusal) error {
	err := fmt.Errorf("%s: %v", namespace, refusal)
	if command := operatorCommand(namespace, refusal); command != "" {
		err = fmt.Errorf("%w\noperator: %s", err, command)
	}
	return &codeError{code: exitRefused, err: err}
}

type reclaimJSON struct {
	Generation     string `json:"generation"`
	PID            int    `json:"pid"`
	SessionID      string `json:"sessionId"`
	Reason         string `json:"reason"`
	QuarantinePath string `json:"quarantinePath"`
}

type acquireJSON struct {
	Result    string        `json:"result"` // acquired | held | refused
	Namespace string        `json:"namespace"`
	Owner     *ownerJSON    `json:"owner,omitempty"`
	Reclaimed []reclaimJSON `json:"reclaimed"`
	Refusal   *refusalJSON  `json:"refusal,omitempty"`
}

func acquireOf(namespace string, result lease.AcquireResult) acquireJSON {
	out := acquireJSON{Result: result.Kind.String(), Namespace: namespace, Reclaimed: []reclaimJSON{},
		Refusal: refusalOf(namespace, result.Refusal)}
	if result.Kind == lease.Acquired || result.Kind == lease.Held {
		out.Owner = ownerOf(result.Owner)
	}
	for _, reclaim := range result.Reclaimed {
		out.Reclaimed = append(out.Reclaimed, reclaimJSON{Generation: reclaim.Owner.Generation,
			PID: reclaim.Owner.PID, SessionID: reclaim.Owner.SessionID, Reason: reclaim.Reason,
			QuarantinePath: reclaim.QuarantinePath})
	}
	return out
}

// acquireCode maps an acquire outcome to its exit code.
func acquireCode(kind lease.AcquireKind) int {
	switch kind {
	case lease.Acquired:
		return exitOK
	case lease.Held:
		return exitConflict
	case lease.Refused:
		return exitRefused
	}
	panic(fmt.Sprintf("leasereal: acquire kind %v", kind))
}

func cmdAcquire(args []string, stdout io.Writer) error {
	flags := newFlagSet("acquire")
	var common leaseFlags
	common.register(flags)
	owner := flags.String("owner", "parent", "who owns the lease: parent (the caller of leasereal), self, or a PID (e.g. $$ from a command substitution)")
	sessionID := flags.String("session-id", "", "session ID to record (default leasereal-<owner pid>)")
	sessionFile := flags.String("session-file", "", "absolute session file to record (default <dir>/leasereal.session)")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		return usagef("acquire takes no arguments")
	}
	var inspector lease.Inspector = osenv.NewInspector()
	ownerPID := os.Getpid()
	switch *owner {
	case "parent":
		ownerPID = os.Getppid()
		inspector = parentInspector{Inspector: inspector, parent: ownerPID}
	case "self":
	default:
		pid, err := strconv.Atoi(*owner)
		if err != nil || pid <= 0 {
			return usagef("--owner must be parent, self or a PID")
		}
		ownerPID = pid
		inspector = parentInspector{Inspector: inspector, parent: ownerPID}
	}
	manager, refusal, err := common.open(inspector)
	if err != nil {
		return err
	}
	if !refusal.IsZero() {
		out := acquireJSON{Result: "refused", Namespace: manager.Namespace(), Reclaimed: []reclaimJSON{}, Refusal: refusalOf(manager.Namespace(), refusal)}
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	request := defaultRequest(manager.Namespace(), ownerPID, *sessionID, *sessionFile)
	result, err := manager.Acquire(context.Background(), request)
	if err != nil {
		return err
	}
	if err := printJSON(stdout, acquireOf(manager.Namespace(), result)); err != nil {
		return err
	}
	return codeOrNil(acquireCode(result.Kind))
}

func defaultRequest(namespace string, ownerPID int, sessionID, sessionFile string) lease.AcquireRequest {
	if sessionID == "" {
		sessionID = fmt.Sprintf("leasereal-%d", ownerPID)
	}
	if sessionFile == "" {
		sessionFile = filepath.Join(namespace, "leasereal.session")
	}
	return lease.AcquireRequest{SessionID: sessionID, SessionFile: sessionFile}
}

func codeOrNil(code int) error {
	if code == exitOK {
		return nil
	}
	return &codeError{code: code}
}

type releaseJSON struct {
	Result    string       `json:"result"` // released | not-owner | refused
	Namespace string       `json:"namespace"`
	Why       string       `json:"why,omitempty"`
	Owner     *ownerJSON   `json:"owner,omitempty"`
	Refusal   *refusalJSON `json:"refusal,omitempty"`
}

func releaseOf(namespace string, result lease.ReleaseResult) releaseJSON {
	out := releaseJSON{Result: result.Kind.String(), Namespace: namespace, Why: result.Why, Refusal: refusalOf(namespace, result.Refusal)}
	if result.Owner != nil {
		out.Owner = ownerOf(*result.Owner)
	}
	return out
}

func releaseCode(kind lease.ReleaseKind) int {
	switch kind {
	case lease.Released:
		return exitOK
	case lease.NotOwner:
		return exitConflict
	case lease.ReleaseRefused:
		return exitRefused
	}
	panic(fmt.Sprintf("leasereal: release kind %v", kind))
}

func cmdRelease(args []string, stdout io.Writer) error {
	flags := newFlagSet("release")
	var common leaseFlags
	common.register(flags)
	generation := flags.String("generation", "", "the generation to release (the release capability)")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 || *generation == "" {
		return usagef("release needs --generation and no arguments")
	}
	manager, refusal, err := common.open(osenv.NewInspector())
	if err != nil {
		return err
	}
	if !refusal.IsZero() {
		out := releaseJSON{Result: "refused", Namespace: manager.Namespace(), Refusal: refusalOf(manager.Namespace(), refusal)}
		return errors.Join(printJSON(stdout, out), &codeError{code: exitRefused})
	}
	result, err := manager.Release(context.Background(), *generation)
	if err != nil && result.Kind != lease.Released {
		return err
	}
	if printErr := printJSON(stdout, releaseOf(manager.Namespace(), result)); printErr != nil {
		return printErr
	}
	if err != nil { // released, but a leftover remains; a later call removes it
		return &codeError{code: exitOK, err: err}
	}
	return codeOrNil(releaseCode(result.Kind))
}

type inspectJSON struct {
	surfaceJSON
	State      string     `json:"state"` // empty | owned | corrupt | refused
	Namespace  string     `json:"namespace"`
	Owner      *ownerJSON `json:"owner,omitempty"`
	Diagnostic string     `json:"diagnostic,omitempty"`
	Human      string     `json:"human,omitempty"`
	// Blockers are the entries that make every run refuse until an
	// operator resolves them (lease.Projection.Blockers), each with the
	// command that does; OperatorNeeded says whether there is any.
	Blockers []blockerJSON `json:"blockers"`
	Refusal  *refusalJSON  `json:"refusal,omitempty"`
}

// blockerJSON is one lease.Blocker.
type blockerJSON struct {
	Kind       string `json:"kind"` // receiver-lock | lifecycle-guard | reclaim-intent | epoch-counter
	Path       string `json:"path"`
	Human      string `json:"human"`
	Diagnostic string `json:"diagnostic"`
	Generation string `json:"generation,omitempty"`
	// ProvenEpoch and ProvenBy (epoch-counter only): the highest epoch
	// the namespace can still prove issued and the file proving it;
	// EpochUnproven: nothing proves it (lease.Blocker).
	ProvenEpoch   uint64 `json:"provenEpoch,omitempty"`
	ProvenBy      string `json:"provenBy,omitempty"`
	EpochUnproven bool   `json:"epochUnproven,omitempty"`
	Operator      string `json:"operator"`
}

// projectionOf is the inspect JSON of a projection.
func projectionOf(namespace string, projection lease.Projection) inspectJSON {
	out := inspectJSON{State: projection.Kind.String(), Namespace: namespace,
		Diagnostic: projection.Diagnostic, Human: string(projection.Human), Blockers: []blockerJSON{}}
	if projection.Kind == lease.Owned {
		out.Owner = ownerOf(projection.Owner)
	}
	var operators []operatorJSON
	for _, blocker := range projection.Blockers {
		out.Blockers = append(out.Blockers, blockerOf(namespace, blocker))
		operators = append(operators, operatorJSON{Path: blocker.Path, Why: blocker.Diagnostic,
			Command: forceCommand(namespace, blocker)})
	}
	out.surfaceJSON = newSurface("lease", projectionVerdict(projection), operators)
	return out
}

// projectionVerdict is the verdict of a lease namespace as read: inspect
// does not judge the owner's liveness, so an owner record is "held" (a
// run reclaims it if its holder is provably gone).
func projectionVerdict(projection lease.Projection) verdict {
	switch {
	case len(projection.Blockers) > 0:
		return verdictOperator
	case projection.Kind == lease.Owned:
		return verdictHeld
	}
	return verdictFree
}

func blockerOf(namespace string, blocker lease.Blocker) blockerJSON {
	return blockerJSON{Kind: string(blocker.Kind), Path: blocker.Path, Human: string(blocker.Human),
		Diagnostic: blocker.Diagnostic, Generation: blocker.Generation, ProvenEpoch: blocker.ProvenEpoch,
		ProvenBy: blocker.ProvenBy, EpochUnproven: blocker.EpochUnproven, Operator: forceCommand(namespace, blocker)}
}

// forceCommand is the `leasereal reclaim` command line that resolves a
// blocker (with every other blocker of the namespace, in order).
func forceCommand(namespace string, blocker lease.Blocker) string {
	command := "leasereal reclaim --dir " + namespace + " --force"
	if blocker.Generation != "" {
		command += " --generation " + blocker.Generation
	}
	if blocker.Kind == lease.BlockerReceiver && blocker.Generation == "" {
		command += " --holder-may-run (only after checking that no holder still runs: see reclaim's dry run)"
	}
	if blocker.Kind == lease.BlockerEpoch {
		command += leasecli.EpochFloorAdvice(blocker)
	}
	return command
}

// refusedInspection is the inspect JSON of a namespace that cannot be read
// safely: state "refused", exit 3, as run and acquire refuse it.
func refusedInspection(namespace string, refusal lease.Refusal) inspectJSON {
	return inspectJSON{surfaceJSON: newSurface("lease", verdictRefused, leaseRefusalOperators(namespace, refusal)),
		State: "refused", Namespace: namespace, Blockers: []blockerJSON{}, Refusal: refusalOf(namespace, refusal)}
}

// inspectNamespace is the projection of the namespace, or its refusal
// (Inspect's *lease.RefusalError, or namespaceRefusal's).
func inspectNamespace(manager *lease.Manager, refusal lease.Refusal) (lease.Projection, lease.Refusal, error) {
	if !refusal.IsZero() {
		return lease.Projection{}, refusal, nil
	}
	projection, err := manager.Inspect(context.Background())
	var refused *lease.RefusalError
	if errors.As(err, &refused) {
		return lease.Projection{}, refused.Refusal, nil
	}
	return projection, lease.Refusal{}, err
}

func cmdInspect(args []string, stdout io.Writer) error {
	flags := newFlagSet("inspect")
	var common leaseFlags
	common.register(flags)
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		return usagef("inspect takes no arguments")
	}
	manager, refusal, err := common.open(osenv.NewInspector())
	if err != nil {
		return err
	}
	projection, refusal, err := inspectNamespace(manager, refusal)
	if err != nil {
		return err
	}
	if !refusal.IsZero() {
		return printInspection(stdout, verdictRefused, refusedInspection(manager.Namespace(), refusal))
	}
	out := projectionOf(manager.Namespace(), projection)
	return printInspection(stdout, out.Verdict, out)
}
