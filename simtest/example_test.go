package simtest_test

import (
	"fmt"
	"os"

	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simtest"
)

// ExampleFind runs a short campaign of leasekit's lease on the lockwork
// workload; in a test, simtest.Run(t, engine, options) does the same and
// fails the test with a replay command on a failure.
func ExampleFind() {
	engine := lockwork.Engine(lockwork.Spec{Name: "lease", Rules: models.LockRules{DeadHolderFree: true},
		Open: func(p *sim.Proc) lockwork.Lock { return lockwork.LeaseLock(p, lockwork.DirDefault) }})
	dir, err := os.MkdirTemp("", "simtest-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	failures, err := simtest.Find(engine, simtest.Options{Seeds: 50, SeedDir: dir}, func(string, ...any) {})
	fmt.Println(len(failures), err)
	// Output: 0 <nil>
}
