package hostile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
)

// What every state of the corpus checks, on one of them
// (testdata/hostile/lease/epoch-string): a lease namespace whose epoch
// counter holds a string gets a typed refusal that names the file, and
// the counter is left as it was for an operator to read.
func Example() {
	state, err := os.MkdirTemp("", "leasekit-hostile-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)
	namespace := filepath.Join(state, "ns")
	counter := filepath.Join(namespace, "receiver.epoch.json")
	if err := os.Mkdir(namespace, 0o700); err != nil {
		panic(err)
	}
	if err := os.WriteFile(counter, []byte(`{"epoch":"seven"}`), 0o600); err != nil {
		panic(err)
	}

	manager, err := osenv.NewManager(namespace, "example")
	if err != nil {
		panic(err)
	}
	result, err := manager.Acquire(context.Background(), lease.AcquireRequest{})
	if err != nil {
		panic(err)
	}
	kept, _ := os.ReadFile(counter)
	fmt.Println(result.Kind, result.Refusal.Reason)
	fmt.Println("names the counter:", strings.Contains(result.Refusal.Diagnostic, "receiver.epoch.json"))
	fmt.Println("counter kept:", string(kept))
	// Output:
	// refused corrupt-epoch
	// names the counter: true
	// counter kept: {"epoch":"seven"}
}
