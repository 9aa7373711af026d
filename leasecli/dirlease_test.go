package leasecli_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/simfs"
)

const (
	runHome = "/home/u"
	runPath = "/work/a"
	childID = 4242
)

// fakeChild is a started command whose exit the test decides.
type fakeChild struct {
	pid      int
	exited   bool
	code     int
	waited   bool
	killed   bool
	onWait   func()
	exitedAt int // Exited reports true from this call on (0: never)
	calls    int
}

func (c *fakeChild) PID() int { return c.pid }
func (c *fakeChild) Exited() (bool, error) {
	c.calls++
	return c.exited || (c.exitedAt > 0 && c.calls >= c.exitedAt), nil
}
func (c *fakeChild) Kill() error { c.killed = true; return nil }
func (c *fakeChild) Wait(context.Context) (int, error) {
	if c.onWait != nil {
		c.onWait()
	}
	c.waited = true
	return c.code, nil
}

// fakeStarter hands out child, or fails with code.
type fakeStarter struct {
	child *fakeChild
	code  int
	err   error
	env   []string
}

func (s *fakeStarter) Start(_ []string, env []string) (leasecli.Child, int, error) {
	s.env = env
	if s.err != nil {
		return nil, s.code, s.err
	}
	return s.child, 0, nil
}

func runConfig(t *testing.T) (dirlease.Config, *leasetest.Inspector) {
	t.Helper()
	files := simfs.New(simfs.Options{Dev: 6})
	files.MkdirAll(runHome, 0o700, 1000)
	files.MkdirAll(runPath, 0o700, 1000)
	inspector := leasetest.NewInspector(leasetest.IdentityOf(7, 1000, "77"))
	inspector.Set(childID, leasetest.Live(leasetest.IdentityOf(childID, 1000, "99")))
	return dirlease.Config{StateHome: runHome, FS: files.View(1000), Clock: leasetest.NewClock(),
		Inspector: inspector, IDs: leasetest.NewIDs()}, inspector
}

func dirleaseRun() leasecli.DirleaseRun {
	return leasecli.DirleaseRun{Path: runPath, Command: []string{"make"}, RecoverAfter: time.Minute,
		BusyPoll: 10 * time.Millisecond, BindAttempts: 3, BindPause: time.Millisecond}
}

// claims are the claims on the state home, by phase.
func claims(t *testing.T, config dirlease.Config) []dirlease.Phase {
	states, err := dirlease.Inspect(context.Background(), config)
	require.NoError(t, err)
	var phases []dirlease.Phase
	for _, state := range states {
		phases = append(phases, state.Claim.Phase)
	}
	return phases
}

// TestRunDirleaseHoldsTheLeaseWhileItsCommandRuns: while the command runs,
// the claim records it running; after it exits, the claim is gone and the
// run returns the command's code.
func TestRunDirleaseHoldsTheLeaseWhileItsCommandRuns(t *testing.T) {
	config, _ := runConfig(t)
	var during []dirlease.Phase
	child := &fakeChild{pid: childID, code: 3}
	child.onWait = func() { during = claims(t, config) }
	starter := &fakeStarter{child: child}
	var steps []string
	run := dirleaseRun()
	run.Events = leasecli.DirleaseEvents{
		Held:      func(*dirlease.Lease, int) { steps = append(steps, "held") },
		Running:   func(c leasecli.Child) { steps = append(steps, "running") },
		Settling:  func() { steps = append(steps, "settling") },
		Releasing: func() { steps = append(steps, "releasing") },
		Released:  func() { steps = append(steps, "released") },
	}
	code, err := leasecli.RunDirlease(context.Background(), config, run, starter)
	require.NoError(t, err)
	require.Equal(t, 3, code)
	require.True(t, child.waited)
	require.Equal(t, []dirlease.Phase{dirlease.PhaseRunning}, during, "the claim records the command while it runs")
	require.Empty(t, claims(t, config), "released after the command")
	require.Equal(t, []string{"held", "running", "settling", "releasing", "released"}, steps)
	require.Len(t, starter.env, 1)
	require.Regexp(t, `^LEASEKIT_CLAIM_ID=.+`, starter.env[0])
}

// TestRunDirleaseOnAHeldPath: a second run on a held path is busy at
// once without -w, and after its wait with it; its command never starts.
func TestRunDirleaseOnAHeldPath(t *testing.T) {
	for _, tc := range []struct {
		wait     time.Duration
		attempts int // at 0, 10, 20, 30 and 35 ms with a 10 ms poll
	}{{0, 1}, {35 * time.Millisecond, 5}} {
		wait := tc.wait
		config, _ := runConfig(t)
		first := &fakeChild{pid: childID}
		var second leasecli.DirleaseRun
		var secondErr error
		var busy int
		first.onWait = func() {
			second = dirleaseRun()
			second.Wait = wait
			second.Events.Busy = func() { busy++ }
			starter := &fakeStarter{err: errors.New("must not start")}
			_, secondErr = leasecli.RunDirlease(context.Background(), config, second, starter)
		}
		_, err := leasecli.RunDirlease(context.Background(), config, dirleaseRun(), &fakeStarter{child: first})
		require.NoError(t, err)
		var failed *leasecli.RunError
		require.ErrorAs(t, secondErr, &failed)
		require.Equal(t, leasecli.StepAcquire, failed.Step)
		require.ErrorIs(t, secondErr, dirlease.ErrBusy)
		require.Equal(t, tc.attempts, busy, "attempts with wait %v", wait)
		require.Empty(t, claims(t, config))
	}
}

// TestRunDirleaseCommandSteps: a command that cannot start, one that
// exits before it is recorded, and one that cannot be recorded while it
// runs; each run ends with the lease released.
func TestRunDirleaseCommandSteps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		starter  *fakeStarter
		wantStep leasecli.RunStep
		wantCode int
		killed   bool
	}{
		{name: "not found", starter: &fakeStarter{code: 127, err: errors.New("no such file")}, wantStep: leasecli.StepStart, wantCode: 127},
		{name: "exited before recorded", starter: &fakeStarter{child: &fakeChild{pid: 9999, exited: true, code: 0}}},
		{name: "exiting, then exited", starter: &fakeStarter{child: &fakeChild{pid: 9999, exitedAt: 2, code: 0}}},
		{name: "never capturable", starter: &fakeStarter{child: &fakeChild{pid: 9999, code: 137}},
			wantStep: leasecli.StepRecord, wantCode: 137, killed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config, _ := runConfig(t)
			code, err := leasecli.RunDirlease(context.Background(), config, dirleaseRun(), tc.starter)
			require.Equal(t, tc.wantCode, code)
			if tc.wantStep == "" {
				require.NoError(t, err)
			} else {
				var failed *leasecli.RunError
				require.ErrorAs(t, err, &failed)
				require.Equal(t, tc.wantStep, failed.Step)
			}
			if tc.starter.child != nil {
				require.Equal(t, tc.killed, tc.starter.child.killed)
				require.True(t, tc.starter.child.waited, "every started child is reaped")
			}
			require.Empty(t, claims(t, config), "released")
		})
	}
}
