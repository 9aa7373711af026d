package dirlease

import (
	"context"
	"path"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
)

// The operator path. Recover fails closed on a claim file it cannot read as
// a claim (one bad file stops every pass) and leaves alone a claim it cannot
// prove recoverable (an owner that cannot be inspected; a launching lease
// whose window cannot be proven over, without a boot clock or with an
// unknown boot). Only an operator, or a reboot for the latter, changes
// that. Inspect reports every entry; Quarantine moves one claim file,
// never deleting it, into QuarantineDir. The leased directory itself is
// left where it is, for the operator.

// QuarantineDir is the operator's quarantine for claim files, a sibling of
// the claim directory (which must hold claims only); a leasekit addition,
// the original has no operator path.
var QuarantineDir = []string{"recovery", "beeper-message-like-me-directory-leases.quarantine"}

// DispositionCorrupt is Inspect's verdict on an entry of the claim
// directory that is not a valid claim: Recover refuses to run until an
// operator quarantines it.
const DispositionCorrupt Disposition = "corrupt"

// inspectEntriesMax bounds Inspect's listing: more than Recover's bound
// (ClaimsMax), so that an over-full collection can be seen and resolved.
const inspectEntriesMax = 16 * ClaimsMax

// quarantineSuffixMax bounds the part of a quarantine name taken from the
// entry's name.
const quarantineSuffixMax = 128

// ClaimState is one entry of the claim directory as Inspect found it.
type ClaimState struct {
	// Name is the entry's base name, Path its full path.
	Name, Path string
	// ContentSHA256 is the SHA-256 of the file's bytes: the token Quarantine
	// must be given. "" for an entry that is not a readable regular file.
	ContentSHA256 string
	// Claim is the parsed claim, nil when Disposition is DispositionCorrupt.
	Claim *Claim
	// Disposition is what Recover would make of it now.
	Disposition Disposition
	// Problem says why a corrupt entry is refused.
	Problem string
	// OperatorNeeded reports that Recover will not resolve the entry: it is
	// corrupt, or indeterminate for a reason no time resolves within this
	// boot (an uninspectable owner or child, a window without a boot-clock
	// proof).
	OperatorNeeded bool
}

// Inspect lists the claim directory and judges each entry as Recover would,
// without changing anything (orphaned mutation machinery is not cleared).
// A missing claim directory is an empty list.
func Inspect(ctx context.Context, config Config) (states []ClaimState, err error) {
	defer func() { err = label(config, err) }()
	states, _, err = inspect(ctx, config)
	return states, err
}

// inspect is Inspect, with the clocks it judged by.
func inspect(ctx context.Context, config Config) ([]ClaimState, clocks, error) {
	if err := ctx.Err(); err != nil {
		return nil, clocks{}, err
	}
	current, err := currentIdentity(config)
	if err != nil {
		return nil, clocks{}, err
	}
	uid := uint32(current.UID)
	root := claimRoot(config)
	// The state home and the claim directory's path first, as Create and
	// Recover check them: a home they refuse (missing, group-writable, a
	// symlink, a part not 0700) is that same refusal here, never "no
	// claims", so an operator is not told "free" of a home where nothing
	// can be created, nor sent to commands that cannot run.
	complete, err := statecas.CheckPrivateDirs(config.Env(uid), uid, config.StateHome, RootDir...)
	if err != nil {
		return nil, clocks{}, wrapUnexpected(err, config.StateHome, "directory lease collection could not be inspected safely")
	}
	if !complete {
		return nil, clocks{}, nil
	}
	snapshot, err := statecas.Snapshot(config.Env(uid), uid, root, statecas.SnapshotOptions{EntriesMax: inspectEntriesMax})
	if err != nil {
		return nil, clocks{}, wrapUnexpected(err, root, "directory lease collection could not be inspected safely")
	}
	at := clocks{wallMs: nowMs(config), bootMs: bootMs(config), boot: statecas.BootDigest(current.BootID)}
	status := func(owner statecas.Owner) statecas.Status {
		return statecas.OwnerStatus(owner, current, config.Inspector).Status
	}
	var states []ClaimState
	for _, entry := range snapshot.Entries {
		state, err := inspectEntry(config, uid, root, entry, at, status)
		if err != nil {
			return nil, clocks{}, err
		}
		states = append(states, state)
	}
	judgeHeldElsewhere(states, func(claim Claim) Disposition { return dispose(claim, at, status) })
	return states, at, nil
}

// judgeHeldElsewhere gives a recoverable claim whose directory another claim
// holds that claim's disposition, as Recover judges it (judgeInPass).
func judgeHeldElsewhere(states []ClaimState, judge func(Claim) Disposition) {
	claims := make([]parsedClaim, 0, len(states))
	for _, state := range states {
		if state.Claim != nil {
			claims = append(claims, parsedClaim{claim: *state.Claim, file: state.Path})
		}
	}
	for i, state := range states {
		if state.Claim == nil || state.Disposition != DispositionRecoverable {
			continue
		}
		if held := heldElsewhere(state.Path, *state.Claim, claims, judge); held != "" {
			states[i].Disposition, states[i].OperatorNeeded = held, false
			states[i].Problem = "another claim names its directory: recovery leaves it while that claim holds it"
		}
	}
}

func claimRoot(config Config) string {
	return fspath.Join(append([]string{config.StateHome}, RootDir...)...)
}

func inspectEntry(config Config, uid uint32, root string, entry statecas.Entry, at clocks, status func(statecas.Owner) statecas.Status) (ClaimState, error) {
	state := ClaimState{Name: entry.Name, Path: fspath.Join(root, entry.Name), Disposition: DispositionCorrupt, OperatorNeeded: true}
	id, isJSON := strings.CutSuffix(entry.Name, ".json")
	if !entry.IsRegular() || !isJSON || !statefile.IsUUIDv4(id) {
		state.Problem = "directory lease collection contains an unsupported entry"
		if !entry.IsRegular() {
			return state, nil
		}
	}
	content, present, err := statecas.ReadIfPresent(config.Env(uid), state.Path, statecas.FileBytesMax)
	if err != nil {
		return ClaimState{}, wrapUnexpected(err, state.Path, "directory lease could not be inspected safely")
	}
	if !present {
		state.Problem = "directory lease changed during inspection"
		return state, nil
	}
	state.ContentSHA256 = statefile.SHA256Hex(content)
	if state.Problem != "" {
		return state, nil
	}
	if len(content) > ClaimBytesMax {
		state.Problem = "directory lease exceeds its size bound (" + strconv.Itoa(len(content)) + " bytes)"
		return state, nil
	}
	claim, err := Parse(content, entry.Name, state.Path)
	if err != nil {
		state.Problem = err.(*Error).Msg
		return state, nil
	}
	state.Claim, state.Problem = &claim, ""
	state.Disposition = dispose(claim, at, status)
	state.OperatorNeeded = state.Disposition == DispositionIndeterminate && !waitResolves(claim, at, status)
	return state, nil
}

// waitResolves reports whether an indeterminate claim becomes recoverable
// by itself within this boot: a launching lease of a dead owner whose
// window runs on a boot clock both sides can read.
func waitResolves(claim Claim, at clocks, status func(statecas.Owner) statecas.Status) bool {
	return launchWindowMeasurable(claim, at) && status(claim.Owner) == statecas.StatusDead
}

// launchWindowMeasurable reports whether claim is a launching lease whose
// window this judge can see end: on a boot clock both sides read, or, for
// a legacy claim, on the wall clock (the original's rule).
func launchWindowMeasurable(claim Claim, at clocks) bool {
	if claim.Role != RoleRawWorking || claim.Phase != PhaseLaunching {
		return false
	}
	if claim.Legacy() {
		return true
	}
	return claim.Owner.BootID == at.boot && at.boot != statecas.UnknownBootDigest &&
		claim.CreatedAtBootMs != NoBootTime && at.bootMs != NoBootTime
}

// launchWindowRunning reports whether claim is a launching lease whose
// window provably has not passed. Its owner's state does not enter: an
// owner found dead may have a child still starting in the directory, and
// one that cannot be inspected (EACCES on /proc, which may pass) may be
// that dead owner, so moving the claim away would let the child run in a
// directory nobody leases. A window nothing measures is not running here:
// only an operator (or a reboot) resolves that claim.
func launchWindowRunning(claim Claim, at clocks) bool {
	return launchWindowMeasurable(claim, at) && !launchWindowPassed(claim, at)
}

// Quarantined is what Quarantine moved.
type Quarantined struct {
	// Path is where the claim file now is.
	Path string
	// State is the entry as judged before the move.
	State ClaimState
}

// Quarantine is the operator's resolution of a claim Recover refuses or
// leaves: it moves the claim directory's entry name into QuarantineDir
// (never deleting it), provided its bytes still hash to contentSHA256 (the
// ClaimState.ContentSHA256 the operator judged; anything else is
// ErrChanged and nothing moves), under the file's mutation claim, and
// provided it is not active (a live owner or running child is ErrActive)
// and not inside a launching window that provably still runs, whatever
// its owner's inspection answered, nor a claim whose directory another
// claim holds (ErrWaiting: what Inspect says time resolves).
// The leased directory is not touched.
func Quarantine(ctx context.Context, config Config, name, contentSHA256 string) (moved Quarantined, err error) {
	defer func() { err = label(config, err) }()
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." || path.Base(name) != name {
		return Quarantined{}, fail(ErrInvalidRequest, name, "directory lease claim name is invalid", nil)
	}
	if !statefile.IsSHA256Hex(contentSHA256) {
		return Quarantined{}, fail(ErrInvalidRequest, fspath.Join(claimRoot(config), name),
			"the confirmation is not a SHA-256 (64 lowercase hex digits): "+strconv.QuoteToASCII(contentSHA256[:min(len(contentSHA256), 80)]), nil)
	}
	states, at, err := inspect(ctx, config)
	if err != nil {
		return Quarantined{}, err
	}
	var judged *ClaimState
	for i := range states {
		if states[i].Name == name {
			judged = &states[i]
		}
	}
	if err := judgeConfirmation(config, name, judged, contentSHA256); err != nil {
		return Quarantined{}, err
	}
	if judged.Disposition == DispositionActive {
		return Quarantined{}, fail(ErrActive, judged.Path, "directory lease is active", nil)
	}
	if judged.Claim != nil && launchWindowRunning(*judged.Claim, at) {
		return Quarantined{}, fail(ErrWaiting, judged.Path, waitingMessage(*judged), nil)
	}
	if judged.Disposition == DispositionIndeterminate && !judged.OperatorNeeded {
		// Inspect says time resolves it: another claim holds its
		// directory (judgeHeldElsewhere), and recovery takes it once that
		// claim ends. Quarantine refuses what Inspect tells the operator
		// to leave, so the two never disagree.
		return Quarantined{}, fail(ErrWaiting, judged.Path, "directory lease names a directory another claim holds; "+
			"recovery takes it once that claim ends", nil)
	}
	return quarantineEntry(config, *judged)
}

// judgeConfirmation refuses a Quarantine whose claim is absent or whose
// confirmation is not the claim file's SHA-256 now, saying which.
func judgeConfirmation(config Config, name string, judged *ClaimState, contentSHA256 string) error {
	path := fspath.Join(claimRoot(config), name)
	switch {
	case judged == nil:
		return fail(ErrChanged, path, "no directory lease claim has this name: nothing to quarantine", nil)
	case judged.ContentSHA256 == "":
		return fail(ErrChanged, path, "the entry is not a readable regular file: it has no SHA-256 to confirm", nil)
	case judged.ContentSHA256 != contentSHA256:
		return fail(ErrMismatch, path, "directory lease claim's SHA-256 is "+judged.ContentSHA256+", not the given "+
			contentSHA256+": inspect again and judge the file as it is now", ErrChanged)
	}
	return nil
}

// waitingMessage says why Quarantine refused a claim inside its launching
// window, and what resolves it once the window is over.
func waitingMessage(judged ClaimState) string {
	const window = "directory lease is inside its launching window (a child its owner was launching may still be starting); "
	if judged.OperatorNeeded {
		return window + "its owner could not be told dead: once the window is over, quarantine it if the owner is gone"
	}
	return window + "recovery takes it once the window is over"
}

func quarantineEntry(config Config, judged ClaimState) (Quarantined, error) {
	const message = "directory lease could not be quarantined safely"
	current, err := currentIdentity(config)
	if err != nil {
		return Quarantined{}, err
	}
	uid := uint32(current.UID)
	dir, err := statecas.EnsurePrivateDir(config.Env(uid), uid, config.StateHome, QuarantineDir...)
	if err != nil {
		return Quarantined{}, wrapUnexpected(err, config.StateHome, message)
	}
	// The entry's own name ends the quarantine name, cut so that the whole
	// stays within NAME_MAX (255 bytes).
	suffix := judged.Name[:min(len(judged.Name), quarantineSuffixMax)]
	target := fspath.Join(dir, strconv.FormatInt(config.Clock.Now().UnixMilli(), 10)+"."+config.IDs.NewID()+"."+suffix)
	done, err := statecas.MoveIfUnchanged(config.Env(uid), judged.Path, judged.ContentSHA256, target)
	if err != nil {
		return Quarantined{}, wrapUnexpected(err, judged.Path, message)
	}
	if !done {
		return Quarantined{}, fail(ErrChanged, judged.Path, "directory lease changed before quarantine", nil)
	}
	return Quarantined{Path: target, State: judged}, nil
}

// Full reports whether states, one Inspect of a claim directory, fill it
// to ClaimsMax entries: Create refuses (ErrFull) until a recovery, a
// release or an operator makes room. The claims of owners that are gone go
// with the next recovery pass (leasereal dirlease recover); each other
// entry is judged as usual (ClaimState.OperatorNeeded).
func Full(states []ClaimState) bool { return len(states) >= ClaimsMax }
