package dirlease

import (
	"math"
	"strconv"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/lease"
)

// IdentityOf writes each number as strconv does, at the extremes too, in
// one allocation.
func TestIdentityOfFormatsEachNumber(t *testing.T) {
	for _, id := range []lease.FileIdentity{
		{}, {Dev: 2049, Ino: 131074, BirthNs: 1_700_000_000_123_456_789},
		{Dev: math.MaxUint64, Ino: math.MaxUint64, BirthNs: math.MinInt64}, {Dev: 1, Ino: 12, BirthNs: math.MaxInt64},
	} {
		want := Identity{Device: strconv.FormatUint(id.Dev, 10), Inode: strconv.FormatUint(id.Ino, 10),
			BirthtimeNs: strconv.FormatInt(id.BirthNs, 10)}
		require.Equal(t, want, IdentityOf(id))
	}
	id := lease.FileIdentity{Dev: 2049, Ino: 131074, BirthNs: 1_700_000_000_123_456_789}
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { IdentityOf(id) }))
}
