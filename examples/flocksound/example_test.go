package flocksound_test

import (
	"fmt"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/flocksound"
)

// A campaign of the sound flock lock finds nothing: a crashed holder's
// lock goes with its descriptors.
func Example() {
	findings, err := examplekit.Findings(flocksound.Engine(), 300, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(findings), "findings")
	// Output: 0 findings
}
