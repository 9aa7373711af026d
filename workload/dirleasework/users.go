package dirleasework

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/sim"
)

// Users at the command line (issue 30 item 1): user processes act as
// `leasereal dirlease run --path P -- CMD` does, on paths the user named
// rather than fresh ones: the directory exists (the user makes it again
// when it is gone), Create takes a raw-working lease on it, the lease goes
// launching, a child starts and is recorded running, the run waits for the
// child, settles and releases, and leaves the directory. Two users often
// name the same path at once; a user killed at any step (kill -9) is run
// again on the same path (the ordinary retry). A run refused as busy gives
// up, or, in half the runs (`-w`), waits and tries again, a bounded number
// of times. Recovery processes run `leasereal dirlease recover` beside them.
//
// They use a state home of their own (/home/cli): the claims there are not
// in the history the porcupine model checks (the model has one claim per
// path by construction); the ground truth judges them instead. What must
// hold: a recovery never moves or removes a directory that a live claim
// names (a claim whose Create returned and whose Release has not, with its
// owner, or the running child it surely records, alive).

const (
	userHome = "/home/cli"
	userWork = "/home/cli/work"
	// userPaths is how many paths the users share.
	userPaths = 2
	// userWaitTries bounds a waiting run's Create attempts; userChildPolls
	// bounds a run's wait for its child.
	userWaitTries  = 12
	userChildPolls = 40
)

// userClaim is the ground truth about one user's run on a path.
type userClaim struct {
	owner *sim.Proc
	// child is the running child the claim surely records (nil if none or
	// unsure); held is set from Create's return until Release's.
	child *sim.Proc
	held  bool
}

// setupUsers makes the users' state home and working directories and
// starts the users and their recoverers.
func (dw *dirWorld) setupUsers() error {
	if dw.opts.Users == 0 {
		return nil
	}
	root := dw.volume.FS()
	root.MkdirAll(userWork, 0o700, dirleaseUID)
	dw.userClaims = make(map[string][]*userClaim)
	for i := 0; i < dw.opts.Users; i++ {
		if _, err := dw.spawnAt(dw.places.Deal(i), fmt.Sprintf("user-%d", i), dw.user); err != nil {
			return err
		}
		dw.creators++
	}
	if _, err := dw.spawnAt(dw.places.Deal(1), "user-recover-0", dw.userRecoverer); err != nil {
		return err
	}
	dw.creators++
	return nil
}

func userPath(i int) string { return fspath.Join(userWork, fmt.Sprintf("shared-%d", i)) }

// userConfig is the users' engine configuration, on their state home.
func (dw *dirWorld) userConfig(p *sim.Proc) (dirlease.Config, *dirFS) {
	cfg, fsys := dw.config(p, p.Clock())
	cfg.StateHome = userHome
	return cfg, fsys
}

// user runs the command a few times, each on a path drawn from the shared
// ones.
func (dw *dirWorld) user(p *sim.Proc) {
	d := dw.world.Decisions()
	cfg, _ := dw.userConfig(p)
	for i := 0; i < max(1, dw.opts.OpsPerProc/2); i++ {
		dw.userRun(p, cfg, userPath(d.Intn(userPaths)), d.Intn(2) == 0)
		_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(4))*time.Millisecond)
	}
}

// userRun is one `dirlease run` (with -w when wait is set).
func (dw *dirWorld) userRun(p *sim.Proc, cfg dirlease.Config, path string, wait bool) {
	w, d := dw.world, dw.world.Decisions()
	if _, err := p.FS().Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if p.FS().Mkdir(path, 0o700) != nil {
			return
		}
	}
	held := dw.userCreate(p, cfg, path, wait)
	if held == nil {
		return
	}
	uc := &userClaim{owner: p, held: true}
	dw.userClaims[path] = append(dw.userClaims[path], uc)
	ctx := context.Background()
	if held.Update(ctx, dirlease.PhaseLaunching, 0) != nil {
		dw.userRelease(p, held, uc)
		return
	}
	child, err := dw.spawnAt(placeOf(p), p.Name()+"-child", dw.childBody)
	if err != nil {
		return
	}
	if held.Update(ctx, dirlease.PhaseRunning, child.Table().PID) == nil {
		uc.child = child
		w.Probe("dirlease-user-running")
	}
	for poll := 0; poll < userChildPolls && dw.Alive(child); poll++ {
		_ = p.Clock().Sleep(ctx, time.Duration(1+d.Intn(3))*time.Millisecond)
	}
	uc.child = nil // unsure from the settle on: never blame a recovery for it
	if held.Update(ctx, dirlease.PhaseSettled, 0) == nil {
		dw.userRelease(p, held, uc)
	}
}

// userCreate is the run's Create, retried while busy when wait is set.
func (dw *dirWorld) userCreate(p *sim.Proc, cfg dirlease.Config, path string, wait bool) *dirlease.Lease {
	w, d := dw.world, dw.world.Decisions()
	for try := 0; try < userWaitTries; try++ {
		window := time.Duration(d.Intn(dirleaseLaunchWindowMs)) * time.Millisecond
		request := dirlease.CreateRequest{Role: dirlease.RoleRawWorking, Path: path,
			RecoverAfterMs: p.Clock().Now().Add(window).UnixMilli()}
		held, err := dirlease.Create(context.Background(), cfg, request)
		switch {
		case err == nil:
			w.Probe("dirlease-user-held")
			if try > 0 {
				w.Probe("dirlease-user-waited")
			}
			return held
		case !isBusy(err):
			return nil
		}
		w.Probe("dirlease-user-busy")
		if !wait {
			return nil
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(6))*time.Millisecond)
	}
	return nil
}

// isBusy reports a refusal of a held directory.
func isBusy(err error) bool { return errors.Is(err, dirlease.ErrBusy) }

func (dw *dirWorld) userRelease(p *sim.Proc, held *dirlease.Lease, uc *userClaim) {
	if held.Release(context.Background()) == nil {
		uc.held = false
		dw.world.Probe("dirlease-user-released")
	}
}

// userRecoverer runs `dirlease recover` on the users' state home.
func (dw *dirWorld) userRecoverer(p *sim.Proc) {
	d := dw.world.Decisions()
	cfg, fsys := dw.userConfig(p)
	for i := 0; i < dw.opts.OpsPerProc; i++ {
		fsys.recovering = true
		report, err := dirlease.Recover(context.Background(), cfg)
		fsys.recovering = false
		if err == nil && report.Recovered > 0 {
			dw.world.Probe("dirlease-user-recovered")
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(8))*time.Millisecond)
	}
}

// judgeUserDir fails the run when a recovery moves or removes a user's
// directory that a live claim names.
func (f *dirFS) judgeUserDir(name, verb string) {
	if !f.recovering {
		return
	}
	for _, uc := range f.dw.userClaims[name] {
		switch {
		case !uc.held:
		case f.dw.Alive(uc.owner):
			f.dw.fail(fmt.Errorf("%s's recovery %s %s, which the live claim of %s names", f.p.Name(), verb, name, uc.owner.Name()), false)
		case uc.child != nil && f.dw.Alive(uc.child):
			f.dw.fail(fmt.Errorf("%s's recovery %s %s, which a claim of %s names whose running child %s is alive",
				f.p.Name(), verb, name, uc.owner.Name(), uc.child.Name()), false)
		}
	}
}
