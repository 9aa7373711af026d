package campaign

import (
	"strings"

	"github.com/leasekit/leasekit/sim"
	pathpkg "path"
)

// Footprint is what the partial-order reduction knows of a step: its
// process, the path it touched, whether it only read, whether it recorded
// into the history (History) or changed the workload's ledgers (Ledger),
// and whether it is visible: anything else, a non-filesystem call, a
// fault, a change of the process set, which is dependent on every step.
type Footprint struct {
	Proc    int
	Kind    string
	Path    string
	Write   bool
	History bool
	Ledger  bool
	Visible bool
}

// Step kinds by what they touch (sim's operation names). A handle call is
// charged to the handle's directory: the handle names the path it was
// opened by, and a rename may have moved its file since, so only the
// directory is known to contain it (renames are visible anyway).
var (
	porPathReads   = map[string]bool{"lstat": true, "stat": true, "readlink": true, "readdir": true, "fstatat": true}
	porPathWrites  = map[string]bool{"openfile": true, "mkdir": true, "mkdirtemp": true, "remove": true, "chmod": true, "openat": true, "unlinkat": true}
	porHandleReads = map[string]bool{"read": true, "fstat": true, "readdirent": true}
	porHandleWrite = map[string]bool{"write": true, "fsync": true, "close": true}
	// porLocal steps touch nothing shared at their scheduling point: a
	// process's first step and its return from a sleep run only its own
	// code (which Visible catches when it moves the history or a ledger).
	porLocal = map[string]bool{"start": true, "wake": true}
)

// footprintOf classifies an observed step; previous is the step before it.
func footprintOf(info, previous sim.StepInfo) Footprint {
	f := Footprint{Proc: info.Proc, Kind: info.Kind, Path: info.Path}
	switch {
	case porLocal[info.Kind]:
		f.Path = ""
	case porPathReads[info.Kind]:
	case porPathWrites[info.Kind]:
		f.Write = true
	case porHandleReads[info.Kind]:
		f.Path = handleDir(info.Kind, info.Path)
	case porHandleWrite[info.Kind]:
		f.Path, f.Write = handleDir(info.Kind, info.Path), true
	default:
		// start, renames, links, symlinks, the clock, sleeps,
		// inspections, identities, IDs: dependent on everything.
		f.Visible = true
	}
	f.History = info.Orders != previous.Orders
	f.Ledger = info.Workload != previous.Workload
	if len(info.Exits) > 0 || info.Processes != previous.Processes || info.Alive != previous.Alive {
		f.Visible = true
	}
	return f
}

// handleDir is the directory a handle call is charged to (a directory's
// own entries for readdirent).
func handleDir(kind, p string) string {
	if kind == "readdirent" || p == "/" || p == "" {
		return p
	}
	return pathpkg.Dir(p)
}

// Independent is the partial-order reduction's rule: two steps commute
// when they are of different processes, neither is visible, at most one
// of them recorded into the history or changed the workload's ledgers
// (the history check judges the order of calls and returns; a step that
// records nothing leaves every rank as it was), and one is local (a first
// step, a return from a sleep), or they touch unrelated paths (neither is
// the other or its ancestor), or both only read. Everything else is
// dependent.
func Independent(a, b Footprint) bool {
	if a.Proc == b.Proc || a.Visible || b.Visible {
		return false
	}
	if (a.History || a.Ledger) && (b.History || b.Ledger) {
		return false
	}
	if porLocal[a.Kind] || porLocal[b.Kind] || (!a.Write && !b.Write) {
		return true
	}
	return !relatedPaths(a.Path, b.Path)
}

// relatedPaths reports whether a and b are the same path or one contains
// the other.
func relatedPaths(a, b string) bool {
	if a == "" || b == "" {
		return true
	}
	return a == b || within(a, b) || within(b, a)
}

func within(path, dir string) bool {
	return dir == "/" || strings.HasPrefix(path, dir+"/")
}
