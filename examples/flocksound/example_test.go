package flocksound_test

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/flocksound"
)

// A campaign of the sound flock lock finds nothing: a crashed holder's
// lock goes with its descriptors. On a shared volume whose server
// restarts, the same lock loses its lock and lets a second holder in.
func Example() {
	findings, err := examplekit.Findings(flocksound.Engine(), 300, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	shared, err := examplekit.Findings(flocksound.SharedEngine(), 300, "(server restart)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("local volume:", len(findings), "findings")
	fmt.Println("shared volume:", strings.Join(shared, "; "))
	// Output:
	// local volume: 0 findings
	// shared volume: violation invariant two holders (server restart)
}
