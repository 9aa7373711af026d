// Package require is the assertion helpers leasekit's tests use: the subset
// of github.com/stretchr/testify/require they call, with its names,
// signatures and meanings, so a test reads as it did.
//
// Why not testify itself: testify's assert package imports net/http (for its
// HTTP assertions), so every test binary that used it compiled and linked
// net/http, crypto/tls and crypto/x509 with their ~70 standard packages. On a
// fresh clone of a 2-core machine that was a large share of `go test ./...`
// (docs/BENCH.md, "The test command"). This package imports
// only fmt, reflect, regexp and the like.
//
// Every function stops the test (FailNow) when its check fails, after
// reporting what was expected, what was found, and the caller's message.
package require

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// TestingT is what the helpers need of a test: *testing.T, *testing.B and
// *rapid.T satisfy it, as they do testify's.
type TestingT interface {
	Errorf(format string, args ...any)
	FailNow()
}

type helper interface{ Helper() }

// fail reports a failed check with the caller's message and stops the test.
func fail(t TestingT, what string, msgAndArgs []any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if msg := message(msgAndArgs); msg != "" {
		what += "\nMessages:   " + msg
	}
	t.Errorf("\nError:      %s", what)
	t.FailNow()
}

// message renders testify's optional message arguments: one value, or a
// format and its arguments.
func message(msgAndArgs []any) string {
	switch len(msgAndArgs) {
	case 0:
		return ""
	case 1:
		if s, ok := msgAndArgs[0].(string); ok {
			return s
		}
		return fmt.Sprintf("%+v", msgAndArgs[0])
	default:
		if format, ok := msgAndArgs[0].(string); ok {
			return fmt.Sprintf(format, msgAndArgs[1:]...)
		}
		return fmt.Sprint(msgAndArgs...)
	}
}

// ObjectsAreEqual is testify's equality: byte slices by their bytes (nil
// equals empty), everything else by reflect.DeepEqual.
func ObjectsAreEqual(expected, actual any) bool {
	if expected == nil || actual == nil {
		return expected == actual
	}
	exp, ok := expected.([]byte)
	if !ok {
		return reflect.DeepEqual(expected, actual)
	}
	act, ok := actual.([]byte)
	if !ok {
		return false
	}
	return bytes.Equal(exp, act)
}

// Equal asserts that expected and actual are equal (ObjectsAreEqual).
func Equal(t TestingT, expected, actual any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if isFunc(expected) || isFunc(actual) {
		fail(t, fmt.Sprintf("Invalid operation: Equal(%#v, %#v) (cannot take func type as argument)", expected, actual), msgAndArgs)
	}
	if !ObjectsAreEqual(expected, actual) {
		fail(t, "Not equal:\n"+showPair(expected, actual), msgAndArgs)
	}
}

// NotEqual asserts that expected and actual are not equal.
func NotEqual(t TestingT, expected, actual any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if ObjectsAreEqual(expected, actual) {
		fail(t, fmt.Sprintf("Should not be: %#v", actual), msgAndArgs)
	}
}

// EqualError asserts that err is an error whose message is errString.
func EqualError(t TestingT, err error, errString string, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if err == nil {
		fail(t, fmt.Sprintf("An error is expected but got nil.\nexpected: %q", errString), msgAndArgs)
	}
	if err.Error() != errString {
		fail(t, fmt.Sprintf("Error message not equal:\nexpected: %q\nactual  : %q", errString, err.Error()), msgAndArgs)
	}
}

func isFunc(v any) bool {
	return v != nil && reflect.TypeOf(v).Kind() == reflect.Func
}

// showPair prints both values, and for two strings of several lines the
// first line where they part, which is what a long golden text needs.
func showPair(expected, actual any) string {
	exp, expIsString := expected.(string)
	act, actIsString := actual.(string)
	if expIsString && actIsString && (strings.Contains(exp, "\n") || strings.Contains(act, "\n")) {
		return fmt.Sprintf("expected: %q\nactual  : %q\n%s", exp, act, firstDifferentLine(exp, act))
	}
	if reflect.TypeOf(expected) != reflect.TypeOf(actual) {
		return fmt.Sprintf("expected: %T(%#v)\nactual  : %T(%#v)", expected, expected, actual, actual)
	}
	return fmt.Sprintf("expected: %#v\nactual  : %#v", expected, actual)
}

func firstDifferentLine(expected, actual string) string {
	expLines, actLines := strings.Split(expected, "\n"), strings.Split(actual, "\n")
	for i := range max(len(expLines), len(actLines)) {
		exp, act := lineAt(expLines, i), lineAt(actLines, i)
		if exp != act {
			return fmt.Sprintf("first difference, line %d:\n-%s\n+%s", i+1, exp, act)
		}
	}
	return ""
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<no line>"
}

// True asserts that value is true.
func True(t TestingT, value bool, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !value {
		fail(t, "Should be true", msgAndArgs)
	}
}

// False asserts that value is false.
func False(t TestingT, value bool, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if value {
		fail(t, "Should be false", msgAndArgs)
	}
}

// Failf stops the test with a failure message and the caller's message.
func Failf(t TestingT, failureMessage string, msg string, args ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	fail(t, failureMessage, append([]any{msg}, args...))
}

// Panics asserts that f panics.
func Panics(t TestingT, f func(), msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if panicked, _ := didPanic(f); !panicked {
		fail(t, "func should panic", msgAndArgs)
	}
}

func didPanic(f func()) (panicked bool, value any) {
	panicked = true
	defer func() { value = recover() }()
	f()
	panicked = false
	return
}

// Same asserts that expected and actual are pointers of one type to the
// same object.
func Same(t TestingT, expected, actual any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !samePointers(expected, actual) {
		fail(t, fmt.Sprintf("Not same:\nexpected: %p %#v\nactual  : %p %#v", expected, expected, actual, actual), msgAndArgs)
	}
}

func samePointers(first, second any) bool {
	firstPtr, secondPtr := reflect.ValueOf(first), reflect.ValueOf(second)
	if firstPtr.Kind() != reflect.Pointer || secondPtr.Kind() != reflect.Pointer {
		return false
	}
	return firstPtr.Type() == secondPtr.Type() && first == second
}

// WithinDuration asserts that expected and actual are at most delta apart.
func WithinDuration(t TestingT, expected, actual time.Time, delta time.Duration, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if diff := expected.Sub(actual); diff < -delta || diff > delta {
		fail(t, fmt.Sprintf("Max difference between %v and %v allowed is %v, but difference was %v", expected, actual, delta, diff), msgAndArgs)
	}
}

// InDelta asserts that two numbers are at most delta apart.
func InDelta(t TestingT, expected, actual any, delta float64, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	exp, expOK := toFloat(expected)
	act, actOK := toFloat(actual)
	if !expOK || !actOK {
		fail(t, "Parameters must be numerical", msgAndArgs)
	}
	if math.IsNaN(exp) || math.IsNaN(act) || math.Abs(exp-act) > delta {
		fail(t, fmt.Sprintf("Max difference between %v and %v allowed is %v, but difference was %v", expected, actual, delta, exp-act), msgAndArgs)
	}
}

func toFloat(x any) (float64, bool) {
	value := reflect.ValueOf(x)
	switch value.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(value.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(value.Uint()), true
	case reflect.Float32, reflect.Float64:
		return value.Float(), true
	default:
		return 0, false
	}
}

// FileExists asserts that path names something that is not a directory.
func FileExists(t TestingT, path string, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	info, err := os.Lstat(path)
	if err != nil {
		fail(t, fmt.Sprintf("unable to find file %q: %v", path, err), msgAndArgs)
	}
	if info.IsDir() {
		fail(t, fmt.Sprintf("%q is a directory", path), msgAndArgs)
	}
}

// NoFileExists asserts that path names no file (nothing, or a directory).
func NoFileExists(t TestingT, path string, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if info, err := os.Lstat(path); err == nil && !info.IsDir() {
		fail(t, fmt.Sprintf("file %q exists", path), msgAndArgs)
	}
}

// NoDirExists asserts that path names no directory (nothing, or a file).
func NoDirExists(t TestingT, path string, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if info, err := os.Lstat(path); err == nil && info.IsDir() {
		fail(t, fmt.Sprintf("directory %q exists", path), msgAndArgs)
	}
}

// Regexp asserts that the text of str matches rx (a *regexp.Regexp or its
// source).
func Regexp(t TestingT, rx any, str any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !matchRegexp(rx, str) {
		fail(t, fmt.Sprintf("Expect %q to match %q", fmt.Sprint(str), fmt.Sprint(rx)), msgAndArgs)
	}
}

// NotRegexp asserts that the text of str does not match rx.
func NotRegexp(t TestingT, rx any, str any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if matchRegexp(rx, str) {
		fail(t, fmt.Sprintf("Expect %q to NOT match %q", fmt.Sprint(str), fmt.Sprint(rx)), msgAndArgs)
	}
}

func matchRegexp(rx any, str any) bool {
	compiled, ok := rx.(*regexp.Regexp)
	if !ok {
		compiled = regexp.MustCompile(fmt.Sprint(rx))
	}
	return compiled.FindStringIndex(fmt.Sprint(str)) != nil
}
