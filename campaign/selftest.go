package campaign

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// The self-test lock is leasesim's own tiny engine, so the campaign
// machinery (sharding, shrinking, seed files, replay) is tested without
// depending on a real engine, and so a planted bug has somewhere to live: a
// lock file taken with O_CREATE|O_EXCL, filled with the owner's name. The
// buggy variant (breakEmptyLock, planted by the mutant
// mutants/selftest-breakempty, see mutants/README.md) treats an empty lock file as abandoned and
// breaks it, which races with an owner that has created the file but not yet
// written it: two holders at once.

const toyLockPath = "/locks/lock"

type toyLock struct {
	breakEmpty bool
	attempts   int
	inside     int
	holders    []string
}

func toyEngine(name string, breakEmpty bool, check func(sim.Result, bool) Verdict) *Engine {
	return &Engine{
		Name: name, Doc: "leasesim self-test: a toy O_EXCL lock file (not a real engine)", Hidden: true, StepsMax: 5_000, WorkloadVersion: 1,
		Params: []Param{
			{Name: "processes", Default: 4, Min: 1, Max: 16},
			{Name: "attempts", Default: 6, Min: 1, Max: 100},
		},
		Setup: func(params Params) func(w *sim.World) error {
			l := &toyLock{breakEmpty: breakEmpty}
			return l.setup(params["processes"], params["attempts"])
		},
		Check: check,
	}
}

// toyCheck is the toy's history check (standing in for porcupine): every
// operation returns after its call, with a boolean or an unknown outcome.
func toyCheck(result sim.Result, _ bool) Verdict {
	for _, op := range result.History {
		if _, ok := op.Output.(bool); !ok && !op.Unknown {
			return Verdict{Message: fmt.Sprintf("malformed history: %s returned %v", op.Op, op.Output)}
		}
		if op.Return < op.Call {
			return Verdict{Message: fmt.Sprintf("malformed history: %s returns at %d before its call at %d", op.Op, op.Return, op.Call)}
		}
	}
	return Verdict{OK: true}
}

// SelfTestEngine returns the self-test lock as an engine, hidden from
// "all": `leasesim mutants` plants its bug (mutants/selftest-breakempty).
func SelfTestEngine() *Engine {
	e := toyEngine("selftest", breakEmptyLock, toyCheck)
	e.Explore = Params{"processes": 4, "attempts": 6} // its defaults: the explore search hunts it (selftest-breakempty)
	return e
}

func (l *toyLock) setup(processes, attempts int) func(w *sim.World) error {
	return func(w *sim.World) error {
		l.inside, l.holders, l.attempts = 0, nil, attempts
		volume := w.AddVolume("disk")
		volume.FS().MkdirAll("/locks", 0o777, 0)
		host := w.AddHost(sim.HostSpec{Name: "alpha", PIDMax: 64, Volume: volume})
		for i := 0; i < processes; i++ {
			if _, err := w.Spawn(host, sim.ProcSpec{Name: fmt.Sprintf("client-%d", i), UID: 1000}, l.body); err != nil {
				return err
			}
		}
		w.SetStateKey(l.stateKey)
		w.Invariant("mutual-exclusion", func() error {
			if l.inside > 1 {
				return fmt.Errorf("%d holders inside at once: %v", l.inside, l.holders)
			}
			return nil
		})
		return nil
	}
}

// stateKey is the toy's part of the world's state key: its ledger.
func (l *toyLock) stateKey() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d %d %q", l.inside, l.attempts, l.holders)
	return h.Sum64()
}

func (l *toyLock) body(p *sim.Proc) {
	fsys, clock := p.FS(), p.Clock()
	for attempt := 0; attempt < l.attempts; attempt++ {
		op := p.Begin("acquire", p.Name())
		f, err := fsys.OpenFile(toyLockPath, lease.O_CREATE|lease.O_EXCL|lease.O_WRONLY, 0o644)
		if err == nil {
			p.End(op, true)
			l.critical(p, f)
			return
		}
		p.End(op, false)
		if l.breakEmpty && errors.Is(err, fs.ErrExist) {
			if info, err := fsys.Stat(toyLockPath); err == nil && info.Size == 0 {
				_ = fsys.Remove(toyLockPath)
				continue
			}
		}
		if err := clock.Sleep(context.Background(), 10*time.Millisecond); err != nil {
			panic(err)
		}
	}
}

func (l *toyLock) critical(p *sim.Proc, f lease.File) {
	l.inside++
	l.holders = append(l.holders, p.Name())
	defer func() {
		l.inside--
		l.holders = l.holders[:len(l.holders)-1]
	}()
	if _, err := f.Write([]byte(p.Name())); err != nil {
		return
	}
	_ = f.Sync()
	_ = f.Close()
	p.Clock().Now()
	_ = p.FS().Remove(toyLockPath)
}
