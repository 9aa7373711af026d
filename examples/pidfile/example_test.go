package pidfile_test

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/pidfile"
)

// A campaign of the PID-file lock's engine finds it broken: a crashed
// holder's PID, reused by another process, keeps its stale lock "held".
func Example() {
	findings, err := examplekit.Findings(pidfile.Engine(), 300, "(PID reuse)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(findings, "\n"))
	// Output: violation invariant held by a dead holder (PID reuse)
}
