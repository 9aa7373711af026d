package workload_test

import (
	"fmt"

	"github.com/leasekit/leasekit/workload"
)

// Catalog is what leasesim runs: "all" is the three engines, the self-test
// lock is there but hidden.
func ExampleCatalog() {
	catalog := workload.Catalog()
	fmt.Println(catalog.Names(false))
	fmt.Println(catalog.Names(true))
	// Output:
	// [admission dirlease lease]
	// [admission dirlease lease selftest]
}
