package osenv

import (
	"errors"

	"github.com/leasekit/leasekit/lease"
)

// errInspectionUnsupported is why darwin fails closed; see the package doc.
var errInspectionUnsupported = errors.New(
	"leasekit: process identity inspection is unsupported on darwin (fails closed)")

// NewInspector returns an Inspector that fails closed: darwin has no /proc
// to read start time, executable inode and PID namespace from, and a guess
// could let an engine reclaim a live owner's lease.
func NewInspector() lease.Inspector { return unsupportedInspector{} }

type unsupportedInspector struct{}

// Current always fails, so no lease is taken under an identity that could
// not be verified later.
func (unsupportedInspector) Current() (lease.ProcessIdentity, error) {
	return lease.ProcessIdentity{}, errInspectionUnsupported
}

// Inspect is always unknown: ClassifyRecord then refuses, never reclaims.
func (unsupportedInspector) Inspect(int) lease.Inspection {
	return lease.Inspection{Kind: lease.InspectUnknown, Diagnostic: errInspectionUnsupported.Error()}
}
