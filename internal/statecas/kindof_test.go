package statecas

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// asTo is an error whose As method claims to be an *Error of its kind,
// which errors.As honours and a plain Unwrap walk would miss.
type asTo struct{ kind Kind }

func (a asTo) Error() string { return "as" }

func (a asTo) As(target any) bool {
	if e, ok := target.(**Error); ok {
		*e = &Error{Kind: a.kind}
		return true
	}
	return false
}

// kindOfAs is KindOf by errors.As.
func kindOfAs(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// TestKindOfIsErrorsAs holds KindOf to errors.As over the chains the
// engines build, joined ones and an As method.
func TestKindOfIsErrorsAs(t *testing.T) {
	bound := newError(ErrBound, "/x", "over", nil)
	changed := newError(ErrChanged, "/x", "swapped", &fs.PathError{Op: "lstat", Path: "/x", Err: syscall.ENOENT})
	for _, err := range []error{
		nil,
		bound,
		changed,
		&fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES},
		fmt.Errorf("wrapped: %w", bound),
		fmt.Errorf("twice: %w", fmt.Errorf("wrapped: %w", changed)),
		errors.Join(errors.New("first"), bound),
		errors.Join(changed, bound),
		fmt.Errorf("wrapped: %w", errors.Join(errors.New("first"), changed)),
		asTo{kind: ErrCorrupt},
		fmt.Errorf("wrapped: %w", asTo{kind: ErrUnsafe}),
		errors.New("plain"),
	} {
		if got, want := KindOf(err), kindOfAs(err); got != want {
			t.Errorf("KindOf(%v) = %v, errors.As finds %v", err, got, want)
		}
	}
	wrapped := &fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}
	for _, err := range []error{nil, changed, wrapped} {
		if allocs := testing.AllocsPerRun(100, func() { KindOf(err) }); allocs != 0 {
			t.Errorf("KindOf(%v) made %v allocations", err, allocs)
		}
	}
}
