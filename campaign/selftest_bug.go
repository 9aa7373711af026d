package campaign

// breakEmptyLock plants the self-test lock's bug (see selftest.go). It is
// false here; the mutant mutants/selftest-breakempty (mutation.txt) sets it
// in a go build -overlay copy of this file, to prove leasesim finds, shrinks
// and replays a real race end to end.
const breakEmptyLock = false
