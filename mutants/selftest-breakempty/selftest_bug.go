package campaign

// MUTANT (mutants/selftest-breakempty): the self-test lock breaks a lock
// file it finds empty, racing with an owner that has created it but not yet
// written it. Used with go build -overlay by campaign's mutant test.
const breakEmptyLock = true
