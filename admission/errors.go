package admission

import (
	"fmt"

	"github.com/leasekit/leasekit/internal/seederr"
)

// Kind classifies an *Error; each Kind is an errors.Is sentinel.
type Kind int

const (
	// ErrActive: "another export is active" (a live owner, or a live helper
	// of this boot).
	ErrActive Kind = iota + 1
	// ErrIndeterminate: "prior export owner cannot be inspected safely".
	ErrIndeterminate
	// ErrContention: the bounded acquire attempts were exhausted.
	ErrContention
	// ErrInvalidTransition: a lifecycle change the transition table refuses.
	ErrInvalidTransition
	// ErrReleased: the admission was already released.
	ErrReleased
	// ErrChanged: the admission file no longer holds this handle's bytes
	// (the compare-and-swap was refused).
	ErrChanged
	// ErrCorrupt: the admission file is not a valid canonical record.
	ErrCorrupt
	// ErrLegacy: a legacy admission cannot be taken as current ownership.
	ErrLegacy
	// ErrHelperIdentity: the helper PID is invalid or cannot be captured.
	ErrHelperIdentity
	// ErrUnsafe: the operation failed for another reason (I/O, an unsafe
	// directory, a mutation claim that cannot be inspected); Err says why.
	ErrUnsafe
	// ErrMismatch: Quarantine's confirmation is a SHA-256, but not the one
	// the admission file hashes to now (a wrong confirmation, or a file
	// that changed since the operator's inspect; the refusal names the
	// current one). Nothing moved. Such an error also matches ErrChanged:
	// from one hash alone no one can tell a typo from a change.
	ErrMismatch
	// ErrInvalidRequest: an argument is malformed (Quarantine's
	// confirmation is not 64 lowercase hex digits). Nothing was read or
	// written.
	ErrInvalidRequest
)

func (k Kind) String() string {
	names := [...]string{"", "active", "indeterminate", "contention", "invalid-transition", "released",
		"changed", "corrupt", "legacy", "helper-identity", "unsafe", "sha256-mismatch", "invalid-request"}
	if int(k) > 0 && int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error makes a Kind usable as an errors.Is target.
func (k Kind) Error() string { return "admission: " + k.String() }

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
