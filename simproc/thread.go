package simproc

import "fmt"

// Threads the simulator runs (sim's thread groups). A process spawned with
// Threads > 1 has threads that only /proc counts; the simulator can also run
// real concurrent callers in one process, which share its PID and identity.
// Their table entry is kept here: AddThread and ThreadExit move its count,
// and ExitZombie of the leader leaves a zombie leader whose other threads
// still run (state Z, Threads > 1), as Linux does when the main thread calls
// pthread_exit. Such a zombie is alive, and no parent can reap it while a
// thread runs, so the vanish hazard (a zombie reaped between two reads)
// never strikes it.

// AddThread counts one more running thread of p, and marks p as running
// simulated threads.
func (h *Host) AddThread(p *Proc) {
	h.checkLive(p)
	if p.State != Running {
		panic(fmt.Sprintf("simproc: thread added to a %v process", p.State))
	}
	p.Threads++
	p.threaded = true
}

// ThreadExit counts the exit of one of p's threads other than the last:
// the process goes on with the others (a zombie leader stays a zombie).
func (h *Host) ThreadExit(p *Proc) {
	h.checkLive(p)
	if p.Threads < 2 {
		panic(fmt.Sprintf("simproc: thread exit of PID %d with %d threads", p.PID, p.Threads))
	}
	p.Threads--
}

// Threaded reports whether p runs simulated threads (AddThread).
func (p *Proc) Threaded() bool { return p.threaded }
