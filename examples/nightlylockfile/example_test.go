package nightlylockfile_test

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/nightlylockfile"
)

// A campaign of the ported library finds a dead holder's lock kept held:
// kill(pid, 0) succeeds on the holder's unreaped zombie.
func Example() {
	findings, err := examplekit.Findings(nightlylockfile.Engine(), 300, "(zombie)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(findings, "\n"))
	// Output: violation invariant held by a dead holder (zombie)
}
