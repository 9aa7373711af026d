package lockwork_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// wallLock judges its holder stale by the wall clock: the holder stamps
// Clock().Now, and a newcomer whose Now is staleAfter past the stamp takes
// the lock. A clock step forward breaks it.
// Its Unlock is memLock's.
type wallLock struct {
	memLock
	stamp *time.Time
}

const staleAfter = 300 * time.Millisecond

func (l wallLock) TryLock() (bool, uint64, error) {
	now := l.p.Clock().Now()
	if l.state.holder != nil && now.Sub(*l.stamp) < staleAfter {
		return false, 0, nil
	}
	l.state.holder, *l.stamp = l.p, now
	return true, 0, nil
}

// pidLock is a PID lock in the run's memory: it records its holder's PID
// and breaks the lock when a check of that PID says gone. gone decides
// which answers mean gone; keepPID makes it keep the first holder's PID
// for good (its record names a process that no longer holds).
type pidLock struct {
	state   *pidState
	p       *sim.Proc
	gone    func(lease.Inspection) bool
	keepPID bool
}

type pidState struct {
	held bool
	pid  int
}

func (l pidLock) TryLock() (bool, uint64, error) {
	me, err := l.p.Inspector().Current()
	if err != nil {
		return false, 0, err
	}
	if l.state.held && !l.gone(l.p.Inspector().Inspect(l.state.pid)) {
		return false, 0, nil
	}
	l.state.held = true
	if !l.keepPID || l.state.pid == 0 {
		l.state.pid = me.PID
	}
	return true, 0, nil
}

func (l pidLock) Unlock() error {
	if !l.state.held {
		return lockwork.ErrNotOwner
	}
	l.state.held = false
	return nil
}

// stuckLock never frees a dead holder's lock and looks at no PID: its
// "held by a dead holder" findings have no PID reuse to blame. Its Unlock
// is memLock's.
type stuckLock struct{ memLock }

func (l stuckLock) TryLock() (bool, uint64, error) {
	if l.state.holder != nil {
		return false, 0, nil
	}
	l.state.holder = l.p
	return true, 0, nil
}

// recordLock is stuckLock that writes the PID of its first holder into a
// file, once: its record names a process that may not hold the lock.
type recordLock struct{ stuckLock }

const recordPath = lockwork.DirDefault + "/owner.pid"

func (l recordLock) TryLock() (bool, uint64, error) {
	first := l.state.epoch == 0
	if ok, _, _ := l.stuckLock.TryLock(); !ok || !first {
		return ok, 0, nil
	}
	l.state.epoch = 1
	f, err := l.p.FS().OpenFile(recordPath, lease.O_CREATE|lease.O_WRONLY|lease.O_TRUNC, 0o644)
	if err != nil {
		return false, 0, err
	}
	_, err = fmt.Fprintf(f, "owner pid=%d\n", l.p.Table().PID)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err == nil, 0, err
}

// readRecord is recordLock's Spec.Record.
func readRecord(root lease.FS) (int, bool) {
	f, err := root.OpenFile(recordPath, lease.O_RDONLY, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var pid int
	_, err = fmt.Fscanf(f, "owner pid=%d", &pid)
	return pid, err == nil
}

func absent(in lease.Inspection) bool  { return in.Kind == lease.InspectAbsent }
func never(lease.Inspection) bool      { return false }
func notLive(in lease.Inspection) bool { return in.Kind != lease.InspectLive }
func openStuck() lockwork.Spec {
	state := &memState{}
	return lockwork.Spec{Open: func(p *sim.Proc) lockwork.Lock { return stuckLock{memLock{state: state, p: p}} }}
}

func openPID(gone func(lease.Inspection) bool, keep bool) func() lockwork.Spec {
	return func() lockwork.Spec {
		state := &pidState{}
		return lockwork.Spec{Open: func(p *sim.Proc) lockwork.Lock { return pidLock{state: state, p: p, gone: gone, keepPID: keep} }}
	}
}

// Each row is a small lock in a world whose faults make the hazard
// frequent; the findings of its campaign must name the hazards the lock
// observed, and only those. Every row fails on a Recorder that names
// hazards from the harness's bookkeeping alone.
func TestHazardsAreAttributedToWhatTheLockObserved(t *testing.T) {
	tests := []struct {
		name   string
		perRun func() lockwork.Spec
		record func(lease.FS) (int, bool)
		rules  models.LockRules
		faults string
		// restarts is Spec.ServerRestarts.
		restarts int
		// want must end the class of some finding, never no class;
		// messages maps a class prefix to what every finding's message of
		// such a class must say; said must be in some finding's message.
		want, never, said string
		messages          map[string]string
	}{
		{name: "clock step read by the lock", faults: "clockstep=0.2", want: "two holders (clock step)",
			perRun: func() lockwork.Spec {
				state, stamp := &memState{}, &time.Time{}
				return lockwork.Spec{Open: func(p *sim.Proc) lockwork.Lock { return wallLock{memLock{state: state, p: p}, stamp} }}
			}},
		{name: "clock step the lock never read", faults: "clockstep=0.2", want: "invariant two holders", never: "(clock step)",
			perRun: func() lockwork.Spec {
				return lockwork.Spec{Open: func(*sim.Proc) lockwork.Lock { return noLock{} }}
			}},
		{name: "server restart under a lock not kept in descriptors", faults: "none", restarts: 8,
			want: "invariant two holders", never: "(server restart)",
			perRun: func() lockwork.Spec {
				state, stamp := &memState{}, &time.Time{}
				return lockwork.Spec{Open: func(p *sim.Proc) lockwork.Lock { return wallLock{memLock{state: state, p: p}, stamp} }}
			}},
		{name: "PID reuse the lock inspected", faults: "swarm", rules: models.LockRules{DeadHolderFree: true},
			want: "held by a dead holder (PID reuse)", perRun: openPID(absent, false)},
		{name: "PID reuse the lock never inspected", faults: "crash=0.02,pidchurn=0.2", rules: models.LockRules{DeadHolderFree: true},
			want: "invariant held by a dead holder", never: "(PID reuse)",
			perRun: openStuck},
		{name: "the lock's file names the dead holder", faults: "crash=0.05", rules: models.LockRules{DeadHolderFree: true},
			want: "invariant held by a dead holder", record: readRecord,
			said: ", but the PID the lock's record holds is pid",
			perRun: func() lockwork.Spec {
				state := &memState{}
				return lockwork.Spec{Open: func(p *sim.Proc) lockwork.Lock { return recordLock{stuckLock{memLock{state: state, p: p}}} }}
			}},
		{name: "zombie the lock inspected", faults: "crash=0.02,zombie=0.5", rules: models.LockRules{DeadHolderFree: true},
			want: "held by a dead holder (zombie)", perRun: openPID(absent, false)},
		{name: "zombie the lock never inspected", faults: "crash=0.02,zombie=0.5", rules: models.LockRules{DeadHolderFree: true},
			want: "invariant held by a dead holder", never: "(zombie)",
			perRun: openStuck},
		{name: "liveness check failed", faults: "eacces=0.3", want: "two holders (liveness check failed (EACCES or ESRCH))",
			perRun:   openPID(notLive, false),
			messages: map[string]string{"invariant two holders (liveness": "answered unknown (permission denied"}},
		{name: "the lock's record names another holder", faults: "crash=0.02", rules: models.LockRules{DeadHolderFree: true},
			want: "invariant two holders", perRun: openPID(absent, true),
			messages: map[string]string{"invariant two holders": "the lock's record names pid"}},
		{name: "the lock's record names no dead holder", faults: "crash=0.05", rules: models.LockRules{DeadHolderFree: true},
			want: "invariant held by a dead holder", perRun: openPID(never, true),
			said: "the PID the lock checked) is dead, as is the last holder to die"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			engine := lockwork.Engine(lockwork.Spec{Name: "attribution", PerRun: tt.perRun, Rules: tt.rules, Record: tt.record,
				ServerRestarts: tt.restarts})
			failures := campaignFailures(t, engine, tt.faults)
			found, said, classes := false, false, map[string]int{}
			for _, f := range failures {
				if strings.Contains(f.Class, tt.never) && tt.never != "" {
					t.Errorf("seed %d found %s: %s; the lock did not observe %s", f.Seed, f.Class, f.Message, tt.never)
				}
				for prefix, message := range tt.messages {
					if strings.HasPrefix(f.Class, prefix) && !strings.Contains(f.Message, message) {
						t.Errorf("seed %d found %s: %s; want the message to say %q", f.Seed, f.Class, f.Message, message)
					}
				}
				classes[f.Class]++
				said = said || strings.Contains(f.Message, tt.said)
				found = found || strings.HasSuffix(f.Class, tt.want)
			}
			if !found {
				t.Fatalf("no finding of class %q among %d failures: %v", tt.want, len(failures), failures)
			}
			if !said {
				t.Fatalf("no finding's message says %q: %v", tt.said, failures)
			}
			t.Logf("classes: %v", classes)
		})
	}
}

// campaignFailures runs 150 seeds of engine under faults.
func campaignFailures(t *testing.T, engine *campaign.Engine, faults string) []campaign.Failure {
	t.Helper()
	setting, err := campaign.ParseFaultSetting(faults)
	if err != nil {
		t.Fatal(err)
	}
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog: campaign.NewCatalog(engine), Engines: []string{engine.Name},
		Seeds: 150, BaseSeed: 1, Workers: 1, Faults: setting,
	})
	if err != nil {
		t.Fatal(err)
	}
	return report.Failures
}
