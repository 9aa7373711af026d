package statecas

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
	"pgregory.net/rapid"
)

// awkwardString draws record strings of every kind Canonical treats
// differently: plain ASCII, any Unicode, quotes, backslashes, controls,
// HTML characters and invalid UTF-8.
func awkwardString(t *rapid.T, label string) string {
	s := rapid.OneOf(
		rapid.StringMatching(`[a-z0-9-]{0,16}`),
		rapid.String(),
		rapid.StringOf(rapid.RuneFrom([]rune{'a', '"', '\\', '\n', 0x7f, '<', '&', 'é', 0x2028})),
	).Draw(t, label)
	if rapid.IntRange(0, 7).Draw(t, label+"-invalid-utf8") == 0 {
		s += "\xff"
	}
	return s
}

// TestOwnerWriteCanonicalEqualsWire: WriteCanonical gives the bytes
// Canonical gives for Wire's map, in either shape, whatever the strings.
func TestOwnerWriteCanonicalEqualsWire(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		owner := Owner{PID: rapid.IntRange(-1, PIDMax).Draw(t, "pid"), BootID: awkwardString(t, "boot"),
			ProcessStartID: awkwardString(t, "start"), Hostname: awkwardString(t, "host"),
			PIDNamespace: awkwardString(t, "ns"), Legacy: rapid.Bool().Draw(t, "legacy")}
		object := statefile.NewCanonicalObject(64)
		owner.WriteCanonical(object, "owner")
		want := statefile.MustCanonical(map[string]any{"owner": owner.Wire()})
		if got := object.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("WriteCanonical %q, Canonical of Wire %q", got, want)
		}
	})
}

// TestClaimBytesEqualsMapEncoding: a mutation claim written field by field
// has the bytes Canonical gives for it as a map.
func TestClaimBytesEqualsMapEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := claim{ID: awkwardString(t, "id"), Target: awkwardString(t, "target")}
		c.Owner.PID, c.Owner.UID = rapid.Int().Draw(t, "pid"), rapid.Int().Draw(t, "uid")
		c.Owner.StartTime, c.Owner.BootID = awkwardString(t, "start"), awkwardString(t, "boot")
		c.Owner.ExecutableDev, c.Owner.ExecutableIno = rapid.Uint64().Draw(t, "dev"), rapid.Uint64().Draw(t, "ino")
		c.Owner.Hostname, c.Owner.PIDNamespace = awkwardString(t, "host"), awkwardString(t, "ns")
		want := statefile.MustCanonical(map[string]any{
			"id": c.ID, "kind": ClaimKind, "schemaVersion": ClaimSchemaVersion, "target": c.Target,
			"owner": map[string]any{
				"pid": c.Owner.PID, "startTime": c.Owner.StartTime, "bootId": c.Owner.BootID,
				"executableDev": strconv.FormatUint(c.Owner.ExecutableDev, 10),
				"executableIno": strconv.FormatUint(c.Owner.ExecutableIno, 10),
				"hostname":      c.Owner.Hostname, "pidNamespace": c.Owner.PIDNamespace, "uid": c.Owner.UID,
			},
		})
		if got := c.bytes(); !bytes.Equal(got, want) {
			t.Fatalf("bytes %q, Canonical of the map %q", got, want)
		}
	})
}
