package simgc_test

import (
	"fmt"

	"github.com/leasekit/leasekit/internal/simgc"
)

// A simulation program calls Tune before its first run; a GOGC set in the
// environment wins.
func Example() {
	simgc.Tune()
	fmt.Println("simulation GOGC:", simgc.Percent)
	// Output: simulation GOGC: 400
}
