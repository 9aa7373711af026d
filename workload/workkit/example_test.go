package workkit_test

import (
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/workload/workkit"
)

// CheckMessage gives a failed history check the stable message a finding
// keeps while shrinking; a passing check has none.
func ExampleCheckMessage() {
	fmt.Printf("%q\n", workkit.CheckMessage("admission", nil))
	fmt.Println(workkit.CheckMessage("admission", fmt.Errorf("%w after 10s", workkit.ErrCheckTimeout)))
	fmt.Println(workkit.CheckMessage("admission", errors.New("admission history is not linearizable (12 operations)")))
	// Output:
	// ""
	// porcupine timeout: porcupine timed out: verdict unknown after 10s
	// not linearizable: admission history
}
