package dirleasework

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The loosened mode: the co-tenant (the same user) makes the state home
// group-writable, or a part of the claim directory's path other than 0700,
// as a careless `chmod -R g+w ~/.local/state` or a wrong umask does, and
// puts the mode back later. Every engine call checks those directories
// before it touches anything, so while the mode stands every call must
// refuse, and an operator's Inspect with it: an inspection that judges the
// claims of a state home every mutation refuses sends the operator to
// commands that cannot run, and says "free" of a home where nothing can be
// created.
//
// The oracle judges only calls that ran wholly while one loosening stood
// (watchLoose at the start, judgeLoose at the end, the same loosening and
// the directory still loose): one that succeeds fails the run.

// streamLooseMode is the co-tenant's decision stream for the loosened mode:
// a stream of its own, so runs where it draws no loosening keep every
// other draw they made before it existed.
const streamLooseMode = "cotenant-loose-mode"

// looseModeOdds: one co-tenant firing in looseModeOdds loosens a mode (or
// puts a loosened one back).
const looseModeOdds = 4

// looseMode is the co-tenant's standing loosening: the directory and the
// mode it had before.
type looseMode struct {
	path string
	was  fs.FileMode
}

// looseWatch is what a call saw of the loosened mode as it started.
type looseWatch struct {
	path       string
	generation uint64
}

// loosenOrRestore is the co-tenant's loosened-mode hazard. It reports true
// when it acted (the firing's other hazards are then not drawn).
func (dw *dirWorld) loosenOrRestore(w *sim.World) bool {
	d := w.Decisions().Stream(streamLooseMode)
	if d.Intn(looseModeOdds) != 0 {
		return false
	}
	if dw.loose.path != "" {
		dw.restoreLooseMode()
		return true
	}
	targets := dw.looseTargets()
	target := targets[d.Intn(len(targets))]
	info, err := dw.volume.Root().Lstat(target)
	if err != nil || !info.IsDir() {
		return false
	}
	mode := fs.FileMode(0o770)
	if target == dirleaseHome {
		mode = 0o775 // the home may be any mode but group- or world-writable
	}
	if !dw.chmodSynced(target, mode) {
		return false
	}
	dw.loose, dw.looseGeneration = looseMode{path: target, was: info.Perm()}, dw.looseGeneration+1
	w.Tracef("cotenant chmod %o %s", mode, target)
	w.Probe("cotenant-loosened-mode")
	return true
}

// looseTargets lists the directories whose mode the engine checks: the
// state home and each part of the claim directory's path.
func (dw *dirWorld) looseTargets() []string {
	targets := []string{dirleaseHome}
	dir := dirleaseHome
	for _, part := range dirlease.RootDir {
		dir = fspath.Join(dir, part)
		targets = append(targets, dir)
	}
	return targets
}

// restoreLooseMode puts the loosened directory's mode back (the co-tenant
// again, or the operator before the liveness phase).
func (dw *dirWorld) restoreLooseMode() {
	if dw.loose.path == "" {
		return
	}
	dw.chmodSynced(dw.loose.path, dw.loose.was)
	dw.world.Tracef("cotenant chmod %o %s (restored)", dw.loose.was, dw.loose.path)
	dw.loose, dw.looseGeneration = looseMode{}, dw.looseGeneration+1
}

// chmodSynced changes a directory's mode and syncs it, so that no power
// loss takes the change back behind the oracle.
func (dw *dirWorld) chmodSynced(dir string, mode fs.FileMode) bool {
	root := dw.volume.FS().View(dirleaseUID)
	if root.Chmod(dir, mode) != nil {
		return false
	}
	workkit.SyncRoot(root, dir)
	return true
}

// looseNow reports whether the standing loosening is on disk: its
// directory is there with a mode the engine refuses. (A power loss may
// take back a claim-directory part the engine made and never synced; the
// engine then makes it again, private.)
func (dw *dirWorld) looseNow() bool {
	if dw.loose.path == "" {
		return false
	}
	info, err := dw.volume.Root().Lstat(dw.loose.path)
	return err == nil && info.IsDir() && info.Perm() != dw.loose.was
}

// watchLoose is taken as a call starts.
func (dw *dirWorld) watchLoose() looseWatch {
	if !dw.looseNow() {
		return looseWatch{}
	}
	return looseWatch{path: dw.loose.path, generation: dw.looseGeneration}
}

// judgeLoose fails the run when a call (what, by p) that ran wholly while
// one loosening stood succeeded.
func (dw *dirWorld) judgeLoose(p *sim.Proc, what string, watch looseWatch, err error) {
	if watch.path == "" || watch.generation != dw.looseGeneration || !dw.looseNow() {
		return
	}
	if err == nil {
		dw.fail(fmt.Errorf("%s's %s succeeded while %s had mode %v, which every engine call must refuse",
			p.Name(), what, watch.path, dw.modeOf(watch.path)), false)
		return
	}
	if errors.Is(err, dirlease.ErrUnsafe) {
		dw.world.Probe("dirlease-loose-mode-refused")
		if what == "Inspect" {
			dw.world.Probe("dirlease-inspect-loose-mode-refused")
		}
	}
}

func (dw *dirWorld) modeOf(dir string) fs.FileMode {
	info, err := dw.volume.Root().Lstat(dir)
	if err != nil {
		return 0
	}
	return info.Perm()
}
