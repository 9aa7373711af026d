package envos_test

import (
	"fmt"

	"github.com/leasekit/leasekit/envos"
	"github.com/leasekit/leasekit/simfs"
)

// Example writes and reads a file the way os code does, over simfs; the
// same calls run on the kernel with lease/osenv's FS.
func Example() {
	disk := simfs.New(simfs.Options{Dev: 1})
	fsys := disk.View(0)
	if err := envos.MkdirAll(fsys, "/var/lock/app", 0o755); err != nil {
		panic(err)
	}
	if err := envos.WriteFile(fsys, "/var/lock/app/pid", []byte("42\n"), 0o644); err != nil {
		panic(err)
	}
	data, err := envos.ReadFile(fsys, "/var/lock/app/pid")
	fmt.Printf("%q %v\n", data, err)
	// Output: "42\n" <nil>
}
