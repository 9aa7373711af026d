package campaign

// breakEmptyLock plants the self-test lock's bug (see selftest.go). It is
// false here; the mutant mutants/selftest-breakempty replaces this file
// (go build -overlay) with one that sets it, to prove leasesim finds, shrinks
// and replays a real race end to end.
const breakEmptyLock = false
