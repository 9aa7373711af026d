package lease_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
)

// Example shows the whole life of a lease on the real OS: acquire it, do
// fenced work under it, and release it. A second acquire while it is held
// reports the holder instead of stealing it.
func Example() {
	state, err := os.MkdirTemp("", "leasekit-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)

	manager, err := lease.NewManager(lease.Config{
		Namespace: filepath.Join(state, "receiver"),
		RootID:    "example-root",
		FS:        osenv.NewFS(),
		Clock:     osenv.NewClock(),
		Inspector: osenv.NewInspector(),
		IDs:       osenv.NewIDSource(),
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	request := lease.AcquireRequest{SessionID: "session-1", SessionFile: "/sessions/1.jsonl"}

	acquired, err := manager.Acquire(ctx, request)
	if err != nil {
		panic(err)
	}
	fmt.Println("first acquire:", acquired.Kind, "epoch", acquired.Owner.Epoch)

	again, err := manager.Acquire(ctx, request)
	if err != nil {
		panic(err)
	}
	fmt.Println("second acquire:", again.Kind, "by the same process")

	// Work that must not run after the lease is lost goes inside
	// WithCurrentLease: it runs only while this generation is current.
	generation := acquired.Owner.Generation
	err = manager.WithCurrentLease(ctx, generation, func(ctx context.Context, owner lease.Owner) error {
		fmt.Println("fenced work under epoch", owner.Epoch)
		return nil
	})
	if err != nil {
		panic(err)
	}

	released, err := manager.Release(ctx, generation)
	if err != nil {
		panic(err)
	}
	fmt.Println("release:", released.Kind)

	var fence *lease.FenceError
	err = manager.WithCurrentLease(ctx, generation, func(context.Context, lease.Owner) error { return nil })
	fmt.Println("work after release is fenced:", errors.As(err, &fence))
	// Output:
	// first acquire: acquired epoch 1
	// second acquire: held by the same process
	// fenced work under epoch 1
	// release: released
	// work after release is fenced: true
}

// ExampleManager_ForceReclaim shows the operator path: a lifecycle guard
// corrupted by hand blocks every call; Inspect names it, and ForceReclaim
// moves it into quarantine/, after which the lease works again.
func ExampleManager_ForceReclaim() {
	state, err := os.MkdirTemp("", "leasekit-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)
	namespace := filepath.Join(state, "receiver")
	manager, err := osenv.NewManager(namespace, "example-root")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	acquired, err := manager.Acquire(ctx, lease.AcquireRequest{})
	if err != nil {
		panic(err)
	}
	if _, err := manager.Release(ctx, acquired.Owner.Generation); err != nil {
		panic(err)
	}
	// Someone writes garbage where the lifecycle guard lives.
	guard := filepath.Join(namespace, "receiver.lifecycle.guard.json")
	if err := os.WriteFile(guard, []byte("garbage"), 0o600); err != nil {
		panic(err)
	}
	refused, err := manager.Acquire(ctx, lease.AcquireRequest{})
	if err != nil {
		panic(err)
	}
	fmt.Println("acquire:", refused.Kind, refused.Refusal.Reason, refused.Refusal.Human)

	projection, err := manager.Inspect(ctx)
	if err != nil {
		panic(err)
	}
	for _, blocker := range projection.Blockers {
		fmt.Println("blocker:", blocker.Kind, blocker.Human)
		forced, err := manager.ForceReclaim(ctx, lease.ForceRequest{Kind: blocker.Kind, Path: blocker.Path,
			Generation: blocker.Generation})
		if err != nil {
			panic(err)
		}
		fmt.Printf("forced: %s, evidence %q kept in quarantine/: %v\n", forced.Kind, forced.Evidence,
			filepath.Dir(forced.QuarantinePath) == filepath.Join(namespace, "quarantine"))
	}
	again, err := manager.Acquire(ctx, lease.AcquireRequest{})
	if err != nil {
		panic(err)
	}
	fmt.Println("acquire:", again.Kind, "epoch", again.Owner.Epoch)
	// Output:
	// acquire: refused lifecycle-unverifiable corrupt-lifecycle-guard
	// blocker: lifecycle-guard corrupt-lifecycle-guard
	// forced: moved, evidence "garbage" kept in quarantine/: true
	// acquire: acquired epoch 2
}
