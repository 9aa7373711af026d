// Package sim is leasekit's deterministic simulator: a world of hosts
// (simproc process tables), filesystems (simfs) and a virtual clock, in which
// simulated processes run real engine code, one at a time, under a seeded
// scheduler that also injects faults. See docs/ARCHITECTURE.md, "Package
// map".
//
// Every FS, clock, inspector and ID call a process makes is a scheduling
// point: the scheduler picks who runs next (or crashes the caller there), and
// only then is the operation performed. All randomness
// comes from one Decisions source, split into streams keyed by site (the
// scheduler, each process's code, steps, FS faults and exit, each global
// fault), so a run is a function of its seed (or of its recorded decision
// list with each answer's stream), two runs of one seed produce the same
// per-step hash stream, and an extra draw at one site moves only its own
// stream's later answers.
//
// This package is the simulator core only: it knows no engine. leasekit's
// engines' workloads are in workload/leasework, workload/admissionwork and
// workload/dirleasework, each with the campaign.Engine value that the
// harness runs (see docs/ARCHITECTURE.md).
//
// # Writing a workload
//
// A workload is a Config.Setup function. It builds the world and returns:
//
//	setup := func(w *sim.World) error {
//		disk := w.AddVolume("disk")              // one simfs instance
//		disk.FS().MkdirAll("/state", 0o755, 0)
//		alpha := w.AddHost(sim.HostSpec{Name: "alpha", PIDMax: 64, Volume: disk})
//		beta := w.AddHost(sim.HostSpec{Name: "beta", Volume: disk}) // shared mount
//		for i := range 3 {
//			w.Spawn(alpha, sim.ProcSpec{Name: fmt.Sprint("client-", i), UID: 1000}, body)
//		}
//		w.Invariant("one-holder", func() error { ... })    // after every step
//		w.FaultHook(sim.FaultCorrupt, func(w *sim.World) { // plan-driven
//			disk.Root().OpenFile(...)                      // acts from outside
//		})
//		w.OnExit(func(p *sim.Proc, reason sim.ExitReason) { // e.g. restart
//			if reason != sim.ExitFinished { w.Spawn(p.Host(), ..., body) }
//		})
//		return nil
//	}
//
// A body runs engine code with the process's environment:
//
//	body := func(p *sim.Proc) {
//		m, _ := lease.NewManager(lease.Config{Namespace: ..., RootID: ...,
//			FS: p.FS(), Clock: p.Clock(), Inspector: p.Inspector(), IDs: p.IDs()})
//		op := p.Begin("acquire", nonce)   // history call, at the current time
//		res, err := m.Acquire(...)        // every FS/clock/inspector call yields
//		p.End(op, outcome(res, err))      // history return
//	}
//
// Rules for bodies and hooks:
//   - All shared workload state lives in the Setup closure and is reset by
//     Setup: RunTwice and replays call Setup again.
//   - A body must not recover() every panic: a crash unwinds it with a
//     private sentinel, and swallowing it would let a killed process run on.
//     (Even then it could not touch the world: every wrapper refuses a dead
//     process.) A body must not call t.Fatal (runtime.Goexit) either.
//   - A body must not block on anything but its wrapped Clock; it must not
//     start goroutines or read real time.
//   - Fault and exit hooks run between steps, outside every process; they
//     may call Spawn, Crash and PowerLoss, and use Volume.Root.
//   - Invariants and reap hooks observe: they may record events, spawn and
//     use Volume.Root, but never kill a process (Crash, PowerLoss panic
//     there). When a process runs two steps in a row, the end of the first
//     (hash, invariants) and the start of the second (clock, reaping, fault
//     draws) run on that process's own coroutine, without a switch to the
//     main loop (step.go); a process cannot unwind itself, so the code that
//     may run there must not kill. Any fault drawn yes, a crash or a finding
//     hands the step back to the main loop, which does the rest exactly as
//     it would have: a run is the same either way, and traced runs never go
//     inline.
//   - Volume.Root and the views Volume.FS makes are the harness's: no
//     injected FS fault reaches them, even inside a process's step.
//   - A hook or invariant that panics ends the run as a violation whose
//     message starts "the harness panicked", with the stack: a bug of the
//     harness is a finding with a seed, not the end of a campaign.
//
// # Threads
//
// World.SpawnThread starts another concurrent caller in a process: its own
// coroutine, scheduling points, lane and decision streams, sharing the
// process's PID, identity and open files. A crash, a power loss and the stop
// fault act on every thread of the process; a leader that returns first
// leaves a zombie leader with live threads until the last thread ends. See
// thread.go and docs/HARNESS.md.
package sim
