package osenv

import (
	"crypto/rand"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// IDSource is lease.IDSource on crypto/rand.
type IDSource struct{}

var _ lease.IDSource = IDSource{}

// NewIDSource returns the real source of random version-4 UUIDs.
func NewIDSource() lease.IDSource { return IDSource{} }

// NewID returns a fresh version-4 UUID in canonical lower-case form: 122
// bits from crypto/rand, which never fails (it crashes the program if the
// kernel cannot give randomness, rather than hand out a guessable ID).
func (IDSource) NewID() string {
	var random [16]byte
	_, _ = rand.Read(random[:])
	return statefile.FormatUUIDv4(random)
}
