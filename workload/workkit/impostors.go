package workkit

import (
	"github.com/leasekit/leasekit/sim"
)

// PIDFree reports whether dead's PID is free in its host's PID namespace
// again (no zombie holds it), so a PID-reuse impostor can take it.
func PIDFree(dead *sim.Proc) bool {
	table := dead.Table()
	return dead.Host().Table().Lookup(table.NS, table.PID) == nil
}

// SpawnOnDeadPID spawns a PID-reuse impostor (issue 16 item 2) on dead's
// host, PID namespace and PID, which PIDFree must have reported free: with
// dead's own executable in half the draws (never at dead's start tick,
// where it would be dead's exact twin, which no identity rule can tell
// apart), else with exe. It fires the probes <prefix>-pid-impostor,
// -same-exe and -across-boot, and returns nil when the spawn fails.
func SpawnOnDeadPID(w *sim.World, dead *sim.Proc, spec sim.ProcSpec, prefix string, body func(*sim.Proc)) *sim.Proc {
	host, table := dead.Host(), dead.Table()
	sameExe := w.Decisions().Intn(2) == 0 && host.Table().TicksNow() != table.StartTicks
	if sameExe {
		spec.Exe = table.ExePath
	}
	spec.PID, spec.Namespace = table.PID, table.NS
	p, err := w.Spawn(host, spec, body)
	if err != nil {
		return nil
	}
	w.Probe(prefix + "-pid-impostor")
	if sameExe {
		w.Probe(prefix + "-pid-impostor-same-exe")
	}
	if p.Table().Boot != table.Boot {
		w.Probe(prefix + "-pid-impostor-across-boot")
	}
	return p
}
