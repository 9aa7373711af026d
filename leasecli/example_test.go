package leasecli_test

import (
	"fmt"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/simproc"
)

// A wrapper leads its process group and runs a command whose shell puts a
// job in the background. kill -9 of the wrapper ends the command (its
// parent-death signal) but not the job, which keeps the group: the lease's
// recorded owner is gone, yet its command tree still runs.
func ExampleHolderTreeRuns() {
	host := simproc.NewHost(simproc.HostConfig{Name: "alpha", BootID: "boot-1",
		SinceBoot: func() time.Duration { return time.Second }})
	shell, _ := host.Spawn(simproc.SpawnSpec{Exe: "/bin/sh", UID: 1000})
	wrapper, _ := host.Fork(shell, simproc.ForkSpec{Exe: "/usr/bin/leasereal"})
	_ = host.Setpgid(wrapper, 0)
	owner := recordOf(host, wrapper)
	command, _ := host.Fork(wrapper, simproc.ForkSpec{Exe: "/bin/sh"})
	host.SetPdeathsig(command, 9)
	job, _ := host.Fork(command, simproc.ForkSpec{Exe: "/usr/bin/job"})

	judge := func(event string) {
		next, _ := host.Fork(shell, simproc.ForkSpec{Exe: "/usr/bin/leasereal"})
		self, _ := host.Inspector(next).Current()
		verdict, _ := leasecli.HolderTreeRuns(owner, self, host.Inspector(next), host.Groups(next))
		fmt.Printf("%-14s tree runs: %v\n", event, verdict.Runs)
		host.Kill(next)
	}
	host.Kill(wrapper)
	judge("wrapper killed")
	host.Kill(job)
	judge("job exited")
	// Output:
	// wrapper killed tree runs: true
	// job exited     tree runs: false
}

// recordOf is the owner record a lease engine running as p writes.
func recordOf(host *simproc.Host, p *simproc.Proc) lease.Owner {
	id, _ := host.Inspector(p).Current()
	return lease.Owner{PID: id.PID, ProcessStartIdentity: id.StartTime, BootIdentity: id.BootID,
		Hostname: id.Hostname, PIDNamespace: id.PIDNamespace}
}
