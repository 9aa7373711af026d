package sim

import (
	"slices"

	"github.com/leasekit/leasekit/internal/fspath"
)

// Coverage probes the simulator fires itself, for every workload (each
// engine's declared list is campaign.Engine.Probes).
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
