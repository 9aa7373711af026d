package workkit

import (
	"encoding/json"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// Torn and empty records after a power loss. The
// engines fsync a file before they publish its name, so a published record
// is never torn by a crash; but what a crashed writer had not published yet
// is: a temp (a lease guard or epoch temp, a statecas claim or data temp),
// or a record inside a prepare directory, whose name a later fsync made
// durable while its data was not (simfs's metadata-prefix and torn-data
// crash states) is empty or cut short. The engines meet those files: their
// cleanup must remove them once their writer is provably dead, or leave
// them alone, and never read one as a record (the liveness checks say the
// namespace still works; the campaigns' oracles say nothing was judged from
// one). LeftoverWatch finds them right after the power loss and says when
// they are gone.
const (
	// ProbePowerLossEmpty fires when a power loss left an empty file in an
	// engine's state directories.
	ProbePowerLossEmpty = "powerloss-empty-record"
	// ProbePowerLossTorn fires when it left a file torn: not empty, not
	// valid JSON and not hostile bytes, and either a record cut short (it
	// begins like one) or zeros where the data should be (the size landed
	// before the data: simfs's tear model, simfs/CRASHMODEL.md "Torn data").
	ProbePowerLossTorn = "powerloss-torn-record"
	// ProbePowerLossCleaned fires when such a file is gone later in the
	// run (an engine's cleanup removed it).
	ProbePowerLossCleaned = "powerloss-leftover-cleaned"
)

// leftoversMax bounds the files one watch follows.
const leftoversMax = 16

// LeftoverWatch follows the files power losses left empty or torn.
type LeftoverWatch struct {
	// Dirs are the state directories to scan (one level of subdirectories
	// is scanned too); Skip names subdirectories to leave out (evidence).
	Dirs []string
	Skip []string
	// Hostile reports bytes a hostile hook wrote (nil: none).
	Hostile func(data []byte) bool
	left    []string
}

// AfterPowerLoss scans the state directories on root right after a power
// loss reduced the volume, and fires the probes for what it finds.
// What earlier power losses left and is still there is followed anew.
func (lw *LeftoverWatch) AfterPowerLoss(w *sim.World, root lease.FS) {
	lw.left = lw.left[:0]
	for _, dir := range lw.Dirs {
		lw.scan(w, root, dir, 0)
	}
}

func (lw *LeftoverWatch) scan(w *sim.World, root lease.FS, dir string, depth int) {
	entries, err := root.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := fspath.Join(dir, e.Name)
		info, err := root.Lstat(name)
		switch {
		case err != nil:
		case info.IsDir() && depth == 0 && !lw.skipped(e.Name):
			lw.scan(w, root, name, depth+1)
		case info.Mode.IsRegular():
			lw.judge(w, root, name)
		}
	}
}

func (lw *LeftoverWatch) skipped(name string) bool {
	for _, skip := range lw.Skip {
		if name == skip {
			return true
		}
	}
	return false
}

// judge fires the probe for one file, and follows it when empty or torn.
func (lw *LeftoverWatch) judge(w *sim.World, root lease.FS, name string) {
	data, err := ReadRoot(root, name)
	if err != nil {
		return
	}
	probe := ""
	switch {
	case len(data) == 0:
		probe = ProbePowerLossEmpty
	case torn(data) && (lw.Hostile == nil || !lw.Hostile(data)):
		probe = ProbePowerLossTorn
	default:
		return
	}
	w.Probe(probe)
	w.Tracef("powerloss-leftover %s %s", probe, name)
	if len(lw.left) < leftoversMax {
		lw.left = append(lw.left, name)
	}
}

// torn reports whether non-empty data is what a torn write leaves of a
// record: not valid JSON, and a record's start or a zero-filled tail.
func torn(data []byte) bool {
	if json.Valid(data) {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(string(data)), "{") || data[len(data)-1] == 0
}

// Check fires ProbePowerLossCleaned for every followed file that is gone;
// it is called from the workload's invariant (cheap while nothing is
// followed).
func (lw *LeftoverWatch) Check(w *sim.World, root lease.FS) {
	if len(lw.left) == 0 {
		return
	}
	kept := lw.left[:0]
	for _, name := range lw.left {
		if _, err := root.Lstat(name); err != nil {
			w.Probe(ProbePowerLossCleaned)
			continue
		}
		kept = append(kept, name)
	}
	lw.left = kept
}
