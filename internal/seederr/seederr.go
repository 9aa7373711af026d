// Package seederr is the refusal type admission and dirlease share: the
// seed throws "Beeper Message Like Me recovery: <message>" for every refused
// operation, and the Go ports return it typed, with a per-package Kind that
// doubles as an errors.Is sentinel.
package seederr

import "errors"

// Kind is a package's refusal class. It is an error itself so that
// errors.Is(err, admission.ErrActive) works.
type Kind interface {
	comparable
	error
}

// Error is every refusal of an engine package. Msg is the seed's message;
// Err, when set, the cause (errors.Unwrap reaches *fs.PathError and
// friends).
type Error[K Kind] struct {
	Kind K
	Path string
	Msg  string
	Err  error
}

func (e *Error[K]) Error() string {
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
func (e *Error[K]) Unwrap() error { return e.Err }

// Is matches the Kind sentinel.
func (e *Error[K]) Is(target error) bool {
	kind, ok := target.(K)
	return ok && kind == e.Kind
}

// New returns a refusal of kind.
func New[K Kind](kind K, path, msg string, cause error) *Error[K] {
	return &Error[K]{Kind: kind, Path: path, Msg: msg, Err: cause}
}

// WrapUnexpected passes an *Error[K] through and wraps anything else as
// kind unsafe with the seed's "could not ... safely" message.
func WrapUnexpected[K Kind](err error, unsafe K, path, msg string) error {
	var own *Error[K]
	if errors.As(err, &own) {
		return err
	}
	return New(unsafe, path, msg, err)
}
