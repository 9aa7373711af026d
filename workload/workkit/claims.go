package workkit

import (
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// NoteClaimRename fires the mutation-claim probes of engine: an orphaned
// claim moved aside (stale guard reclaimed) and a displaced one moved back
// (the inode changed under the recoverer: a rename race refused).
func NoteClaimRename(w *sim.World, engine, oldpath, newpath string, err error) {
	if err != nil {
		return
	}
	switch {
	case strings.HasSuffix(oldpath, ".mutation") && strings.HasSuffix(newpath, ".orphan"):
		w.Probe(engine + "-stale-guard-reclaimed")
	case strings.HasSuffix(oldpath, ".orphan") && strings.HasSuffix(newpath, ".mutation"):
		w.Probe(engine + "-rename-race-refused")
	}
}
