package leasecli

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/leasekit/leasekit/lease"
)

// ReclaimOptions are `leasereal reclaim`'s choices: a dry run, or a forced
// reclaim with the confirmations it needs.
type ReclaimOptions struct {
	// Force moves every target into quarantine/; without it nothing moves.
	Force bool
	// Confirmed are the generations confirmed (--generation G) of valid
	// records being reclaimed.
	Confirmed map[string]bool
	// EpochFloor, EpochUnproven: for an invalid epoch counter
	// (lease.ForceRequest.EpochFloor, EpochUnprovenConfirmed).
	EpochFloor    uint64
	EpochUnproven bool
	// HolderMayRun confirms forcing a receiver.lock whose holder cannot be
	// identified (lease.ForceRequest.HolderMayRunConfirmed).
	HolderMayRun bool
}

// ReclaimResult is reclaim's outcome.
type ReclaimResult string

// Reclaim's outcomes, as `leasereal reclaim` prints them.
const (
	// ReclaimNothing: nothing to move (exit 1).
	ReclaimNothing ReclaimResult = "nothing"
	// ReclaimDryRun: the targets, moved by a rerun with Force (exit 3).
	ReclaimDryRun ReclaimResult = "dry-run"
	// ReclaimRefused: a confirmation is missing, or ForceReclaim refused
	// a target; nothing after it moved (exit 3).
	ReclaimRefused ReclaimResult = "refused"
	// Reclaimed: something moved and nothing was refused (exit 0).
	Reclaimed ReclaimResult = "reclaimed"
)

// ReclaimOutcome is what reclaim did, target by target.
type ReclaimOutcome struct {
	Result ReclaimResult
	Why    string
	// Targets are the entries reclaim resolves, in ReclaimOrder; Forced
	// holds ForceReclaim's result for the first len(Forced) of them.
	Targets []lease.Blocker
	Forced  []lease.ForceResult
	// QuarantinePath is where receiver.lock went (else the first entry
	// moved).
	QuarantinePath string
}

// HolderMayRunAdvice is lease.UnidentifiedHolderAdvice with the flag that
// confirms.
const HolderMayRunAdvice = lease.UnidentifiedHolderAdvice + "; then rerun with --force --holder-may-run"

// Reclaim is the operator action of docs/ARCHITECTURE.md on a namespace
// whose projection the caller took: a forced reclaim, into quarantine, of
// every entry the engine refuses to touch by itself (projection.Blockers)
// and of an owned receiver.lock whose owner is not provably alive. Without
// opts.Force it is a dry run. A forced run missing a confirmation is
// refused before anything moves; otherwise each target goes through
// ForceReclaim in order, stopping at the first refusal (a later entry may
// depend on it: receiver.lock is forced under the guard). Nothing is
// deleted. An error leaves the outcome of the targets forced before it.
func Reclaim(ctx context.Context, m *lease.Manager, projection lease.Projection, opts ReclaimOptions) (ReclaimOutcome, error) {
	out := ReclaimOutcome{Targets: ReclaimTargets(m.Namespace(), projection)}
	switch {
	case len(out.Targets) == 0:
		out.Result, out.Why = ReclaimNothing, "no receiver.lock and nothing blocks the namespace"
		return out, nil
	case !opts.Force:
		out.Result, out.Why = ReclaimDryRun, "rerun with --force to move every entry listed in actions into quarantine/"
		if unidentifiedHolder(out.Targets) {
			out.Why += " (and --holder-may-run for receiver.lock: " + HolderMayRunAdvice + ")"
		}
		return out, nil
	}
	if why := missingConfirmation(out.Targets, opts); why != "" {
		out.Result, out.Why = ReclaimRefused, why
		return out, nil
	}
	return out, forceAll(ctx, m, &out, opts)
}

// forceAll resolves each target with ForceReclaim, in order, and stops at
// the first refusal.
func forceAll(ctx context.Context, m *lease.Manager, out *ReclaimOutcome, opts ReclaimOptions) error {
	moved := false
	for _, target := range out.Targets {
		result, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: target.Kind, Path: target.Path,
			Generation: target.Generation, EpochFloor: opts.EpochFloor,
			EpochUnprovenConfirmed: opts.EpochUnproven && target.Kind == lease.BlockerEpoch,
			HolderMayRunConfirmed:  opts.HolderMayRun && target.Kind == lease.BlockerReceiver})
		if err != nil {
			return err
		}
		out.Forced = append(out.Forced, result)
		if result.Kind == lease.ForceRefused {
			out.Result, out.Why = ReclaimRefused, fmt.Sprintf("%s %s: %s", target.Kind, target.Path, result.Why)
			return nil
		}
		if result.Kind == lease.ForceMoved {
			moved = true
			if out.QuarantinePath == "" || target.Kind == lease.BlockerReceiver {
				out.QuarantinePath = result.QuarantinePath
			}
		}
	}
	out.Result = Reclaimed
	if !moved {
		out.Result, out.Why = ReclaimNothing, "every entry was resolved meanwhile (see actions)"
	}
	return nil
}

// missingConfirmation says which flag a forced reclaim still needs, or "".
func missingConfirmation(targets []lease.Blocker, opts ReclaimOptions) string {
	for _, target := range targets {
		switch {
		case target.Generation != "" && !opts.Confirmed[target.Generation]:
			return fmt.Sprintf("%s is owned by generation %s: pass --generation %s to confirm",
				path.Base(target.Path), target.Generation, target.Generation)
		case unidentifiedHolder([]lease.Blocker{target}) && !opts.HolderMayRun:
			return "receiver.lock is corrupt: " + HolderMayRunAdvice
		case target.Kind == lease.BlockerEpoch && opts.EpochFloor == 0:
			return "the epoch counter is invalid: pass" + EpochFloorAdvice(target) +
				"; the counter becomes N, and the next lease gets N+1"
		case target.Kind == lease.BlockerEpoch && opts.EpochFloor < target.ProvenEpoch:
			return fmt.Sprintf("--epoch-floor %d is below epoch %d, which %s proves this namespace issued: "+
				"the next lease would get an epoch already issued; pass --epoch-floor %d or larger",
				opts.EpochFloor, target.ProvenEpoch, target.ProvenBy, target.ProvenEpoch)
		case target.Kind == lease.BlockerEpoch && target.EpochUnproven && !opts.EpochUnproven:
			return "no valid record of the highest epoch issued is left in this namespace: --epoch-floor is your word " +
				"alone; take it from your fenced resources (the largest epoch they saw), then rerun with --epoch-floor-unproven"
		}
	}
	return ""
}

// unidentifiedHolder reports whether a target is a receiver.lock whose
// holder nothing identifies (corrupt: no generation to confirm).
func unidentifiedHolder(targets []lease.Blocker) bool {
	return slices.ContainsFunc(targets, func(b lease.Blocker) bool {
		return b.Kind == lease.BlockerReceiver && b.Generation == ""
	})
}

// reclaimOrder is the order a namespace's blockers are resolved in: the
// guard first (receiver.lock and the epoch counter are forced under it),
// then the reclaim intents, receiver.lock, and the epoch counter.
var reclaimOrder = map[lease.BlockerKind]int{lease.BlockerGuard: 0, lease.BlockerIntent: 1, lease.BlockerReceiver: 2, lease.BlockerEpoch: 3}

// ReclaimTargets are the projection's blockers, plus an owned receiver.lock
// that is no blocker (a local owner: ForceReclaim refuses it while alive),
// in reclaimOrder.
func ReclaimTargets(namespace string, projection lease.Projection) []lease.Blocker {
	targets := slices.Clone(projection.Blockers)
	listed := slices.ContainsFunc(targets, func(b lease.Blocker) bool { return b.Kind == lease.BlockerReceiver })
	if !listed && projection.Kind != lease.Empty {
		receiver := lease.Blocker{Kind: lease.BlockerReceiver, Path: path.Join(namespace, "receiver.lock"),
			Human: projection.Human, Diagnostic: projection.Diagnostic}
		if projection.Kind == lease.Owned {
			receiver.Generation = projection.Owner.Generation
			receiver.Diagnostic = fmt.Sprintf("owned by pid %d on %s (generation %s)",
				projection.Owner.PID, projection.Owner.Hostname, projection.Owner.Generation)
		}
		targets = append(targets, receiver)
	}
	slices.SortStableFunc(targets, func(a, b lease.Blocker) int { return reclaimOrder[a.Kind] - reclaimOrder[b.Kind] })
	return targets
}

// EpochFloorAdvice is the --epoch-floor part of the command that forces a
// corrupt epoch file: the floor the namespace's evidence proves, or, when
// nothing proves one, the confirmation that the floor is the operator's.
func EpochFloorAdvice(blocker lease.Blocker) string {
	switch {
	case blocker.EpochUnproven:
		return " --epoch-floor N --epoch-floor-unproven (N: the largest epoch your fenced resources saw; " +
			"no valid record of the highest epoch issued is left here)"
	case blocker.ProvenEpoch > 0:
		return fmt.Sprintf(" --epoch-floor %d (the highest epoch issued, proven by %s; a larger N if you know "+
			"a larger epoch was issued)", blocker.ProvenEpoch, blocker.ProvenBy)
	}
	return " --epoch-floor N (N: the largest epoch issued here)"
}
