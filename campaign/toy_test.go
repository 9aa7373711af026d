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

// leakyToyEngine is the toy lock with a planted determinism bug.
func leakyToyEngine() *Engine {
	leaky := toyEngine("toylock-leaky", false, toyCheck)
	correct := leaky.Setup
	leaky.Setup = func(params Params) func(w *sim.World) error {
		return func(w *sim.World) error {
			// The planted determinism bug: state that outlives a run, so
			// the second run of one input has one more client.
			leakedClients++
			params := Params{"processes": 1 + leakedClients%3, "attempts": params["attempts"]}
			return correct(params)(w)
		}
	}
	return leaky
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
