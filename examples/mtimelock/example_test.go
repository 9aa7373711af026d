package mtimelock_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/mtimelock"
)

// A campaign of the mtime heartbeat lock finds it broken both ways: a
// holder paused past the staleness bound, and a wall-clock step, each let
// a second process take a live holder's lock.
func Example() {
	findings, err := examplekit.Findings(mtimelock.Engine(), 300, "(paused holder)", "(clock step)")
	if err != nil {
		fmt.Println(err)
		return
	}
	slices.Sort(findings)
	fmt.Println(strings.Join(findings, "\n"))
	// Output:
	// violation invariant two holders (clock step)
	// violation invariant two holders (paused holder)
}
