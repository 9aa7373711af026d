// Package statecas holds the state-file storage helpers the admission and
// dirlease engines share (the "./storage" module of the original
// implementation, which it imports but does not include): create-if-absent,
// write-if-unchanged, move-if-unchanged (the operator's quarantine) and
// remove-if-unchanged compare-and-swap operations serialised across
// processes by per-file mutation claims; recovery of claims orphaned by a
// dead process; a directory snapshot bound to the directory's physical
// identity; a bounded batch read; and identity-bound directory-tree
// removal. Everything goes through the injected lease.FS, lease.IDSource
// and lease.Inspector (Env), and every write through internal/statefile
// (temp, fsync, rename, directory fsync).
package statecas

import (
	"errors"
	"fmt"
)

// Kind classifies an *Error. Each Kind is also a sentinel: errors.Is(err,
// statecas.ErrMutationActive) holds for an *Error of that Kind.
type Kind int

const (
	// ErrMutationActive: another live process holds the mutation claim of
	// the file ("state file mutation is already active"). Retry later.
	ErrMutationActive Kind = iota + 1
	// ErrMutationIndeterminate: the claim's owner cannot be inspected
	// (remote host, another PID namespace, inspection failed). Never taken
	// over automatically.
	ErrMutationIndeterminate
	// ErrClaimLost: the mutation claim this call held was replaced while it
	// worked; another process may have raced it.
	ErrClaimLost
	// ErrCorrupt: a claim or state file is not what its schema allows.
	ErrCorrupt
	// ErrUnsafe: a directory or file is not private to this user (symlink,
	// wrong owner, wrong mode, not a directory).
	ErrUnsafe
	// ErrChanged: a directory or file was swapped for another inode while
	// it was being used.
	ErrChanged
	// ErrBound: a reviewed limit (entries, bytes, depth) was exceeded.
	ErrBound
)

func (k Kind) String() string {
	switch k {
	case ErrMutationActive:
		return "mutation-active"
	case ErrMutationIndeterminate:
		return "mutation-indeterminate"
	case ErrClaimLost:
		return "claim-lost"
	case ErrCorrupt:
		return "corrupt"
	case ErrUnsafe:
		return "unsafe"
	case ErrChanged:
		return "changed"
	case ErrBound:
		return "bound"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error implements error so that a Kind can be an errors.Is target.
func (k Kind) Error() string { return "statecas: " + k.String() }

// MutationActiveText is part of the message of every ErrMutationActive, as
// the original's contention test matches it by text.
const MutationActiveText = "state file mutation is already active"

// Error is every refusal of this package. Err, when set, is the underlying
// cause (an *fs.PathError, a *statefile.SchemaError, ...).
type Error struct {
	Kind Kind
	Path string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	text := "statecas: " + e.Msg
	if e.Path != "" {
		text += ": " + e.Path
	}
	if e.Err != nil {
		text += ": " + e.Err.Error()
	}
	return text
}

// Unwrap reaches the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the Kind sentinel.
func (e *Error) Is(target error) bool {
	kind, ok := target.(Kind)
	return ok && kind == e.Kind
}

func newError(kind Kind, path, msg string, cause error) *Error {
	return &Error{Kind: kind, Path: path, Msg: msg, Err: cause}
}

// KindOf returns the Kind of the first *Error in err's chain, or 0. It is
// asked of every error an engine meets, nil mostly: errors.AsType answers
// as errors.As does without errors.As's escaping target (an allocation per
// call).
func KindOf(err error) Kind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return 0
}
