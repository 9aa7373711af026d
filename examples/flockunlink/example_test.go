package flockunlink_test

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/flockunlink"
)

// A campaign of the flock-then-unlink lock finds it broken: an unlink
// between another process's open and its flock splits the lock over two
// inodes.
func Example() {
	findings, err := examplekit.Findings(flockunlink.Engine(), 3000, "(split inode)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(findings, "\n"))
	// Output: violation invariant two holders (split inode)
}
