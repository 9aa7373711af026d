// Package longtest decides whether a test that takes minutes runs. go test
// ./... on a developer's machine stays short; CI (the CI variable set, as
// CI services do, or LEASEKIT_LONG=1, as .ci/run exports) runs everything:
// the mutant hunts, the explorations of planted bugs, the full campaign
// budgets and the real-OS stress. Nothing is dropped, only moved to the
// run that has the time for it.
package longtest

import (
	"os"
	"testing"
)

// Enabled reports whether the long tests run.
func Enabled() bool {
	return os.Getenv("CI") != "" || os.Getenv("LEASEKIT_LONG") == "1"
}

// Pick is a test's size: long where the long tests run, short in the
// default test command (which must still reach what the test asserts).
func Pick(long, short int) int {
	if Enabled() {
		return long
	}
	return short
}

// Require skips t, saying what it does and how to run it, unless the long
// tests run and -short is off.
func Require(t testing.TB, what string) {
	t.Helper()
	switch {
	case testing.Short():
		t.Skipf("%s; skipped with -short", what)
	case !Enabled():
		t.Skipf("%s; a long test: it runs with LEASEKIT_LONG=1 (as .ci/run sets) or under CI", what)
	}
}
