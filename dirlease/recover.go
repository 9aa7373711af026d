package dirlease

import (
	"context"
	"path"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// Report counts what Recover did with each claim. A claim whose directory
// was already gone (and not published) is released without being counted,
// as in the original.
type Report struct {
	// Recovered: directories removed (including interrupted quarantines).
	Recovered int
	// Published: bundle stages found published at their output root.
	Published int
	// Active: claims whose owner (or running child) is live.
	Active int
	// Indeterminate: claims whose owner cannot be inspected, or whose
	// launching window has not passed.
	Indeterminate int
	// Replaced: claims released without removing anything, because their
	// path holds another directory than the one they recorded (theirs was
	// removed, and the path made again). The original implementations
	// failed the whole pass on such a claim.
	Replaced int
}

// Disposition is the original's verdict on one claim.
type Disposition string

const (
	DispositionActive        Disposition = "active"
	DispositionIndeterminate Disposition = "indeterminate"
	DispositionRecoverable   Disposition = "recoverable"
)

// clocks is what a recovery pass knows of time: the wall clock (Unix ms),
// the boot clock (ms, NoBootTime without one) and this host's boot digest,
// all read once at the start of the pass.
type clocks struct {
	wallMs, bootMs int64
	boot           string
}

// launchWindowPassed reports whether a launching claim's window is over.
//
// The window must hold under wall-clock steps both ways, and the judge is
// another process than the creator, so it is measured on the one clock
// every process of a boot shares and no step moves: the boot clock. The
// claim records the creator's reading (createdAtBootMs) in the owner's boot
// (owner.bootId). Then:
//   - the judge is provably in another boot: every process of the claim's
//     boot is gone, the child it may have been launching too: passed;
//   - the judge is provably in the owner's boot and both readings exist:
//     passed once more than the window elapsed (strictly more: the
//     millisecond readings are truncated, so this never ends early);
//   - otherwise (a boot that cannot be told, no boot clock on either side)
//     nothing shows that the window passed: not passed, until a reboot is
//     provable or an operator acts.
//
// A legacy claim (schema 2 or 3) has no boot-clock reading: it keeps the
// original implementations' wall-clock rule, now >= recoverAfterMs.
func launchWindowPassed(claim Claim, at clocks) bool {
	if claim.Legacy() {
		return at.wallMs >= claim.RecoverAfterMs
	}
	if statecas.ProvablyOtherBoot(claim.Owner.BootID, at.boot) {
		return true
	}
	sameBoot := claim.Owner.BootID == at.boot && at.boot != statecas.UnknownBootDigest
	if !sameBoot || claim.CreatedAtBootMs == NoBootTime || at.bootMs == NoBootTime {
		return false
	}
	return at.bootMs-claim.CreatedAtBootMs > claim.LaunchWindowMs()
}

// dispose is the original's recovery decision for one claim, rule for rule,
// but one: a live owner is active, an uninspectable one indeterminate; then a
// raw-working lease is judged by its phase (preparing and settled are
// recoverable; running follows its child; launching waits for its window,
// launchWindowPassed), and a bundle-stage lease of a dead owner is
// recoverable.
//
// The exception: a running lease whose owner cannot be inspected but whose
// recorded child is alive is active, not indeterminate. The original let
// the owner's unknown status decide before the child was looked at; that
// kept recovery away just the same (indeterminate is left alone too), but
// Inspect then called the claim operator-needed and leasereal printed its
// quarantine command while the child still ran in the directory, and
// Quarantine would have moved it, letting a next run start beside the
// child. Only the report's count moves, from Indeterminate to Active.
func dispose(claim Claim, at clocks, status func(statecas.Owner) statecas.Status) Disposition {
	switch status(claim.Owner) {
	case statecas.StatusLive:
		return DispositionActive
	case statecas.StatusUnknown:
		if childRuns(claim, status) {
			return DispositionActive
		}
		return DispositionIndeterminate
	}
	if claim.Role != RoleRawWorking {
		return DispositionRecoverable
	}
	switch {
	case claim.Phase == PhasePreparing || claim.Phase == PhaseSettled:
		return DispositionRecoverable
	case claim.Phase == PhaseRunning && claim.ChildOwner != nil:
		switch status(*claim.ChildOwner) {
		case statecas.StatusLive:
			return DispositionActive
		case statecas.StatusUnknown:
			return DispositionIndeterminate
		}
		return DispositionRecoverable
	case launchWindowPassed(claim, at):
		return DispositionRecoverable
	}
	return DispositionIndeterminate
}

// childRuns reports whether claim is a running raw-working lease whose
// recorded child is alive: its directory is in use whatever its owner's
// status.
func childRuns(claim Claim, status func(statecas.Owner) statecas.Status) bool {
	return claim.Role == RoleRawWorking && claim.Phase == PhaseRunning && claim.ChildOwner != nil &&
		status(*claim.ChildOwner) == statecas.StatusLive
}

type parsedClaim struct {
	claim Claim
	file  string
	sha   string
}

// Recover inspects every claim and removes the directories of dead owners.
// It fails closed: every claim file is read and validated (name, schema,
// canonical bytes, size) before anything is removed, so one bad file stops
// the whole recovery with nothing deleted; a directory that is not the
// recorded one stops it too. A claim file that vanished between the
// listing and its read (ENOENT: released meanwhile) is no bad file: it is
// skipped, uncounted, as a claim gone before its judgment is. ctx is honoured before the pass and between
// claims: a cancelled pass returns ctx.Err() with the report so far, each
// claim either recovered whole or untouched.
func Recover(ctx context.Context, config Config) (report Report, err error) {
	defer func() { err = label(config, err) }()
	const message = "directory lease recovery failed safely"
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	current, err := currentIdentity(config)
	if err != nil {
		return Report{}, err
	}
	uid := uint32(current.UID)
	at := clocks{wallMs: nowMs(config), bootMs: bootMs(config), boot: statecas.BootDigest(current.BootID)}
	if at.wallMs < 0 || at.wallMs > safeIntegerMax {
		return Report{}, fail(ErrInvalidRequest, "", "directory recovery time is invalid", nil)
	}
	root, err := statecas.EnsurePrivateDir(config.Env(uid), uid, config.StateHome, RootDir...)
	if err != nil {
		return Report{}, wrapUnexpected(err, config.StateHome, message)
	}
	claims, err := readClaims(config, uid, root)
	if err != nil {
		return Report{}, wrapUnexpected(err, root, message)
	}
	status := func(owner statecas.Owner) statecas.Status {
		return statecas.OwnerStatus(owner, current, config.Inspector).Status
	}
	judge := func(claim Claim) Disposition { return dispose(claim, at, status) }
	for _, parsed := range claims {
		if err := ctx.Err(); err != nil {
			return report, err
		}
		if err := recoverOne(config, uid, parsed, judgeInPass(parsed.file, claims, judge), &report); err != nil {
			return report, wrapUnexpected(err, parsed.file, message)
		}
	}
	return report, nil
}

// readClaims snapshots the claim directory (recovering orphaned mutation
// claims), reads every claim in batches of ClaimsMax bound to the
// directory's identity, and validates all of them.
//
// The original implementation's recovery refused a directory of more than ClaimsMax entries
// outright (its MAX_CLAIMS), while its Create never looked: every killed
// creator added a claim that only a recovery removes, so a state home past
// the bound stayed there, every pass refused and every Create added more.
// Create now refuses at the bound (checkRoom), and a pass reads up to the
// listing bound Inspect reads (inspectEntriesMax), so a directory a few
// claims past ClaimsMax (Creates racing for the last room, or claims left
// by an older version) is recovered. Every claim is read before any is
// judged: a claim is recovered only if no other claim holds its directory
// (judgeInPass), whichever batch that claim is in.
func readClaims(config Config, uid uint32, root string) ([]parsedClaim, error) {
	snapshot, err := statecas.Snapshot(config.Env(uid), uid, root,
		statecas.SnapshotOptions{EntriesMax: inspectEntriesMax, RecoverOrphanedClaims: true})
	if statecas.KindOf(err) == statecas.ErrBound {
		return nil, overListing(config, root, err)
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(snapshot.Entries))
	for _, entry := range snapshot.Entries {
		id, isJSON := strings.CutSuffix(entry.Name, ".json")
		if !entry.IsRegular() || !isJSON || !statefile.IsUUIDv4(id) {
			return nil, fail(ErrCorrupt, fspath.Join(root, entry.Name), "directory lease collection contains an unsupported entry", nil)
		}
		names = append(names, entry.Name)
	}
	claims := make([]parsedClaim, 0, len(names))
	for start := 0; start < len(names); start += ClaimsMax {
		batch, err := readBatch(config, uid, root, names[start:min(start+ClaimsMax, len(names))], snapshot.Identity)
		if err != nil {
			return nil, err
		}
		claims = append(claims, batch...)
	}
	return claims, nil
}

// readBatch reads and validates at most ClaimsMax claims of one snapshot.
func readBatch(config Config, uid uint32, root string, names []string, identity lease.FileIdentity) ([]parsedClaim, error) {
	files, err := statecas.ReadBatch(config.Env(uid), uid, root, names, statecas.BatchLimits{
		BytesPerFileMax: ClaimBytesMax, BytesTotalMax: ClaimBytesMax * int64(max(1, len(names))),
	}, identity)
	if statecas.KindOf(err) == statecas.ErrBound {
		return nil, fail(ErrCorrupt, root, "directory lease exceeds its size bound", err)
	}
	if err != nil {
		return nil, err
	}
	claims := make([]parsedClaim, 0, len(files))
	for _, file := range files {
		full := fspath.Join(root, file.Name)
		if !file.Present {
			// Released (or moved away by an operator) since the listing:
			// the claim is gone, there is nothing of it to recover, and
			// stopping here would delay every other claim's recovery.
			continue
		}
		claim, err := Parse(file.Content, file.Name, full)
		if err != nil {
			return nil, err
		}
		claims = append(claims, parsedClaim{claim: claim, file: full, sha: statefile.SHA256Hex(file.Content)})
	}
	return claims, nil
}

// rejudgesMax bounds how often recovery judges one claim again after it
// changed between its judgment and the mutation claim.
const rejudgesMax = 4

// recoverOne judges one claim and recovers it if it is recoverable. The
// directory is removed, and the claim file after it, under the claim file's
// mutation claim and only while the file still holds the judged bytes
// (statecas.RemoveIfUnchangedAfter): an owner's Update or Release, or
// another recoverer, cannot interleave. A judgment made on a copy that has
// since changed is never acted on: the claim is read again and judged
// again (a claim that is gone was released and is not counted).
func recoverOne(config Config, uid uint32, parsed parsedClaim, judge func(Claim) Disposition, report *Report) error {
	for judged := 0; judged < rejudgesMax; judged++ {
		switch judge(parsed.claim) {
		case DispositionActive:
			report.Active++
			return nil
		case DispositionIndeterminate:
			report.Indeterminate++
			return nil
		}
		released, err := statecas.RemoveIfUnchangedAfter(config.Env(uid), parsed.file, parsed.sha, func() error {
			return removeRecorded(config, uid, parsed.claim, report)
		})
		if err != nil || released {
			return err
		}
		next, present, err := rereadClaim(config, uid, parsed.file)
		if err != nil || !present {
			return err
		}
		parsed = next
	}
	return fail(ErrChanged, parsed.file, "directory lease changed before recovery release", nil)
}

// rereadClaim reads and validates one claim again, as readClaims does.
func rereadClaim(config Config, uid uint32, file string) (parsedClaim, bool, error) {
	content, present, err := statecas.ReadIfPresent(config.Env(uid), file, ClaimBytesMax)
	if statecas.KindOf(err) == statecas.ErrBound {
		return parsedClaim{}, false, fail(ErrCorrupt, file, "directory lease exceeds its size bound", err)
	}
	if err != nil || !present {
		return parsedClaim{}, false, err
	}
	claim, err := Parse(content, path.Base(file), file)
	if err != nil {
		return parsedClaim{}, false, err
	}
	return parsedClaim{claim: claim, file: file, sha: statefile.SHA256Hex(content)}, true, nil
}

// removeRecorded removes the directory of a recoverable claim, bound to its
// recorded identity, and counts it. It runs under the claim file's mutation
// claim, with the claim file verified unchanged.
func removeRecorded(config Config, uid uint32, claim Claim, report *Report) error {
	parentIdentity, err := physicalIdentity(config, uid, claim.ParentPath, false)
	if err != nil {
		return err
	}
	if parentIdentity != claim.ParentIdentity {
		return fail(ErrChanged, claim.ParentPath, "directory lease parent changed before recovery", nil)
	}
	currentIdentity, err := identityIfPresent(config, uid, claim.Path)
	if err != nil {
		return err
	}
	if currentIdentity != nil && *currentIdentity != claim.DirectoryIdentity {
		// The claim's directory is gone from its path, and another one
		// (which no claim of this owner names: a user's mkdir after an
		// earlier recovery removed the first) sits there. Nothing of the
		// dead owner is left to remove, and the other directory is not its
		// to touch: the claim is released as when its target is absent.
		// Failing here would fail every pass and leave the path busy for
		// good (a wedged state home).
		return releaseReplaced(config, uid, claim, report)
	}
	// With the target absent, RemoveTree completes an interrupted
	// identity-bound quarantine when one is present.
	removed, err := statecas.RemoveTree(config.Env(uid), claim.Path, claim.DirectoryIdentity.FileIdentity())
	if statecas.KindOf(err) == statecas.ErrChanged {
		return fail(ErrChanged, claim.Path, "directory lease target changed before recovery", err)
	}
	if err != nil {
		return err
	}
	if removed || currentIdentity != nil {
		report.Recovered++
	} else if claim.OutputRoot != "" {
		return countPublished(config, uid, claim, report)
	}
	return nil
}

// releaseReplaced is removeRecorded's verdict on a claim whose path holds
// another directory than the one it recorded: nothing is removed, a
// published output is counted, and the caller releases the claim file.
func releaseReplaced(config Config, uid uint32, claim Claim, report *Report) error {
	report.Replaced++
	if claim.OutputRoot != "" {
		return countPublished(config, uid, claim, report)
	}
	return nil
}

func countPublished(config Config, uid uint32, claim Claim, report *Report) error {
	output, err := identityIfPresent(config, uid, claim.OutputRoot)
	if err != nil {
		return err
	}
	if output != nil && *output != claim.DirectoryIdentity {
		return fail(ErrChanged, claim.OutputRoot, "directory lease output changed before recovery", nil)
	}
	if output != nil {
		report.Published++
	}
	return nil
}
