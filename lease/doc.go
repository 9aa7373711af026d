// Package lease is leasekit's generation-fenced, epoch-numbered
// single-owner lease on a directory (a Go port of ReceiverLeaseManager, one
// of the original implementations, whose on-disk formats the engines read).
// It re-exports the injected interfaces every engine uses, which package env
// declares: FS, File, Clock and IDSource (env.go) and Inspector and the
// process identity types (identity.go) are type aliases of env's, and the
// process identity rules (ClassifyRecord) are here (identity.go).
//
// A Manager serves one namespace directory. Acquire publishes an owner
// record (receiver.lock/owner.json) for the calling process or reports who
// holds it; stale owners, provably dead by ClassifyRecord, are moved into
// quarantine/ and reported with the reason. Release removes the lease for
// whoever presents its generation (a capability). WithCurrentLease runs a
// function only while the presented generation is current and owned by the
// calling process, with distinct error types for "lost the lease"
// (*FenceError), "busy, retry" (*BusyError) and "needs an operator"
// (*UnverifiableError). AcquireWait retries a held or busy lease with
// bounded backoff. Every documented state is a result value; the error
// return is for unexpected I/O failures and context cancellation.
//
// A state that refuses every call until an operator acts (a corrupt owner,
// guard, intent or epoch counter; a record of another host or PID
// namespace) is listed by Inspect in Projection.Blockers, and
// ForceReclaim is its operator action: it moves the entry into
// quarantine/ and deletes nothing.
//
// On the real OS, osenv.NewManager(namespace, rootID) is the one-line
// construction.
//
// Engine code here is deterministic: it reaches the filesystem, time,
// process table and randomness only through the injected interfaces, every
// loop is bounded by an attempt counter and one monotonic deadline per
// call, and it starts no goroutines. The on-disk format and the protocol,
// including what is fsynced when and which leftovers are removed, are in
// docs/FORMAT-lease.md.
package lease
