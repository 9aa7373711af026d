package require

import (
	"errors"
	"fmt"
	"strings"
)

// NoError asserts that err is nil.
func NoError(t TestingT, err error, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if err != nil {
		fail(t, fmt.Sprintf("Received unexpected error:\n%+v", err), msgAndArgs)
	}
}

// Error asserts that err is not nil.
func Error(t TestingT, err error, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if err == nil {
		fail(t, "An error is expected but got nil.", msgAndArgs)
	}
}

// ErrorIs asserts that errors.Is(err, target).
func ErrorIs(t TestingT, err, target error, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !errors.Is(err, target) {
		fail(t, fmt.Sprintf("Target error should be in err chain:\nexpected: %q\nin chain: %s", errText(target), errChain(err)), msgAndArgs)
	}
}

// NotErrorIs asserts that !errors.Is(err, target).
func NotErrorIs(t TestingT, err, target error, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if errors.Is(err, target) {
		fail(t, fmt.Sprintf("Target error should not be in err chain:\nfound: %q\nin chain: %s", errText(target), errChain(err)), msgAndArgs)
	}
}

// ErrorAs asserts that errors.As(err, target), which also sets target.
func ErrorAs(t TestingT, err error, target any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !errors.As(err, target) {
		fail(t, fmt.Sprintf("Should be in error chain:\nexpected: %T\nin chain: %s", target, errChain(err)), msgAndArgs)
	}
}

// ErrorContains asserts that err is an error whose message contains
// contains.
func ErrorContains(t TestingT, err error, contains string, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if err == nil {
		fail(t, fmt.Sprintf("An error is expected but got nil.\nexpected error containing %q", contains), msgAndArgs)
	}
	if !strings.Contains(err.Error(), contains) {
		fail(t, fmt.Sprintf("Error %q does not contain %q", err.Error(), contains), msgAndArgs)
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// errChain lists the messages of err's Unwrap chain (the first branch of a
// joined error), which is what a failed ErrorIs or ErrorAs needs to show.
func errChain(err error) string {
	var chain []string
	for err != nil && len(chain) < 20 {
		chain = append(chain, fmt.Sprintf("%q (%T)", err.Error(), err))
		switch unwrapped := err.(type) {
		case interface{ Unwrap() error }:
			err = unwrapped.Unwrap()
		case interface{ Unwrap() []error }:
			errs := unwrapped.Unwrap()
			err = nil
			if len(errs) > 0 {
				err = errs[0]
			}
		default:
			err = nil
		}
	}
	if len(chain) == 0 {
		return "<nil>"
	}
	return strings.Join(chain, "\n\t")
}
