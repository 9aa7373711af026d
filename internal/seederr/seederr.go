// Package seederr is the refusal type admission and dirlease share: the
// original implementation throws "Beeper Message Like Me recovery:
// <message>" for every refused operation, and the Go ports return it
// typed, with a per-package Kind that doubles as an errors.Is sentinel. The
// product wording is the caller's (Error.Prefix, set by Label from the
// engine's Config.MessagePrefix; "" is DefaultPrefix); the message bodies
// are the original implementation's.
package seederr

import "errors"

// Kind is a package's refusal class. It is an error itself so that
// errors.Is(err, admission.ErrActive) works.
type Kind interface {
	comparable
	error
}

// DefaultPrefix is the prefix of an Error whose Prefix is "".
const DefaultPrefix = "leasekit recovery"

// Error is every refusal of an engine package. Msg is the original's message;
// Err, when set, the cause (errors.Unwrap reaches *fs.PathError and
// friends); Prefix the product wording the text starts with ("" is
// DefaultPrefix).
type Error[K Kind] struct {
	Kind   K
	Path   string
	Msg    string
	Err    error
	Prefix string
}

func (e *Error[K]) Error() string {
	prefix := e.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	text := prefix + ": " + e.Msg
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
// kind unsafe with the original's "could not ... safely" message.
func WrapUnexpected[K Kind](err error, unsafe K, path, msg string) error {
	var own *Error[K]
	if errors.As(err, &own) {
		return err
	}
	return New(unsafe, path, msg, err)
}

// Label sets prefix on every *Error[K] in err's chain that has none yet,
// and returns err. Engines call it once, as their exported calls return, so
// that the many places that refuse need not carry the configuration.
func Label[K Kind](err error, prefix string) error {
	for cause := err; cause != nil; {
		if own, ok := cause.(*Error[K]); ok && own.Prefix == "" {
			own.Prefix = prefix
		}
		switch unwrapped := cause.(type) {
		case interface{ Unwrap() []error }:
			for _, each := range unwrapped.Unwrap() {
				Label[K](each, prefix)
			}
			return err
		case interface{ Unwrap() error }:
			cause = unwrapped.Unwrap()
		default:
			cause = nil
		}
	}
	return err
}
