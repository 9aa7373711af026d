package campaign

import (
	"fmt"
	"testing"

	"github.com/leasekit/leasekit/sim"
)

// The tests use the self-test lock (selftest.go) again: correct, with the
// planted empty-lock-breaking bug (whatever breakEmptyLock says), with a
// history check that fails runs where every client starved, and leaky
// (leakyToyEngine).

// leakyToyEngine is the toy lock with a planted determinism bug: state that
// outlives a run, so the second run of one input has one more client.
func leakyToyEngine() *Engine {
	return driftingToyEngine("toylock-leaky", func() int {
		leakedClients++
		return 1 + leakedClients%3
	})
}

// driftingToyEngine is the toy lock whose client count clients gives anew
// at every run's setup: a determinism bug when it is not a function of the
// run's input.
func driftingToyEngine(name string, clients func() int) *Engine {
	e := toyEngine(name, false, toyCheck)
	correct := e.Setup
	e.Setup = func(params Params) func(w *sim.World) error {
		return func(w *sim.World) error {
			return correct(Params{"processes": clients(), "attempts": params["attempts"]})(w)
		}
	}
	return e
}

// leakedClients is toylock-leaky's state that wrongly survives across runs.
var leakedClients int

// starvedCheck fails a run in which no acquire succeeded (every client
// crashed or gave up): a tests-only check, to exercise the history path.
func starvedCheck(result sim.Result, _ bool) Verdict {
	for _, op := range result.History {
		if op.Op == "acquire" && op.Output == true {
			return Verdict{OK: true}
		}
	}
	return Verdict{Message: fmt.Sprintf("no acquire succeeded: %d attempts", len(result.History))}
}

// testCatalog is the engines the package's own tests run: the self-test
// lock and its variants (the real engines import campaign, so their tests
// are in engines_test.go, package campaign_test).
var testCatalog = NewCatalog(SelfTestEngine(), toyEngine("toylock", false, toyCheck),
	toyEngine("toylock-buggy", true, toyCheck), toyEngine("toylock-starved", false, starvedCheck), leakyToyEngine())

// mustEngine returns the named engine of testCatalog.
func mustEngine(t *testing.T, name string) *Engine {
	t.Helper()
	e, err := testCatalog.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
