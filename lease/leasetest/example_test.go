package leasetest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
)

// Example scripts the environment of an engine test: a clock that moves only
// when told (or slept on), a process table in which a test kills a process,
// sequential identifiers, and an FS wrapper that records and hooks calls.
func Example() {
	clock := leasetest.NewClock()
	_ = clock.Sleep(context.Background(), 2*time.Second) // returns at once
	fmt.Println("slept:", clock.Now().Sub(leasetest.Epoch))

	table := leasetest.NewInspector(leasetest.Identity(1))
	worker := table.As(leasetest.Identity(2))
	table.Kill(1)
	fmt.Println("pid 1 absent:", worker.Inspect(1).Kind == lease.InspectAbsent, "live:", table.LivePIDs())

	fmt.Println("id:", leasetest.NewIDs().NewID())

	dir, err := os.MkdirTemp("", "leasetest-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	hooked := leasetest.NewHookFS(osenv.NewFS())
	hooked.Before(func(op leasetest.Op) error {
		if op.Name == "Mkdir" {
			return fmt.Errorf("scripted refusal of %s", filepath.Base(op.Paths[0]))
		}
		return nil
	})
	leasetest.WriteNew(exampleTB{}, hooked, filepath.Join(dir, "a.json"), []byte("{}\n"))
	fmt.Println(hooked.Mkdir(filepath.Join(dir, "sub"), 0o700))
	for _, op := range hooked.Ops() {
		fmt.Println("op:", op.Name)
	}
	// Output:
	// slept: 2s
	// pid 1 absent: true live: [2]
	// id: 00000000-0000-4000-8000-000000000001
	// scripted refusal of sub
	// op: OpenFile
	// op: Mkdir
}

// exampleTB stands in for the *testing.T an engine test would pass.
type exampleTB struct{}

func (exampleTB) Helper()           {}
func (exampleTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }
