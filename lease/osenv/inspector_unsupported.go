package osenv

import (
	"errors"
	"os"

	"github.com/leasekit/leasekit/lease"
)

// errInspectionUnsupportedDarwin is why darwin fails closed; see the
// package doc. It is declared on every platform so its behaviour is tested
// on Linux too.
var errInspectionUnsupportedDarwin = errors.New(
	"leasekit: process identity inspection is unsupported on darwin (fails closed)")

// unsupportedInspector is the Inspector of a platform whose process table
// cannot be read safely. It fails closed: Current fails, so no lease is
// taken under an identity that could not be checked later, and Inspect is
// always unknown, so ClassifyRecord refuses and never reclaims.
type unsupportedInspector struct {
	reason error
}

func (i unsupportedInspector) Current() (lease.ProcessIdentity, error) {
	return lease.ProcessIdentity{}, i.reason
}

func (i unsupportedInspector) Inspect(int) lease.Inspection {
	return lease.Inspection{Kind: lease.InspectUnknown, Diagnostic: i.reason.Error()}
}

// CallerUID is the caller's real uid (lease.CallerUIDReporter): Inspect
// works on a platform whose process table cannot be read.
func (i unsupportedInspector) CallerUID() (uint32, error) { return uint32(os.Getuid()), nil }
