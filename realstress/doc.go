// Package realstress is the real-OS multi-process stress campaign behind
// `leasereal stress`: N real worker processes contend on one lease
// namespace (or the admission slot, admission.go, or dirlease claims,
// dirlease.go; or, EngineRun in runs.go, `leasereal run` itself as
// people use it, with background jobs, killed wrappers and an operator's
// forced reclaims) through lease/osenv, a parent SIGKILLs them at random and
// restarts them, every operation's call and return is stamped on
// CLOCK_MONOTONIC (comparable across processes), and the merged history is
// checked by the same porcupine models (package models) that check the
// simulator's histories, in segments cut at quiescent points (segment.go)
// that the parent makes by pausing every worker between two operations now
// and then (quiesce.go).
//
// # Why the history is sound
//
//   - A worker writes an operation's call line (one write(2)) BEFORE the
//     operation starts and its return line AFTER it ends. A worker killed in
//     between leaves a call without a return: the operation stays in the
//     history with an Unknown outcome, its return bounded by the death stamp.
//     A call line cut short by the kill is ignored: the operation never
//     started.
//   - The parent stamps a ProcessDeath for every incarnation (killed or
//     exited) after reaping it, so every effect of the dead process happened
//     before that stamp.
//   - An acquire that reclaims a dead owner observes that death, possibly
//     before the parent's stamp. So a worker's inspector (deathGate), before
//     it reports a worker process dead (absent, zombie, or its PID reused),
//     waits until the parent has published that death: the reclaim then
//     happens after the death's stamp. This only delays the caller, a
//     schedule the kernel could have produced anyway; it hides nothing the
//     engine does.
//   - An acquire reclaims (moves a dead owner's receiver.lock into
//     quarantine) and installs in later steps, and a lock-free Inspect can
//     see the lease empty in between. Every reclaim is in the history as a
//     models.LeaseReclaim over the acquire's window: from the acquire's
//     reported Reclaimed list, or, for an acquire cut short, from the
//     reclaim line its worker logged right after the rename (before the
//     install). The model accepts a reclaim only while that owner is dead.
//   - Timestamps are turned into distinct porcupine stamps by sorting; at
//     equal nanoseconds calls come before returns (more overlap, never a
//     false order), and an unknown return comes before the death that bounds
//     it.
//   - A segment boundary is a strict gap in those stamps (every earlier
//     operation returned before the next call), found in the history
//     itself; the barrier only makes gaps likely. Each segment starts from
//     every state the linearizations of the one before can end in, so
//     segmenting changes the cost, never the verdict; a search that runs
//     out of time is "unknown", neither a pass nor a violation.
package realstress
