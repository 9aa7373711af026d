package dirleasework

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Users at the command line: user processes act as
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
// In one run in userLegacyOneIn the run is one of the release before one
// lease per directory, still running across the upgrade: it writes its
// claim as that release did, without looking at the others, holds it
// while it works, and removes it. Two claims then name one directory, as
// they did before: a recovery must still leave the directory of a live one
// that was there when the pass began (a claim of that release written
// later is one no pass can know of: that release's own defect).
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
	userWaitTries    = 12
	userChildPolls   = 40
	userBindAttempts = 4
	// userLegacyOneIn: one run in userLegacyOneIn is the earlier release's.
	userLegacyOneIn = 4
)

// userClaim is the ground truth about one user's run on a path.
type userClaim struct {
	owner *sim.Proc
	// child is the running child the claim surely records (nil if none or
	// unsure); held is set from Create's return until Release's.
	child *sim.Proc
	held  bool
	// legacy marks a claim the earlier release wrote; since is the step
	// its write returned.
	legacy bool
	since  int
	// file is the claim file; releasing is set while its Release runs (the
	// claim is held until the file is gone).
	file      string
	releasing bool
	// releaseFrom is the step its last release attempt began (0: none): a
	// failed attempt moves the file away and back, so a pass may have
	// found it gone (a claim beside another is the earlier release's doing).
	releaseFrom int
}

// holds reports whether the claim still names its directory: held, and,
// while its release runs, its file still there.
func (uc *userClaim) holds(root lease.FS) bool {
	if !uc.held {
		return false
	}
	if !uc.releasing {
		return true
	}
	_, err := root.Lstat(uc.file)
	return err == nil
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
	dw.userCommands = &workkit.CLICommands{World: dw.world, Alive: dw.Alive, Polls: userChildPolls,
		Fail:    func(err error) { dw.fail(err, false) },
		Checked: "dirlease-user-command-checked", Outlived: "dirlease-user-child-outlived-wait",
		Spawn: func(wrapper *sim.Proc) (*sim.Proc, error) {
			return dw.spawnAt(placeOf(wrapper), wrapper.Name()+"-child", dw.childBody)
		}}
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
		path := userPath(d.Intn(userPaths))
		if d.Intn(userLegacyOneIn) == 0 {
			dw.legacyRun(p, cfg, path)
		} else {
			dw.userRun(p, cfg, path, d.Intn(2) == 0)
		}
		_ = p.Clock().Sleep(context.Background(), time.Duration(d.Intn(4))*time.Millisecond)
	}
}

// userRun is one `dirlease run` (with -w when wait is set), run by the
// code `leasereal dirlease run` runs (leasecli.RunDirlease), with the
// user's process as the wrapper and a simulated child (workkit.CLICommands). Its
// events keep the ground truth: the claim is held from Create's return
// until its Release returns, and surely records its child from the
// running record until the settle.
func (dw *dirWorld) userRun(p *sim.Proc, cfg dirlease.Config, path string, wait bool) {
	if _, err := p.FS().Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if p.FS().Mkdir(path, 0o700) != nil {
			return
		}
	}
	d := dw.world.Decisions()
	run := leasecli.DirleaseRun{Path: path, Command: []string{"work"},
		RecoverAfter: time.Duration(d.Intn(dirleaseLaunchWindowMs)) * time.Millisecond,
		BusyPoll:     time.Duration(1+d.Intn(6)) * time.Millisecond,
		BindAttempts: userBindAttempts, BindPause: time.Millisecond}
	if wait {
		run.Wait = userWaitTries * run.BusyPoll
	}
	var uc *userClaim
	run.Events = leasecli.DirleaseEvents{
		Busy: func() { dw.world.Probe("dirlease-user-busy") },
		Held: func(held *dirlease.Lease, attempts int) {
			uc = &userClaim{owner: p, held: true, file: held.ClaimPath()}
			dw.userClaims[path] = append(dw.userClaims[path], uc)
			dw.userHeld(p, path, held, attempts)
		},
		Running: func(child leasecli.Child) {
			uc.child = child.(*workkit.CLICommand).Proc
			dw.world.Probe("dirlease-user-running")
		},
		Settling:  func() { uc.child = nil }, // unsure from the settle on: never blame a recovery for it
		Releasing: func() { uc.releasing, uc.releaseFrom = true, dw.world.Step() },
		Released: func() {
			uc.held = false
			dw.world.Probe("dirlease-user-released")
		},
	}
	_, _ = leasecli.RunDirlease(context.Background(), cfg, run, dw.userCommands.Starter(p, path))
}

// userHeld traces a user's Create that took the lease.
func (dw *dirWorld) userHeld(p *sim.Proc, path string, held *dirlease.Lease, attempts int) {
	dw.world.Tracef("user-held %s %s %s", p.Name(), path, held.Claim().ID)
	dw.world.Probe("dirlease-user-held")
	if attempts > 1 {
		dw.world.Probe("dirlease-user-waited")
	}
}

// legacyRun is a run of the release before one lease per directory: its
// claim (phase preparing, this process its owner) is written as that
// release's Create wrote it, with no look at the other claims; the run
// works, then removes it.
func (dw *dirWorld) legacyRun(p *sim.Proc, cfg dirlease.Config, path string) {
	claim, ok := dw.legacyClaim(p, cfg, path)
	if !ok {
		return
	}
	env := cfg.Env(dirleaseUID)
	root := fspath.Join(append([]string{userHome}, dirlease.RootDir...)...)
	if _, err := statecas.EnsurePrivateDir(env, dirleaseUID, userHome, dirlease.RootDir...); err != nil {
		return
	}
	file, data := fspath.Join(root, claim.ID+".json"), claim.Bytes()
	if created, err := statecas.CreateIfAbsent(env, file, data); err != nil || !created {
		return
	}
	uc := &userClaim{owner: p, held: true, legacy: true, since: dw.world.Step(), file: file, releasing: true}
	dw.userClaims[path] = append(dw.userClaims[path], uc)
	dw.world.Probe("dirlease-user-legacy-held")
	dw.world.Tracef("user-legacy-held %s %s %s", p.Name(), path, claim.ID)
	_ = p.Clock().Sleep(context.Background(), time.Duration(1+dw.world.Decisions().Intn(30))*time.Millisecond)
	uc.releaseFrom = dw.world.Step()
	if removed, err := statecas.RemoveIfUnchanged(env, file, statefile.SHA256Hex(data)); err == nil && removed {
		uc.held = false
	}
}

// legacyClaim is the claim the earlier release wrote for path.
func (dw *dirWorld) legacyClaim(p *sim.Proc, cfg dirlease.Config, path string) (dirlease.Claim, bool) {
	if _, err := p.FS().Lstat(path); errors.Is(err, fs.ErrNotExist) && p.FS().Mkdir(path, 0o700) != nil {
		return dirlease.Claim{}, false
	}
	current, err := p.Inspector().Current()
	dir, dirErr := p.FS().Lstat(path)
	parent, parentErr := p.FS().Lstat(userWork)
	if err != nil || dirErr != nil || parentErr != nil {
		return dirlease.Claim{}, false
	}
	dirID, dirOK := dir.Identity()
	parentID, parentOK := parent.Identity()
	if !dirOK || !parentOK || !dir.IsDir() {
		return dirlease.Claim{}, false
	}
	now := p.Clock().Now().UnixMilli()
	return dirlease.Claim{
		SchemaVersion: dirlease.SchemaVersion, ID: cfg.IDs.NewID(), Role: dirlease.RoleRawWorking,
		Path: path, ParentPath: userWork, ParentIdentity: dirlease.IdentityOf(parentID),
		DirectoryIdentity: dirlease.IdentityOf(dirID), Owner: statecas.OwnerOf(current), Phase: dirlease.PhasePreparing,
		CreatedAtMs: now, RecoverAfterMs: now, Revision: cfg.IDs.NewID(),
		CreatedAtBootMs: p.Host().Monotonic().Milliseconds(),
	}, true
}

// userRecoverer runs `dirlease recover` on the users' state home.
func (dw *dirWorld) userRecoverer(p *sim.Proc) {
	d := dw.world.Decisions()
	cfg, fsys := dw.userConfig(p)
	for i := 0; i < dw.opts.OpsPerProc; i++ {
		fsys.recovering, fsys.passStep = true, dw.world.Step()
		report, err := dirlease.Recover(context.Background(), cfg)
		fsys.recovering = false
		if err == nil && report.Recovered > 0 {
			dw.world.Probe("dirlease-user-recovered")
		}
		if err == nil && report.Replaced > 0 {
			dw.world.Probe("dirlease-user-recover-replaced")
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
		case !uc.holds(f.dw.volume.Root()), uc.legacy && uc.since >= f.passStep, uc.releaseFrom > 0:
		case f.dw.Alive(uc.owner):
			f.dw.fail(fmt.Errorf("%s's recovery %s %s, which the live claim of %s names", f.p.Name(), verb, name, uc.owner.Name()), false)
		case uc.child != nil && f.dw.Alive(uc.child):
			f.dw.fail(fmt.Errorf("%s's recovery %s %s, which a claim of %s names whose running child %s is alive",
				f.p.Name(), verb, name, uc.owner.Name(), uc.child.Name()), false)
		}
	}
}

// withdrawBlocked reports whether a Create failed because it could not
// withdraw the claim it had written while another process held that
// claim's mutation claim (an operator's Quarantine or a recovery judging
// it, stopped or slow): the engine then leaves the claim, names it in its
// error, and recovery takes it once its owner is gone. The history
// records the Create as unknown, so the claim is a phantom the model
// allows; the left-nothing oracle must not call it a leak (dirlease seed
// 83050372 of a 100,000-seed campaign: an operator stopped for 50 s
// while it held the mutation claim of the creator's claim).
func (dw *dirWorld) withdrawBlocked(err error) bool {
	var refusal *dirlease.Error
	if !errors.As(err, &refusal) || refusal.Kind != dirlease.ErrUnsafe || !strings.Contains(refusal.Msg, "could not be withdrawn") {
		return false
	}
	dir := fspath.Dir(refusal.Path)
	mutation := fspath.Join(dir, "."+strings.TrimPrefix(refusal.Path, dir+"/")+".mutation")
	_, statErr := dw.volume.Root().Lstat(mutation)
	present := statErr == nil
	if present {
		dw.world.Probe("dirlease-create-withdraw-blocked")
	}
	return present
}
