package simproc_test

import (
	"fmt"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simproc"
)

// A lease records its owner's identity. When the owner exits and a later
// process reuses its PID, the inspector reports a live process with another
// start time, and lease.ClassifyRecord calls the record stale. An unreaped
// zombie keeps the PID: single-threaded it is dead, but a zombie leader whose
// other threads still run is the owner, still alive.
func ExampleHost_Inspector() {
	var sinceBoot time.Duration
	host := simproc.NewHost(simproc.HostConfig{
		Name: "alpha", BootID: "boot-1",
		PIDMax:    3, // PIDs 1 and 2 only, so a freed PID is reused at once
		SinceBoot: func() time.Duration { return sinceBoot },
	})
	checker := spawn(host) // PID 1: the process that inspects
	self, err := host.Inspector(checker).Current()
	must(err)

	owner := spawn(host) // PID 2 at tick 0
	record := identity(host, owner)
	report := func(event string) {
		seen := host.Inspector(checker).Inspect(record.PID)
		verdict := lease.ClassifyRecord(record, self, host.Inspector(checker))
		line := fmt.Sprintf("%-22s pid %d %-6v", event, record.PID, seen.Kind)
		if seen.Kind == lease.InspectLive {
			line += fmt.Sprintf(" %s threads=%d", stateName(seen.State), seen.Threads)
		}
		line += fmt.Sprintf(" -> %v", verdict.Kind)
		if verdict.Reason != "" {
			line += ": " + verdict.Reason
		}
		fmt.Println(line)
	}
	report("owner running")

	sinceBoot += time.Second
	host.Exit(owner)
	report("owner exited")
	reuser := spawn(host) // takes PID 2 again, at tick 100
	fmt.Println("reused pid:", reuser.PID, "start ticks:", record.StartTime, "->", reuser.StartTicks)
	report("pid reused")

	host.Exit(reuser)
	owner = spawn(host)
	record = identity(host, owner)
	host.ExitZombie(owner, 1)
	report("zombie, 1 thread")
	host.Reap(owner)

	owner = spawn(host)
	record = identity(host, owner)
	host.ExitZombie(owner, 3)
	report("zombie leader, threads")
	// Output:
	// owner running          pid 2 live   running threads=1 -> live
	// owner exited           pid 2 absent -> stale: PID is absent
	// reused pid: 2 start ticks: 0 -> 100
	// pid reused             pid 2 live   running threads=1 -> stale: PID start identity changed
	// zombie, 1 thread       pid 2 live   zombie threads=1 -> stale: PID is a single-threaded zombie
	// zombie leader, threads pid 2 live   zombie threads=3 -> live
}

func stateName(state lease.ProcessState) string {
	if state == lease.StateZombie {
		return "zombie"
	}
	return "running"
}

func spawn(host *simproc.Host) *simproc.Proc {
	proc, err := host.Spawn(simproc.SpawnSpec{Exe: "/usr/bin/agent", UID: 1000})
	must(err)
	return proc
}

// identity is what a lease engine running as proc writes into its record.
func identity(host *simproc.Host, proc *simproc.Proc) lease.ProcessIdentity {
	id, err := host.Inspector(proc).Current()
	must(err)
	return id
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
