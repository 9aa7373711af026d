package workkit

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/sim"
)

// LooseMode is the co-tenant's loosened-mode hazard: the same user makes
// an engine's state home group-writable, or a part of the path below it
// other than 0700, as a careless `chmod -R g+w ~/.local/state` or a wrong
// umask does, and puts the mode back later. Every engine call checks those
// directories before it touches anything, so while the mode stands every
// call must refuse, an operator's inspection with it: an inspection that
// judges the records of a state home every mutation refuses sends the
// operator to commands that cannot run, and says "free" of a home where
// nothing can be taken.
//
// A workload calls Fire from its co-tenant hook, Restore as its liveness
// phase starts (the operator puts the mode back), and Watch and Stood
// around each engine call: a call that Stood (ran wholly while one
// loosening stood, and it is still on disk) must not succeed.
type LooseMode struct {
	// Volume holds the state home; UID owns it.
	Volume *sim.Volume
	UID    uint32
	// Home is the state home; Parts the private path below it.
	Home  string
	Parts []string
	// Engine names the probes Judge fires (<Engine>-loose-mode-refused,
	// <Engine>-inspect-loose-mode-refused); Unsafe is the engine's error
	// kind for an unsafe directory.
	Engine string
	Unsafe error

	run        looseModeRun
	path       string
	was        fs.FileMode
	generation uint64
}

// LooseWatch is what a call saw of the loosened mode as it started.
type LooseWatch struct {
	path       string
	generation uint64
}

// streamLooseMode is the hazard's decision stream: a stream of its own, so
// runs where it draws nothing keep every other draw they made before it
// existed. Its answer 0 is "no hazard", so a seed file recorded before the
// stream existed (which replays it as zeros) and a shrunk run are runs
// without it.
const streamLooseMode = "cotenant-loose-mode"

// The hazard is drawn in one run in looseModeRunOdds (the other runs are
// the runs they were before it existed, draw for draw), and there at one
// co-tenant firing in looseModeOdds, which loosens a mode or puts a
// loosened one back.
const (
	looseModeRunOdds = 4
	looseModeOdds    = 2
)

// looseModeRun is whether this run draws the hazard: unknown until the
// co-tenant first fires.
type looseModeRun uint8

const (
	looseModeUndrawn looseModeRun = iota
	looseModeOn
	looseModeOff
)

// Fire is the hazard at one co-tenant firing. It reports true when it
// acted (the firing's other hazards are then not drawn).
func (m *LooseMode) Fire(w *sim.World) bool {
	d := w.Decisions().Stream(streamLooseMode)
	if m.run == looseModeUndrawn {
		m.run = looseModeOff
		if d.Intn(looseModeRunOdds) == looseModeRunOdds-1 {
			m.run = looseModeOn
		}
	}
	if m.run != looseModeOn || d.Intn(looseModeOdds) == 0 {
		return false
	}
	if m.path != "" {
		m.Restore(w)
		return true
	}
	targets := m.targets()
	target := targets[d.Intn(len(targets))]
	info, err := m.Volume.Root().Lstat(target)
	if err != nil || !info.IsDir() {
		return false
	}
	mode := fs.FileMode(0o770)
	if target == m.Home {
		mode = 0o775 // the home may have any mode but group- or world-writable
	}
	if !m.chmodSynced(target, mode) {
		return false
	}
	m.path, m.was, m.generation = target, info.Perm(), m.generation+1
	w.Tracef("cotenant chmod %o %s", mode, target)
	w.Probe("cotenant-loosened-mode")
	return true
}

// targets lists the directories whose mode an engine checks: the state
// home and each part of the path below it.
func (m *LooseMode) targets() []string {
	targets := []string{m.Home}
	dir := m.Home
	for _, part := range m.Parts {
		dir = fspath.Join(dir, part)
		targets = append(targets, dir)
	}
	return targets
}

// Restore puts the loosened directory's mode back (the co-tenant again, or
// the operator before a liveness phase).
func (m *LooseMode) Restore(w *sim.World) {
	if m.path == "" {
		return
	}
	m.chmodSynced(m.path, m.was)
	w.Tracef("cotenant chmod %o %s (restored)", m.was, m.path)
	m.path, m.generation = "", m.generation+1
}

// chmodSynced changes a directory's mode and syncs it, so that no power
// loss takes the change back behind the oracle.
func (m *LooseMode) chmodSynced(dir string, mode fs.FileMode) bool {
	root := m.Volume.FS().View(m.UID)
	if root.Chmod(dir, mode) != nil {
		return false
	}
	SyncRoot(root, dir)
	return true
}

// onDisk returns the standing loosening's mode when it is on disk: its
// directory is there with the loosened mode. (A power loss may take back a
// part an engine made and never synced; the engine then makes it again,
// private.) It looks as the harness (the root view), so the look neither
// draws nor gets the running process's injected faults.
func (m *LooseMode) onDisk(w *sim.World) (fs.FileMode, bool) {
	if m.path == "" {
		return 0, false
	}
	info, err := m.Volume.Root().Lstat(m.path)
	if err != nil {
		return 0, false
	}
	return info.Perm(), info.IsDir() && info.Perm() != m.was
}

// Watch is taken as an engine call starts.
func (m *LooseMode) Watch(w *sim.World) LooseWatch {
	if _, loose := m.onDisk(w); !loose {
		return LooseWatch{}
	}
	return LooseWatch{path: m.path, generation: m.generation}
}

// Judge is the verdict on p's engine call what (an inspection when
// inspection is set), which started with watch and ended with err. A call
// that ran wholly while one loosening stood must refuse: Judge returns the
// failure when it succeeded, and fires the Engine's probes when it was
// refused as Unsafe.
func (m *LooseMode) Judge(w *sim.World, p *sim.Proc, what string, inspection bool, watch LooseWatch, err error) (failure error) {
	if watch.path == "" || watch.generation != m.generation {
		return nil
	}
	mode, stood := m.onDisk(w)
	switch {
	case !stood:
	case err == nil:
		return fmt.Errorf("%s's %s succeeded while %s had mode %v, which every engine call must refuse",
			p.Name(), what, watch.path, mode)
	case errors.Is(err, m.Unsafe):
		w.Probe(m.Engine + "-loose-mode-refused")
		if inspection {
			w.Probe(m.Engine + "-inspect-loose-mode-refused")
		}
	}
	return nil
}
