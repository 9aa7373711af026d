package lease

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/leasekit/leasekit/internal/statefile"
)

// recordString draws the strings records hold, and now and then one that
// canonical JSON must escape (quotes, backslashes, control bytes,
// non-ASCII, invalid UTF-8).
func recordString(t *rapid.T, label string) string {
	if rapid.IntRange(0, 5).Draw(t, label+"-tricky") == 0 {
		return rapid.StringOfN(rapid.RuneFrom([]rune("a/\"\\\n\x01<>&é\u2028")), 0, 6, -1).Draw(t, label) + "\xff"
	}
	return rapid.StringOfN(rapid.RuneFrom([]rune("abc-019/._:TZ")), 0, 12, -1).Draw(t, label)
}

// TestCanonicalRecordsEqualStructEncoding: the owner and guard bytes the
// engine writes field by field are statefile.Canonical's bytes of the
// record structs, for any field values: the on-disk format and the CAS
// tokens did not change when the writer did.
func TestCanonicalRecordsEqualStructEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		owner := Owner{
			Schema: rapid.IntRange(0, 3).Draw(t, "schema"), Generation: recordString(t, "generation"),
			SessionID: recordString(t, "session"), SessionFile: recordString(t, "sessionFile"),
			PID: rapid.Int().Draw(t, "pid"), ProcessStartIdentity: recordString(t, "start"),
			BootIdentity: recordString(t, "boot"), Executable: recordString(t, "executable"),
			ExecutableDev: rapid.Uint64().Draw(t, "dev"), ExecutableIno: rapid.Uint64().Draw(t, "ino"),
			PIDNamespace: recordString(t, "pidns"), Hostname: recordString(t, "host"), RootID: recordString(t, "root"),
			CreatedAt: recordString(t, "created"), Epoch: rapid.Uint64().Draw(t, "epoch"), UID: rapid.Int().Draw(t, "uid"),
		}
		if want := statefile.MustCanonical(ownerDocument(owner)); !bytes.Equal(canonicalOwner(owner), want) {
			t.Fatalf("owner: field by field %q, struct %q", canonicalOwner(owner), want)
		}
		if epoch := max(1, owner.Epoch>>1); !bytes.Equal(encodeEpoch(epoch), statefile.MustCanonical(epochJSON{Schema: EpochSchema, Epoch: epoch})) {
			t.Fatalf("epoch %d: %q", epoch, encodeEpoch(epoch))
		}
		guard := guardRecord{Schema: owner.Schema, Generation: owner.Generation, Identity: owner.Identity(), CreatedAt: owner.CreatedAt}
		if want := statefile.MustCanonical(guardDocument(guard)); !bytes.Equal(canonicalGuard(guard), want) {
			t.Fatalf("guard: field by field %q, struct %q", canonicalGuard(guard), want)
		}
	})
}
