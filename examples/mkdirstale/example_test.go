package mkdirstale_test

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/mkdirstale"
)

// A campaign of the mkdir-with-staleness lock finds it broken: a holder
// paused past the staleness limit loses its lock while it works.
func Example() {
	findings, err := examplekit.Findings(mkdirstale.Engine(), 300, "(paused holder)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(findings, "\n"))
	// Output: violation invariant two holders (paused holder)
}
