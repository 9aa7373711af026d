package admission

import (
	"errors"
	"fmt"
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
)

func (k Kind) String() string {
	names := [...]string{"", "active", "indeterminate", "contention", "invalid-transition", "released",
		"changed", "corrupt", "legacy", "helper-identity", "unsafe"}
	if int(k) > 0 && int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error makes a Kind usable as an errors.Is target.
func (k Kind) Error() string { return "admission: " + k.String() }

// Error is every refusal of the package. Msg is the seed's message; Err,
// when set, the cause (errors.Unwrap reaches *fs.PathError and friends).
type Error struct {
	Kind Kind
	Path string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	text := "Beeper Message Like Me recovery: " + e.Msg
	if e.Path != "" {
		text += " (" + e.Path + ")"
	}
	if e.Err != nil {
		text += ": " + e.Err.Error()
	}
	return text
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the Kind sentinel.
func (e *Error) Is(target error) bool {
	kind, ok := target.(Kind)
	return ok && kind == e.Kind
}

func fail(kind Kind, path, msg string, cause error) *Error {
	return &Error{Kind: kind, Path: path, Msg: msg, Err: cause}
}

// wrapUnexpected passes an *Error through and wraps anything else as
// ErrUnsafe with the seed's "could not ... safely" message.
func wrapUnexpected(err error, path, msg string) error {
	var own *Error
	if errors.As(err, &own) {
		return err
	}
	return fail(ErrUnsafe, path, msg, err)
}
