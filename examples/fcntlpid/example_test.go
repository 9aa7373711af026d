package fcntlpid_test

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/fcntlpid"
)

// A campaign of the PID-writing fcntl lock finds it broken: closing the
// descriptor that wrote the PID dropped the process's record lock.
func Example() {
	findings, err := examplekit.Findings(fcntlpid.Engine(), 3000, "(close any descriptor)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(findings, "\n"))
	// Output: violation invariant two holders (close any descriptor)
}
