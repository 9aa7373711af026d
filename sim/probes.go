package sim

import (
	"slices"

	"github.com/leasekit/leasekit/internal/fspath"
)

// Coverage probes shared by every workload, and the campaign-level lists
// of probes each engine's campaign declares it must fire.
//
// ProbeCrashBetweenRenameAndDirSync fires when a process dies (SIGKILL or
// power loss) after a successful rename into or out of a directory D and
// before any process fsynced D, while its volume still held operations that
// were not durable (simfs Pending > 0). Soundness: a successful fsync of D
// by any process clears the mark, so the probe never fires for a rename
// already proved durable; Pending == 0 means everything is durable, so it
// does not fire then either. It may fire when the pending operation is
// another of the volume's, which still means the process died inside its
// rename-to-fsync window before the rename was proved durable.
const ProbeCrashBetweenRenameAndDirSync = "crash-between-rename-and-dir-fsync"

// noteRename marks the directory a successful rename wrote into (and the
// one it removed from) as needing a directory fsync.
func (p *Proc) noteRename(oldpath, newpath string, err error) {
	if err != nil {
		return
	}
	for _, dir := range []string{fspath.Dir(newpath), fspath.Dir(oldpath)} {
		if !slices.Contains(p.renamedInto, dir) {
			p.renamedInto = append(p.renamedInto, dir)
		}
	}
}

// noteSync clears dir from every live process's pending renames on a
// successful fsync of dir (a file fsync of another name clears nothing).
func (w *World) noteSync(name string, err error) {
	if err != nil || !w.anyRenamedInto() {
		return // nothing to clear: skip cleaning the path
	}
	name = fspath.Clean(name)
	for _, p := range w.procs {
		if i := slices.Index(p.renamedInto, name); i >= 0 {
			p.renamedInto = slices.Delete(p.renamedInto, i, i+1)
		}
	}
}

// anyRenamedInto reports whether some process has a rename not yet fsynced.
func (w *World) anyRenamedInto() bool {
	for _, p := range w.procs {
		if len(p.renamedInto) > 0 {
			return true
		}
	}
	return false
}

// pendinger is what the probe needs of a volume: simfs's Pending.
type pendinger interface{ Pending() int }

// noteRenameCrash fires the probe for a process about to die.
func (w *World) noteRenameCrash(p *Proc) {
	if len(p.renamedInto) == 0 {
		return
	}
	p.renamedInto = p.renamedInto[:0]
	v, ok := p.host.volume.fs.(*SimfsVolume)
	if !ok {
		return
	}
	var fs pendinger = v.FS
	if fs.Pending() > 0 {
		w.Probe(ProbeCrashBetweenRenameAndDirSync)
	}
}

// DeclaredProbes returns the probes a campaign of engine ("lease",
// "admission" or "dirlease") with every fault enabled must fire at least
// once; a campaign report lists the missing ones (MissingProbes).
func DeclaredProbes(engine string) []string {
	switch engine {
	case "lease":
		return []string{
			"lease-reclaimed",                  // stale owner reclaimed
			"lease-stale-guard-reclaimed",      // stale guard reclaimed
			"pid-reused",                       // PID reused
			"zombie",                           // zombie seen
			"lease-refused-remote-owner",       // remote refusal
			ProbeCrashBetweenRenameAndDirSync,  // crash between rename and dir fsync
			"lease-rename-race-refused",        // rename race refused
			"lease-reclaim-observed",           // LeaseReclaim event in the history
			"lease-probe-acquired",             // liveness probe
			"lease-acquired",                   // disposition: acquired
			"lease-held",                       // disposition: held by a live owner
			"lease-refused-unverifiable-owner", // disposition: unverifiable
			"lease-refused-corrupt-owner",      // disposition: corrupt
			// a boot-time twin (owner's PID, start tick, executable) after a reboot
			"lease-bystander-on-owner-pid-and-tick-after-reboot",
		}
	case "admission":
		return []string{
			"admission-stale-owner-reclaimed",
			"admission-stale-guard-reclaimed",
			"pid-reused",
			"zombie",
			ProbeCrashBetweenRenameAndDirSync,
			"admission-rename-race-refused",
			"admission-legacy-recovered",
			"admission-disposition-active",
			"admission-disposition-indeterminate",
			"admission-disposition-recoverable",
			"admission-aba-refused",
			"admission-helper-bound",
			"admission-cleanup-unsafe",
			"admission-liveness-acquired",
		}
	case "dirlease":
		return []string{
			"dirlease-stale-owner-recovered",
			"dirlease-stale-guard-reclaimed",
			"pid-reused",
			"zombie",
			ProbeCrashBetweenRenameAndDirSync,
			"dirlease-rename-race-refused",
			"dirlease-disposition-active",
			"dirlease-disposition-indeterminate",
			"dirlease-disposition-recoverable",
			"dirlease-published",
			"dirlease-swap",
			"dirlease-recover-raced-create",
			"dirlease-liveness-recovered",
		}
	}
	return nil
}

// MissingProbes returns the declared probes of engine that never fired in
// probes (a campaign's summed counts), in declaration order.
func MissingProbes(engine string, probes map[string]int) []string {
	var missing []string
	for _, name := range DeclaredProbes(engine) {
		if probes[name] == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}
