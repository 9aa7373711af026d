package workkit

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// ThreadsStream keys the draws that decide a run's threads, so a run without threads keeps its other draws.
const ThreadsStream = "threads"

// ThreadedOneIn: one run in ThreadedOneIn gets threads; one threaded run
// in SecondThreadOneIn gets a second extra thread. Threads add callers, so
// they cost steps: this keeps the default lease campaign's steps per seed
// within about a tenth of a world without them.
const (
	ThreadedOneIn     = 4
	SecondThreadOneIn = 4
)

// SpawnThreads gives one process of the run, chosen among the live ones
// whose name starts with prefix, one (or two) more threads (each its own
// caller, sharing the process's identity: sim.World.SpawnThread), thread i
// (from 1) running body(leader, i),
// in one run of ThreadedOneIn. The draws come from ThreadsStream, and the
// answer 0 (the boring one, and a replay's of a list recorded before
// threads existed) is no threads; a single-stream replay
// (sim.Decisions.Keyed false) has none either. It returns the threads spawned.
func SpawnThreads(w *sim.World, prefix string, body func(leader *sim.Proc, i int) func(t *sim.Proc)) ([]*sim.Proc, error) {
	d := w.Decisions().Stream(ThreadsStream)
	if !d.Keyed() || d.Intn(ThreadedOneIn) != ThreadedOneIn-1 {
		return nil, nil
	}
	var candidates []*sim.Proc
	for _, p := range w.Procs() {
		if strings.HasPrefix(p.Name(), prefix) {
			candidates = append(candidates, p)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	leader := candidates[d.Intn(len(candidates))]
	var threads []*sim.Proc
	extra := 1
	if d.Intn(SecondThreadOneIn) == SecondThreadOneIn-1 {
		extra = 2
	}
	for i := range extra {
		t, err := w.SpawnThread(leader, fmt.Sprintf("%s-t%d", leader.Name(), i+1), body(leader, i+1))
		if err != nil {
			return threads, err
		}
		threads = append(threads, t)
	}
	return threads, nil
}

// ThreadCalls counts, per process, the threads inside one kind of engine
// call, for the probes of two threads of one process in it at once.
type ThreadCalls map[int]int

// Enter notes that p begins the call and reports whether another thread of
// its process is inside it; the returned func notes its end.
func (c ThreadCalls) Enter(p *sim.Proc) (both bool, leave func()) {
	if len(p.Threads()) == 1 {
		return false, func() {}
	}
	id := p.ProcessID()
	both = c[id] > 0
	c[id]++
	return both, func() { c[id]-- }
}

// ThreadProbes are the simulator's thread probes every engine's campaign
// must fire: a thread spawned, two threads of one process inside engine
// calls at once, a leader that returned while its threads run, and a
// thread's call while its leader is a zombie.
var ThreadProbes = []string{sim.ProbeThread, sim.ProbeThreadsTwoCallers, sim.ProbeThreadLeaderExited,
	sim.ProbeZombieLeaderThreads}
