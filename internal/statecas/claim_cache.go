package statecas

import "github.com/leasekit/leasekit/internal/statefile"

// The claim cache remembers mutation claims that parsed, by their bytes.
// Every snapshot of a directory reads and parses each mutation claim in it
// (sweepMachinery), and a claim lives across many snapshots: in the
// simulator's dirlease runs that parsing was a fifteenth of the
// allocations. parseClaim is a pure function of the bytes and a claim
// holds only values, so a hit returns exactly what parsing would; only
// claims that parsed are remembered.
var claimCache statefile.ParseCache[claim]

// parseClaimCached is parseClaim, from the cache when data parsed before.
func parseClaimCached(data []byte) (claim, error) { return claimCache.Parse(data, parseClaim) }
