package lease

import "github.com/leasekit/leasekit/internal/statefile"

// The shared caches remember records that parsed, by their bytes, across
// every Manager of the process. A Manager's own cache keeps only the last
// guard and owner it parsed; but a record is mostly read by Managers other
// than its writer's (every waiting acquire, every inspection, each with
// its own Manager), and each parsed it afresh. Parsing is a pure function
// of the bytes and the records hold only values (no pointers or slices),
// so a hit returns exactly what parsing would. Only records that parsed
// are remembered.
var (
	sharedGuards statefile.ParseCache[guardRecord]
	sharedOwners statefile.ParseCache[Owner]
	sharedEpochs statefile.ParseCache[uint64]
)

// parseEpochCached is parseEpoch, answered from the shared cache when data
// parsed before.
func parseEpochCached(data []byte) (uint64, error) { return sharedEpochs.Parse(data, parseEpoch) }
