package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// IsError answers as errors.As does, plain, wrapped and joined, and
// allocates nothing.
func TestIsErrorIsErrorsAs(t *testing.T) {
	changed := &ChangedError{Path: "/x"}
	for _, err := range []error{
		nil, changed, fmt.Errorf("reading: %w", changed), errors.Join(errors.New("first"), changed),
		&fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, &TooLargeError{Path: "/x"},
	} {
		var target *ChangedError
		if got, want := IsError[*ChangedError](err), errors.As(err, &target); got != want {
			t.Errorf("IsError(%v) = %v, errors.As says %v", err, got, want)
		}
	}
	wrapped := fmt.Errorf("reading: %w", &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT})
	if allocs := testing.AllocsPerRun(100, func() { IsError[*ChangedError](wrapped) }); allocs != 0 {
		t.Errorf("IsError made %v allocations", allocs)
	}
}
