package admission_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/lease/osenv"
)

// Example holds the export admission on the real OS while a helper runs:
// acquire, launch, bind the helper's identity, settle, release. A second
// controller is refused while it is held.
func Example() {
	home, err := os.MkdirTemp("", "admission-example-") // mode 0700, as StateHome must be
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	config := admission.Config{StateHome: home, FS: osenv.NewFS(), Clock: osenv.NewClock(),
		Inspector: osenv.NewInspector(), IDs: osenv.NewIDSource()}
	ctx := context.Background()

	held, err := admission.Acquire(ctx, config)
	if err != nil {
		panic(err)
	}
	fmt.Println("acquired:", held.Claim().Phase)
	_, err = admission.Acquire(ctx, config)
	fmt.Println("second controller refused as active:", errors.Is(err, admission.ErrActive))

	// The helper would be a child process; this one binds itself.
	if err := held.BeginHelperLaunch(ctx); err != nil {
		panic(err)
	}
	if err := held.BindHelper(ctx, os.Getpid()); err != nil {
		panic(err)
	}
	fmt.Println("helper bound:", held.Claim().Phase)
	if err := errors.Join(held.Settle(ctx), held.Release(ctx)); err != nil {
		panic(err)
	}
	state, err := admission.InspectState(ctx, config)
	if err != nil {
		panic(err)
	}
	fmt.Println("present after release:", state.Present)
	// Output:
	// acquired: parent-owned
	// second controller refused as active: true
	// helper bound: helper-active
	// present after release: false
}
