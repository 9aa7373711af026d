package osenv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
)

// ExampleNewManager is the one-line real-OS lease: take it (waiting up to
// a second if another process holds it), work, release it.
func ExampleNewManager() {
	state, err := os.MkdirTemp("", "leasekit-osenv-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)

	manager, err := osenv.NewManager(filepath.Join(state, "job.lease"), "my-service")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	result, err := manager.AcquireWait(ctx, lease.AcquireRequest{}, lease.WaitOptions{Timeout: time.Second})
	if err != nil {
		panic(err)
	}
	if result.Kind != lease.Acquired {
		fmt.Println("busy:", result.Kind)
		return
	}
	fmt.Println(result.Kind, "epoch", result.Owner.Epoch, "by this process:", result.Owner.PID == os.Getpid())
	released, err := manager.Release(ctx, result.Owner.Generation)
	if err != nil {
		panic(err)
	}
	fmt.Println(released.Kind)
	// Output:
	// acquired epoch 1 by this process: true
	// released
}
