package lockwork_test

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/sim"
)

// noLock answers acquired to everyone: two holders at the first overlap.
type noLock struct{}

func (noLock) TryLock() (bool, uint64, error) { return true, 0, nil }
func (noLock) Unlock() error                  { return nil }

// memLock is an exclusive lock in the run's memory whose epochs go down:
// only its fencing is broken.
type memLock struct {
	state *memState
	p     *sim.Proc
}

type memState struct {
	holder *sim.Proc
	epoch  uint64
}

func (l memLock) TryLock() (bool, uint64, error) {
	if h := l.state.holder; h != nil && h.Alive() {
		return false, 0, nil
	}
	l.state.holder, l.state.epoch = l.p, l.state.epoch-1
	return true, l.state.epoch, nil
}

func (l memLock) Unlock() error {
	if l.state.holder != l.p {
		return lockwork.ErrNotOwner
	}
	l.state.holder = nil
	return nil
}

// firstFinding runs seeds until one fails and returns its finding.
func firstFinding(t *testing.T, engine *campaign.Engine) campaign.Finding {
	t.Helper()
	catalog := campaign.NewCatalog(engine)
	options := campaign.Options{Catalog: catalog}
	for seed := range uint64(200) {
		spec, err := options.SpecFor(engine.Name, seed)
		if err != nil {
			t.Fatal(err)
		}
		_, finding, _, err := catalog.Execute(spec, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if !finding.OK() {
			return finding
		}
	}
	t.Fatalf("%s: 200 seeds found nothing", engine.Name)
	return campaign.Finding{}
}

// A correct in-memory lock passes (memLock with epochs going up).
func TestRecorderPassesACorrectLock(t *testing.T) {
	spec := lockwork.Spec{Name: "mem", PerRun: func() lockwork.Spec {
		state := &memState{epoch: 1 << 40}
		return lockwork.Spec{Open: func(p *sim.Proc) lockwork.Lock { return upLock{memLock{state: state, p: p}} }}
	}}
	engine := lockwork.Engine(spec)
	catalog := campaign.NewCatalog(engine)
	options := campaign.Options{Catalog: catalog}
	for seed := range uint64(200) {
		spec, _ := options.SpecFor(engine.Name, seed)
		if _, finding, _, _ := catalog.Execute(spec, nil, false); !finding.OK() {
			t.Fatalf("seed %d: %v: %s", seed, finding, finding.Message)
		}
	}
}

// upLock is memLock with epochs going up.
type upLock struct{ memLock }

func (l upLock) TryLock() (bool, uint64, error) {
	ok, _, err := l.memLock.TryLock()
	if ok {
		l.state.epoch += 2
	}
	return ok, l.state.epoch, err
}

// The Recorder's ground truth catches the planted bugs online and names
// them.
func TestRecorderFindsPlantedLockBugs(t *testing.T) {
	epochsDown := func() lockwork.Spec {
		state := &memState{epoch: 1000}
		return lockwork.Spec{Open: func(p *sim.Proc) lockwork.Lock { return memLock{state: state, p: p} }}
	}
	tests := []struct {
		name string
		spec lockwork.Spec
		want string
	}{
		{"no-lock", lockwork.Spec{Open: func(*sim.Proc) lockwork.Lock { return noLock{} }}, "invariant two holders"},
		{"epochs-down", lockwork.Spec{PerRun: epochsDown}, "invariant epoch went back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name = tt.name
			finding := firstFinding(t, lockwork.Engine(tt.spec))
			if !strings.HasPrefix(finding.Class, tt.want) {
				t.Fatalf("found %v: %s; want class %q", finding, finding.Message, tt.want)
			}
		})
	}
}
