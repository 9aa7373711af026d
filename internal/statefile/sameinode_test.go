package statefile_test

import (
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/internal/statefile"
)

// TestSameInodeComparesBirthTime: a reused inode number with a new birth
// time is another inode (the lease campaign's seed 9257052 replays the
// Inspect that took one for the other).
func TestSameInodeComparesBirthTime(t *testing.T) {
	base := statefile.FileInfo{Dev: 7, Ino: 42, BirthNs: 1000, HasBirth: true}
	for _, tc := range []struct {
		name  string
		other statefile.FileInfo
		same  bool
	}{
		{"identical", base, true},
		{"reused inode number, later birth", statefile.FileInfo{Dev: 7, Ino: 42, BirthNs: 2000, HasBirth: true}, false},
		{"other inode", statefile.FileInfo{Dev: 7, Ino: 43, BirthNs: 1000, HasBirth: true}, false},
		{"other device", statefile.FileInfo{Dev: 8, Ino: 42, BirthNs: 1000, HasBirth: true}, false},
		{"birth known on one side only", statefile.FileInfo{Dev: 7, Ino: 42}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.same, statefile.SameInode(base, tc.other))
			require.Equal(t, tc.same, statefile.SameInode(tc.other, base))
		})
	}
	noBirth := statefile.FileInfo{Dev: 7, Ino: 42}
	require.True(t, statefile.SameInode(noBirth, noBirth), "without birth times dev+ino is all there is")
}
