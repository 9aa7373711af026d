package dirlease_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/lease/osenv"
)

// Example leases a private working directory on the real OS while a child
// works in it: create, launching, running (the child's identity), settled,
// release. A recovery pass meanwhile sees the live owner and removes
// nothing. (A real program also sets Config.BootClock, so that a dead
// owner's launching lease is recovered once its window passed; leasereal
// uses CLOCK_BOOTTIME.)
func Example() {
	base, err := os.MkdirTemp("", "dirlease-example-") // mode 0700
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	base, err = filepath.EvalSymlinks(base) // the leased path must be canonical
	if err != nil {
		panic(err)
	}
	home, work := filepath.Join(base, "home"), filepath.Join(base, "work")
	for _, dir := range []string{home, work} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			panic(err)
		}
	}
	config := dirlease.Config{StateHome: home, FS: osenv.NewFS(), Clock: osenv.NewClock(),
		Inspector: osenv.NewInspector(), IDs: osenv.NewIDSource()}
	ctx := context.Background()

	held, err := dirlease.Create(ctx, config, dirlease.CreateRequest{Role: dirlease.RoleRawWorking, Path: work,
		RecoverAfterMs: config.Clock.Now().Add(time.Minute).UnixMilli()})
	if err != nil {
		panic(err)
	}
	if err := held.Update(ctx, dirlease.PhaseLaunching, 0); err != nil {
		panic(err)
	}
	// The child would be a started command; this process stands in for it.
	if err := held.Update(ctx, dirlease.PhaseRunning, os.Getpid()); err != nil {
		panic(err)
	}
	report, err := dirlease.Recover(ctx, config)
	if err != nil {
		panic(err)
	}
	fmt.Printf("while running: %+v\n", report)
	if err := errors.Join(held.Update(ctx, dirlease.PhaseSettled, 0), held.Release(ctx)); err != nil {
		panic(err)
	}
	report, err = dirlease.Recover(ctx, config)
	if err != nil {
		panic(err)
	}
	fmt.Printf("after release: %+v\n", report)
	// Output:
	// while running: {Recovered:0 Published:0 Active:1 Indeterminate:0 Replaced:0}
	// after release: {Recovered:0 Published:0 Active:0 Indeterminate:0 Replaced:0}
}
