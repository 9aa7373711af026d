package dirlease

import (
	"fmt"

	"github.com/leasekit/leasekit/internal/seederr"
)

// Kind classifies an *Error; each Kind is an errors.Is sentinel.
type Kind int

const (
	// ErrInvalidRequest: Create's request breaks the original's rules.
	ErrInvalidRequest Kind = iota + 1
	// ErrNotOwnedDirectory: a lease path (target, parent, output) is not an
	// owned physical directory: not canonical, a symlink in the way, another
	// owner, wrong mode, no birth time.
	ErrNotOwnedDirectory
	// ErrDuplicate: the lease ID was already present.
	ErrDuplicate
	// ErrInvalidTransition: a phase change the original's table refuses, or a
	// change of a released or bundle-stage lease.
	ErrInvalidTransition
	// ErrChildIdentity: the child PID is missing, invalid or not capturable.
	ErrChildIdentity
	// ErrChanged: a compare-and-swap was refused, or a directory or claim
	// is not the one recorded (renamed away, replaced, inode reused).
	ErrChanged
	// ErrCorrupt: a claim file is not a valid canonical record, is over its
	// size bound, or the collection holds an unsupported entry.
	ErrCorrupt
	// ErrBound: the claim collection exceeded its reviewed bound.
	ErrBound
	// ErrUnsafe: the operation failed for another reason; Err says why.
	ErrUnsafe
	// ErrActive: Quarantine refused a claim whose owner or running child is
	// live (its holder must release it).
	ErrActive
	// ErrWaiting: Quarantine refused a launching lease whose window provably
	// has not passed, whatever its owner's inspection answered (a child it
	// was launching may still be starting). Once the window is over,
	// Recover takes it if its owner is dead; one whose owner cannot be told
	// dead (ClaimState.OperatorNeeded) is the operator's to quarantine then.
	ErrWaiting
	// ErrMismatch: Quarantine's confirmation is a SHA-256, but not the one
	// the claim file hashes to now (a wrong confirmation, or a file that
	// changed since the operator's inspect; the refusal names the current
	// one). Nothing moved. It also matches ErrChanged: from one hash alone
	// no one can tell a typo from a change.
	ErrMismatch
	// ErrBusy: Create refused a directory another claim already names
	// (judged by the directory's identity, then its path): one lease per
	// directory. The holder must release it, or recovery take a dead
	// holder's; a caller may wait and retry (the CLI's busy exit / -w).
	ErrBusy
	// ErrFull: Create refused because the claim directory already holds
	// ClaimsMax entries, and wrote nothing. Crashed owners' claims pile up
	// until a recovery removes them: the refusal names the state home, the
	// count and the command (leasereal dirlease recover --state-home H).
	ErrFull
)

func (k Kind) String() string {
	names := [...]string{"", "invalid-request", "not-owned-directory", "duplicate", "invalid-transition",
		"child-identity", "changed", "corrupt", "bound", "unsafe", "active", "waiting", "sha256-mismatch", "busy", "full"}
	if int(k) > 0 && int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error makes a Kind usable as an errors.Is target.
func (k Kind) Error() string { return "dirlease: " + k.String() }

// Error is every refusal of the package (see internal/seederr): Msg is the
// original's message, Err the cause, Kind an errors.Is sentinel.
type Error = seederr.Error[Kind]

func fail(kind Kind, path, msg string, cause error) *Error {
	return seederr.New(kind, path, msg, cause)
}

// wrapUnexpected passes an *Error through and wraps anything else as
// ErrUnsafe with the original's "could not ... safely" message.
func wrapUnexpected(err error, path, msg string) error {
	return seederr.WrapUnexpected(err, ErrUnsafe, path, msg)
}
