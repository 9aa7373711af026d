package require

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// recorder is a TestingT that records a failure instead of stopping the
// test: FailNow unwinds the checked call by a panic that check recovers.
type recorder struct {
	failed  bool
	message string
}

type stopped struct{}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.message = fmt.Sprintf(format, args...)
}

func (r *recorder) FailNow() { panic(stopped{}) }

// check runs one assertion on a recorder and says whether it failed.
func check(assertion func(t TestingT)) (failed bool, message string) {
	r := &recorder{}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stopped); !ok {
					panic(v)
				}
			}
		}()
		assertion(r)
	}()
	return r.failed, r.message
}

type pathErr = fs.PathError

var errBase = errors.New("base")

// TestAssertionsPassAndFailAsTestifysDo: each row is one call that must
// pass and its twin that must fail, so a helper that never fails (or
// always does) is caught.
func TestAssertionsPassAndFailAsTestifysDo(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wrapped := fmt.Errorf("wrapping: %w", &pathErr{Op: "open", Path: "/x", Err: errBase})
	one, other := new(int), new(int)
	now := time.Now()
	for _, c := range []struct {
		name       string
		pass, fail func(t TestingT)
	}{
		{"Equal", func(t TestingT) { Equal(t, []int{1}, []int{1}) }, func(t TestingT) { Equal(t, 1, int64(1)) }},
		{"Equal bytes", func(t TestingT) { Equal(t, []byte(nil), []byte{}) }, func(t TestingT) { Equal(t, []byte("a"), "a") }},
		{"NotEqual", func(t TestingT) { NotEqual(t, "a", "b") }, func(t TestingT) { NotEqual(t, "a", "a") }},
		{"EqualError", func(t TestingT) { EqualError(t, errBase, "base") }, func(t TestingT) { EqualError(t, nil, "base") }},
		{"True", func(t TestingT) { True(t, true) }, func(t TestingT) { True(t, false) }},
		{"False", func(t TestingT) { False(t, false) }, func(t TestingT) { False(t, true) }},
		{"NoError", func(t TestingT) { NoError(t, nil) }, func(t TestingT) { NoError(t, errBase) }},
		{"Error", func(t TestingT) { Error(t, errBase) }, func(t TestingT) { Error(t, nil) }},
		{"ErrorIs", func(t TestingT) { ErrorIs(t, wrapped, errBase) }, func(t TestingT) { ErrorIs(t, wrapped, fs.ErrExist) }},
		{"NotErrorIs", func(t TestingT) { NotErrorIs(t, wrapped, fs.ErrExist) }, func(t TestingT) { NotErrorIs(t, wrapped, errBase) }},
		{"ErrorAs", func(t TestingT) {
			var target *pathErr
			ErrorAs(t, wrapped, &target)
			Equal(t, "/x", target.Path)
		}, func(t TestingT) {
			var target *os.LinkError
			ErrorAs(t, wrapped, &target)
		}},
		{"ErrorContains", func(t TestingT) { ErrorContains(t, wrapped, "wrapping") }, func(t TestingT) { ErrorContains(t, wrapped, "absent") }},
		{"Nil", func(t TestingT) { Nil(t, (*int)(nil)) }, func(t TestingT) { Nil(t, 0) }},
		{"NotNil", func(t TestingT) { NotNil(t, one) }, func(t TestingT) { NotNil(t, []int(nil)) }},
		{"Empty", func(t TestingT) { Empty(t, map[string]int{}) }, func(t TestingT) { Empty(t, "x") }},
		{"Empty pointer", func(t TestingT) { Empty(t, new(string)) }, func(t TestingT) { Empty(t, []int{0}) }},
		{"NotEmpty", func(t TestingT) { NotEmpty(t, []int{0}) }, func(t TestingT) { NotEmpty(t, 0) }},
		{"Zero", func(t TestingT) { Zero(t, struct{ A int }{}) }, func(t TestingT) { Zero(t, []int{}) }},
		{"NotZero", func(t TestingT) { NotZero(t, 1) }, func(t TestingT) { NotZero(t, "") }},
		{"Len", func(t TestingT) { Len(t, "abc", 3) }, func(t TestingT) { Len(t, []int{1}, 2) }},
		{"Len of no length", func(t TestingT) { Len(t, map[int]int{1: 1}, 1) }, func(t TestingT) { Len(t, 5, 0) }},
		{"Contains string", func(t TestingT) { Contains(t, "a lease", "lease") }, func(t TestingT) { Contains(t, "a lease", "guard") }},
		{"Contains slice", func(t TestingT) { Contains(t, []string{"a", "b"}, "b") }, func(t TestingT) { Contains(t, []string{"a"}, "b") }},
		{"Contains map key", func(t TestingT) { Contains(t, map[string]int{"k": 1}, "k") }, func(t TestingT) { Contains(t, 7, 7) }},
		{"NotContains", func(t TestingT) { NotContains(t, "abc", "d") }, func(t TestingT) { NotContains(t, []int{1, 2}, 2) }},
		{"Subset", func(t TestingT) { Subset(t, []int{1, 2, 3}, []int{3, 1}) }, func(t TestingT) { Subset(t, []int{1, 2}, []int{4}) }},
		{"Subset map", func(t TestingT) { Subset(t, map[string]int{"a": 1, "b": 2}, map[string]int{"a": 1}) }, func(t TestingT) { Subset(t, map[string]int{"a": 1}, map[string]int{"a": 2}) }},
		{"Greater", func(t TestingT) { Greater(t, 2, 1) }, func(t TestingT) { Greater(t, 1, 1) }},
		{"GreaterOrEqual", func(t TestingT) { GreaterOrEqual(t, uint64(1), uint64(1)) }, func(t TestingT) { GreaterOrEqual(t, 1.5, 2.5) }},
		{"Less", func(t TestingT) { Less(t, "a", "b") }, func(t TestingT) { Less(t, 2, 1) }},
		{"LessOrEqual", func(t TestingT) { LessOrEqual(t, time.Second, time.Second) }, func(t TestingT) { LessOrEqual(t, 2, int64(3)) }},
		{"Less times", func(t TestingT) { Less(t, now, now.Add(time.Nanosecond)) }, func(t TestingT) { Less(t, now, now) }},
		{"Positive", func(t TestingT) { Positive(t, 0.5) }, func(t TestingT) { Positive(t, int8(0)) }},
		{"Regexp", func(t TestingT) { Regexp(t, `^le+ase$`, "leeease") }, func(t TestingT) { Regexp(t, regexp.MustCompile(`\d`), "none") }},
		{"NotRegexp", func(t TestingT) { NotRegexp(t, `\d`, "none") }, func(t TestingT) { NotRegexp(t, `0`, 10) }},
		{"Panics", func(t TestingT) { Panics(t, func() { panic("x") }) }, func(t TestingT) { Panics(t, func() {}) }},
		{"Panics with nil", func(t TestingT) { Panics(t, func() { panic(fmt.Errorf("x")) }) }, func(t TestingT) { Panics(t, func() { _ = 1 }) }},
		{"Same", func(t TestingT) { Same(t, one, one) }, func(t TestingT) { Same(t, one, other) }},
		{"WithinDuration", func(t TestingT) { WithinDuration(t, now, now.Add(time.Second), time.Second) }, func(t TestingT) { WithinDuration(t, now, now.Add(2*time.Second), time.Second) }},
		{"InDelta", func(t TestingT) { InDelta(t, 1.0, 1.9, 1) }, func(t TestingT) { InDelta(t, 1, 2.5, 1) }},
		{"FileExists", func(t TestingT) { FileExists(t, file) }, func(t TestingT) { FileExists(t, dir) }},
		{"NoFileExists", func(t TestingT) { NoFileExists(t, dir) }, func(t TestingT) { NoFileExists(t, file) }},
		{"NoDirExists", func(t TestingT) { NoDirExists(t, file) }, func(t TestingT) { NoDirExists(t, dir) }},
		{"Failf", func(t TestingT) {}, func(t TestingT) { Failf(t, "failed", "%d", 1) }},
	} {
		if failed, message := check(c.pass); failed {
			t.Errorf("%s: the passing call failed: %s", c.name, message)
		}
		if failed, _ := check(c.fail); !failed {
			t.Errorf("%s: the failing call passed", c.name)
		}
	}
}

// TestFailureNamesBothValuesAndTheMessage: the report carries what was
// expected, what was found, and the caller's formatted message.
func TestFailureNamesBothValuesAndTheMessage(t *testing.T) {
	_, message := check(func(t TestingT) { Equal(t, "one\ntwo", "one\nthree", "golden %s", "trace") })
	for _, want := range []string{`"one\ntwo"`, `"one\nthree"`, "line 2:\n-two\n+three", "Messages:   golden trace"} {
		if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(message) {
			t.Errorf("the report %q lacks %q", message, want)
		}
	}
}
