package env_test

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/simfs"
	"github.com/leasekit/leasekit/simproc"
)

// The real-OS implementations and the simulated ones satisfy the same
// public interfaces.
var (
	_ env.FS                            = osenv.FS{}
	_ env.File                          = (*osenv.File)(nil)
	_ env.Clock                         = osenv.Clock{}
	_ env.IDSource                      = osenv.IDSource{}
	_ env.Inspector                     = osenv.NewInspector()
	_ env.FS                            = simfs.New(simfs.Options{}).View(0)
	_ func(*simproc.Proc) env.Inspector = (*simproc.Host)(nil).Inspector
)

// createExclusive is lock code written only against env.FS: it runs on the
// real OS (osenv.NewFS()) and in the simulator (simfs) unchanged, and it
// tests errors with the io/fs sentinels, as the errno conventions say.
func createExclusive(fsys env.FS, path string) (bool, error) {
	f, err := fsys.OpenFile(path, env.O_CREATE|env.O_EXCL|env.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) { // EEXIST: somebody else made it
		return false, nil
	}
	if err != nil {
		return false, err // any other errno is unexpected: surface it
	}
	return true, f.Close()
}

// Example runs the same function on an in-memory simfs; passing
// osenv.NewFS() and a real directory instead runs it on the kernel.
func Example() {
	disk := simfs.New(simfs.Options{})
	disk.MkdirAll("/state", 0o755, 0)
	fsys := disk.View(0)
	first, err := createExclusive(fsys, "/state/lock")
	fmt.Println(first, err)
	second, err := createExclusive(fsys, "/state/lock")
	fmt.Println(second, err)
	_, err = fsys.Lstat("/state/missing")
	var pathErr *fs.PathError
	fmt.Println(errors.Is(err, fs.ErrNotExist), errors.As(err, &pathErr))
	// Output:
	// true <nil>
	// false <nil>
	// true true
}
