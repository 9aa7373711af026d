package dirleasework

import (
	"fmt"
	"github.com/leasekit/leasekit/internal/fspath"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// dirFS checks every move or removal a recovery makes against the ground
// truth, at the step it happens.
type dirFS struct {
	lease.FS
	dw *dirWorld
	p  *sim.Proc
	// recovering is set while the process runs Recover; operator for an
	// operator process (operators.go).
	recovering, operator bool
	// swappedReads are the claim files the running recovery pass last
	// opened while they held another claim's bytes (cotenant.go): a pass
	// that read such a file again after the swap was undone judged that
	// file on its own bytes (a compare that failed on the swapped bytes is
	// retried), and only a pass whose last read of some file was swapped
	// must fail (models.DirRecoverResult.ReadSwapped).
	swappedReads map[string]bool
	// metClaimSymlink is set once the recovery pass looked (Lstat) at a
	// claim file while the co-tenant's symlink stood there (symlinkclaim.go).
	metClaimSymlink bool
	// lastMove is an operator's last move of a claim file, until it is
	// moved back (operators.go); dryRun is set while an operator's
	// quarantine runs without --sha256 (clioperator.go).
	lastMove operatorMove
	dryRun   bool
	// passStep is the step the users' recovery pass began (users.go).
	passStep int
}

func (f *dirFS) Rename(oldpath, newpath string) error {
	f.judgeMove(oldpath, newpath)
	return f.FS.Rename(oldpath, newpath)
}

func (f *dirFS) RenameNoReplace(oldpath, newpath string) error {
	f.judgeMove(oldpath, newpath)
	data, claim := f.operatorMove(oldpath)
	err := f.FS.RenameNoReplace(oldpath, newpath)
	if claim && err == nil {
		f.lastMove = operatorMove{from: oldpath, to: newpath, track: f.noteQuarantined(oldpath, data)}
	} else if f.movedUnread(oldpath, err) {
		// operatorMove's read failed (a root read inside a process's call
		// meets that process's injected errors): the move is followed, the
		// claim it took is not known
		f.lastMove = operatorMove{from: oldpath, to: newpath}
	} else if f.operator && err == nil {
		f.noteMovedBack(oldpath, newpath)
	}
	workkit.NoteClaimRename(f.dw.world, "dirlease", oldpath, newpath, err)
	if err == nil && f.recovering && f.dw.quarantined[oldpath] != nil {
		delete(f.dw.quarantined, oldpath) // put back: the move was refused
	}
	return err
}

// movedUnread reports an operator's move of a claim file that succeeded
// although operatorMove could not read it first.
func (f *dirFS) movedUnread(oldpath string, err error) bool {
	return err == nil && f.operator && fspath.Dir(oldpath) == dirClaimsPath && isClaimFile(oldpath[len(dirClaimsPath)+1:])
}

func (f *dirFS) Remove(name string) error {
	f.judgeRemove(name)
	f.judgeClaimRelease(name)
	data, claim := f.operatorMove(name)
	err := f.FS.Remove(name)
	if claim && err == nil {
		// the unlink of a link+unlink move (where it went is not followed)
		f.lastMove = operatorMove{from: name, track: f.noteQuarantined(name, data)}
	}
	return err
}

// Lstat springs a co-tenant's trap armed on a tracked path when a recovery
// looks at it (cotenant.go's fireTraps acts before the next step).
func (f *dirFS) Lstat(name string) (lease.FileInfo, error) {
	info, err := f.FS.Lstat(name)
	f.noteClaimSymlinkLook(name)
	if t := f.dw.tracks[name]; t != nil && f.recovering && t.trap != replaceNone && err == nil && !t.sprung {
		t.sprung = true
		f.dw.sprung++
	}
	return info, err
}

// Stat notes a recovery's look at a claim file through a call that follows
// a symlink: the engine reads its claims with Lstat and O_NOFOLLOW, so a
// stat of a claim's name is a read through whatever stands there, the
// co-tenant's link included (noteClaimRead, as an open is).
func (f *dirFS) Stat(name string) (lease.FileInfo, error) {
	info, err := f.FS.Stat(name)
	if f.recovering && fspath.Dir(name) == dirClaimsPath {
		f.noteClaimRead(name)
	}
	return info, err
}

// ReadDir springs the co-tenant's claim-symlink trap at an engine's
// listing of the claim directory (symlinkclaim.go).
func (f *dirFS) ReadDir(name string) ([]lease.DirEntry, error) {
	entries, err := f.FS.ReadDir(name)
	if err == nil && name == dirClaimsPath {
		f.dw.springClaimSymlinkTrap()
	}
	return entries, err
}

// judgeMove runs after the scheduling point of a recovery's rename, so the
// ground truth is the one the call acts on. Moving a directory of a live
// owner (or of a running child the claim surely records) is a violation at
// once: its owner was alive when the pass judged it too. A foreign
// directory may be moved into quarantine, as long as it is put back and not
// removed (judgeRemove).
func (f *dirFS) judgeMove(oldpath, newpath string) {
	f.judgeUserDir(oldpath, "moves")
	t := f.dw.tracks[oldpath]
	if !f.recovering || t == nil || !t.claimed {
		return
	}
	f.judgeLive(t, "moves")
	f.judgeElsewhere(t, "moves")
	f.dw.races.moved(t, f.p)
	f.dw.quarantined[newpath] = &dirMoved{track: t, foreign: t.foreign}
}

// judgeRemove fails the run if a recovery removes a tracked directory, or
// the quarantine it moved one to, that is foreign or has a live owner.
func (f *dirFS) judgeRemove(name string) {
	if !f.recovering {
		return
	}
	f.judgeUserDir(name, "removes")
	if moved := f.dw.quarantined[name]; moved != nil {
		if moved.foreign {
			f.dw.fail(fmt.Errorf("%s's recovery removes %s, which holds the directory swapped in at %s (another identity)",
				f.p.Name(), name, moved.track.path), false)
		}
		f.judgeLive(moved.track, "removes")
		f.judgeElsewhere(moved.track, "removes")
		return
	}
	if t := f.dw.tracks[name]; t != nil && t.claimed {
		if t.foreign {
			f.dw.fail(fmt.Errorf("%s's recovery removes %s, a directory with another identity (swapped in)", f.p.Name(), name), false)
		}
		f.judgeLive(t, "removes")
		f.judgeElsewhere(t, "removes")
	}
}

func (f *dirFS) judgeLive(t *dirTrack, verb string) {
	dw := f.dw
	switch {
	case dw.Alive(t.owner):
		dw.fail(fmt.Errorf("%s's recovery %s %s of live owner %s", f.p.Name(), verb, t.path, t.owner.Name()), false)
	case t.child != nil && dw.Alive(t.child):
		dw.fail(fmt.Errorf("%s's recovery %s %s whose running child %s is alive", f.p.Name(), verb, t.path, t.child.Name()), false)
	}
}

// dirMoved is a tracked directory a recovery moved into quarantine.
type dirMoved struct {
	track   *dirTrack
	foreign bool
}
