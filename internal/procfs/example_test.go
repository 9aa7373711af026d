package procfs_test

import (
	"fmt"

	"github.com/leasekit/leasekit/internal/procfs"
)

// ExampleParseStat parses the stat line of a process that named itself
// with a ")" and fake fields: the fields are counted from the last ")".
func ExampleParseStat() {
	line := "4242 () S 1 1 1 1 1 1) R 1 4242 4242 0 -1 4194560 512 0 0 0 7 3 0 0 20 0 2 0 987654 12345678 321" +
		" 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	stat, err := procfs.ParseStat(4242, []byte(line))
	fmt.Println(string(stat.State), stat.Threads, stat.StartTime, err)
	// Output: R 2 987654 <nil>
}
