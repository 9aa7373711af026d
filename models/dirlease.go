package models

import (
	"fmt"
)

// The directory lease model (engine `dirlease`): claims on private working
// directories, and recovery of abandoned ones.
//
// State: the claims, sorted by Path (see dirWorld). A claim
// is keyed by the Path of its directory (every DirCreate names a fresh
// path) and records what the claim file says (claim ID, role, phase, owner,
// child, recoverAfterMs) beside the ground truth the engine can only
// inspect: whether the owner and child are alive, and what is at the path
// now (the claimed directory, another directory swapped in by a rename
// race, nothing, or, for a bundle stage, nothing because it was published
// to its output root).
//
// Recovery crosses every claim, so the model is not partitioned. Unlike the
// lease and admission models it is deterministic: an unknown outcome marks
// the claim "maybe gone" or adds a possible content to it, instead of
// forking whole states (their number multiplied with every crash and made
// checks take seconds). The marks are per claim, which only forgets
// correlations between claims: sound, slightly weaker.
//
// Legal outcomes at the linearization point:
//
//	Create     created(id)        no claim on Path.
//	Update     invalid            iff DirTransitionValid says no (the caller's
//	                              view; no effect).
//	           ok                 the claim file may hold the caller's claim
//	                              with FromPhase and FromChild.
//	           changed            it may not (the state keeps what it may hold).
//	Release    released / changed  as for Update; released removes the claim
//	                              file (the directory stays with its owner).
//	Use        present / foreign / missing: what is at Path while a claim on
//	           Path exists (missing also allowed if the claim may be gone);
//	           untracked otherwise.
//	Recover    succeeded(counts)  some set S of claims was recovered, each
//	                              "recoverable" (below) and not foreign; a
//	                              claim in S with its directory present adds
//	                              to Recovered, published adds to Published,
//	                              absent adds to Recovered or nothing. Every
//	                              claim in S is removed, with its directory.
//	                              A claim in some explaining S but not all
//	                              becomes "maybe gone".
//	           (never while a claim file holds another claim's bytes:
//	           DirClaimSwap, until DirClaimReturn; the pass fails closed)
//	           failed / unknown   any recoverable claim not foreign becomes
//	                              "maybe gone" (its directory too).
//
// A claim is recoverable, following the original's recovery on ground truth:
// its owner is dead and it is a bundle stage, or a raw working directory
// that is preparing or settled, running with a dead child, or launching
// with NowMs >= RecoverAfterMs. A recovery that removes anything else is the
// bug "a live directory removed": it shows as counts no legal S explains,
// or as a later Use, Update or Release that finds the claim or directory
// gone. A foreign directory (another identity) must never be removed.
//
// What the model does not check:
//   - the Active and Indeterminate counts. Recovery reads the claim files in
//     one batch and then inspects each owner at its own instant, while
//     claims are released and owners die; no single instant explains those
//     two counts in general, and they have no effect;
//   - completeness: a pass may leave a recoverable claim (the inspector may
//     answer "unknown"); liveness is the simulator's check;
//   - the path of a phantom (a maybe-gone claim of a dead owner, see
//     dirWorld) is untracked, and a pass may count a phantom any way;
//   - a recovery is linearized at one instant. A rename race on one claim's
//     path between the instants the pass handles two claims could, in
//     principle, make a correct pass look wrong; none has been seen in the
//     generated histories.

// DirRole is the role of a directory lease.
type DirRole uint8

const (
	RoleRawWorking DirRole = iota + 1
	RoleBundleStage
)

func (r DirRole) String() string {
	switch r {
	case RoleRawWorking:
		return "raw-working"
	case RoleBundleStage:
		return "bundle-stage"
	}
	return fmt.Sprintf("DirRole(%d)", int(r))
}

// DirPhase is the lifecycle phase of a raw working directory lease.
type DirPhase uint8

const (
	DirPreparing DirPhase = iota + 1
	DirLaunching
	DirRunning
	DirSettled
)

func (p DirPhase) String() string {
	switch p {
	case DirPreparing:
		return "preparing"
	case DirLaunching:
		return "launching"
	case DirRunning:
		return "running"
	case DirSettled:
		return "settled"
	}
	return fmt.Sprintf("DirPhase(%d)", int(p))
}

// DirTransitionValid is the original's transition table
// (updateBeeperMessageLikeMeDirectoryLease), restated for the model: only a
// raw working lease changes phase; launching from preparing or settled,
// running from launching, settled from launching or running; a child
// process is given exactly when entering running.
func DirTransitionValid(role DirRole, current, next DirPhase, child bool) bool {
	if role != RoleRawWorking || child != (next == DirRunning) {
		return false
	}
	switch next {
	case DirLaunching:
		return current == DirPreparing || current == DirSettled
	case DirRunning:
		return current == DirLaunching
	case DirSettled:
		return current == DirLaunching || current == DirRunning
	}
	return false
}

// DirCreate is the input of a directory lease creation on Path (a
// directory the caller made beforehand).
type DirCreate struct {
	Proc           int
	Host           string
	Path           string
	Role           DirRole
	RecoverAfterMs int64
}

// DirCreateResult is the output of a creation (or Unknown{}).
type DirCreateResult struct {
	ClaimID string
}

// DirUpdate is the input of a phase change, as the caller's handle sees
// the claim. Child is the child process recorded when entering running
// (0 = none); FromChild the one the handle holds.
type DirUpdate struct {
	Proc      int
	Path      string
	ClaimID   string
	Role      DirRole
	FromPhase DirPhase
	ToPhase   DirPhase
	FromChild int
	Child     int
	ChildHost string
	// childFate is filled by CheckDirLease from the history: whether Child
	// had already died, or died while this update ran.
	childFate childFate
}

type childFate uint8

const (
	childAliveAtReturn childFate = iota
	childDeadBeforeCall
	childDiedDuring
)

// DirUpdateResult is the output of a phase change (or Unknown{}).
type DirUpdateResult struct {
	Kind CASKind
}

// DirRelease is the input of a release, as the caller's handle sees the
// claim.
type DirRelease struct {
	Proc    int
	Path    string
	ClaimID string
	Phase   DirPhase
	Child   int
}

// DirReleaseResult is the output of a release (or Unknown{}); CASOK means
// released. Release never answers CASInvalid.
type DirReleaseResult struct {
	Kind CASKind
}

// DirRecover is the input of a recovery pass judged at time NowMs: the
// instant its launching windows are judged at, in the recorder's time
// (the engine measures windows on the boot clock, which no wall-clock step
// moves; a recorder makes NowMs jump past every window at a reboot). The
// original took this instant as its nowMs parameter; the engine reads it
// from its Clock, which the recorder fixes for the pass.
type DirRecover struct {
	Proc  int
	Host  string
	NowMs int64
}

// DirRecoverResult is the output of a recovery pass (or Unknown{}).
// Failed: the pass stopped with an error (after possibly recovering some
// claims); the counts are then ignored. ReadSwapped is ground truth the
// history records, not something the engine reports: the pass opened a
// claim file while it held another claim's bytes (DirClaimSwap). A pass
// reads each claim at its own instant and judges later, so whether it met
// a swapped claim is a fact of those instants, not of the one instant the
// pass is placed at.
type DirRecoverResult struct {
	Failed        bool
	Recovered     int
	Published     int
	Active        int
	Indeterminate int
	ReadSwapped   bool
}

// DirUse is the input of "Proc looks at Path" (stat and identity check),
// done by the owner, its child, or a co-tenant whose directory was swapped
// in. It is how a removed live directory becomes visible in the history.
type DirUse struct {
	Proc int
	Path string
}

// DirUseKind is what DirUse found at the path.
type DirUseKind uint8

const (
	// UsePresent: the claimed directory (same device, inode, birth time).
	UsePresent DirUseKind = iota + 1
	// UseForeign: a directory with another identity.
	UseForeign
	// UseMissing: nothing.
	UseMissing
)

// DirUseResult is the output of DirUse.
type DirUseResult struct {
	Kind DirUseKind
}

// DirSwap is the environment event "a rename race put another directory at
// Path" (the claimed one moved away).
type DirSwap struct{ Path string }

// DirPublish is the environment event "the bundle stage at Path was renamed
// to its output root" (the owner's publication step).
type DirPublish struct{ Path string }

// DirRemove is the environment event "the directory at Path was removed"
// (by its owner, or externally).
type DirRemove struct{ Path string }
