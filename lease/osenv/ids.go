package osenv

import (
	"github.com/google/uuid"

	"github.com/leasekit/leasekit/lease"
)

// IDSource is lease.IDSource on crypto/rand, through google/uuid.
type IDSource struct{}

var _ lease.IDSource = IDSource{}

// NewIDSource returns the real source of random version-4 UUIDs.
func NewIDSource() lease.IDSource { return IDSource{} }

// NewID returns a fresh version-4 UUID in canonical lower-case form.
func (IDSource) NewID() string { return uuid.NewString() }
