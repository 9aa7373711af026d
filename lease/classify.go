package lease

import (
	"strconv"

	"github.com/leasekit/leasekit/internal/fspath"
)

// classify applies ClassifyRecord to a record. Schema-1 records (the original's)
// carry neither the executable's inode nor a PID namespace; for them the
// the original implementation's rules apply: the record is assumed to be in the caller's namespace,
// and the executable is compared by cleaned path, so an upgraded owner whose
// /proc/PID/exe reads "... (deleted)" is judged stale, exactly as the original
// judged it.
func (m *Manager) classify(rec ProcessIdentity, legacy bool, current ProcessIdentity) OwnerState {
	if !legacy {
		return ClassifyRecord(rec, current, m.inspector)
	}
	rec.PIDNamespace = current.PIDNamespace
	rec.ExecutableDev, rec.ExecutableIno = 0, 0
	return ClassifyRecord(rec, current, pathInspector{inner: m.inspector, executable: rec.Executable})
}

// pathInspector turns ClassifyRecord's inode comparison into the original's
// path comparison: a live inspection reports inode 0:0 when its executable
// path equals the record's, and 0:1 (a mismatch with the record's 0:0)
// otherwise.
type pathInspector struct {
	inner      Inspector
	executable string
}

func (p pathInspector) Current() (ProcessIdentity, error) { return p.inner.Current() }

func (p pathInspector) Inspect(pid int) Inspection {
	inspection := p.inner.Inspect(pid)
	if inspection.Kind == InspectLive {
		inspection.Identity.ExecutableDev = 0
		inspection.Identity.ExecutableIno = 0
		if fspath.Clean(inspection.Identity.Executable) != fspath.Clean(p.executable) {
			inspection.Identity.ExecutableIno = 1
		}
	}
	return inspection
}

// sameProcess is IsSameProcess with the schema-1 rules of classify.
func sameProcess(rec ProcessIdentity, legacy bool, current ProcessIdentity) bool {
	if legacy {
		if fspath.Clean(rec.Executable) != fspath.Clean(current.Executable) {
			return false
		}
		rec.PIDNamespace = current.PIDNamespace
		rec.ExecutableDev, rec.ExecutableIno = current.ExecutableDev, current.ExecutableIno
	}
	return IsSameProcess(rec, current)
}

// humanFor names the operator-needed state behind a remote or unknown
// verdict, if there is one.
func humanFor(state OwnerState, rec ProcessIdentity, legacy bool, current ProcessIdentity) HumanState {
	switch {
	case state.Kind == OwnerRemote:
		return HumanRemoteRecord
	case state.Kind == OwnerUnknown && !legacy && rec.PIDNamespace != current.PIDNamespace:
		return HumanForeignNamespace
	}
	return HumanNone
}

// remoteAdvice is appended to every remote diagnostic: the engine cannot
// tell a live remote owner from a dead host or a renamed container. It is
// built by concatenation (fmt boxed each argument), as
// fmt.Sprintf("%s %s names host %q (PID %d); ... move %s into quarantine/")
// would write it (TestRemoteAdviceIsItsFormat).
func remoteAdvice(what, file string, rec ProcessIdentity) string {
	return what + " " + file + " names host " + strconv.Quote(rec.Hostname) + " (PID " + strconv.Itoa(rec.PID) +
		"); it cannot be inspected from here and is never reclaimed automatically. If that host is gone, or is " +
		"this container rebuilt under a new hostname, an operator must move " + file + " into quarantine/"
}
