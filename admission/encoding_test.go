package admission

import (
	"bytes"
	"testing"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"pgregory.net/rapid"
)

// TestClaimBytesEqualsMapEncoding: Bytes, written field by field, gives the
// bytes Canonical gives for the record as a map, for every schema version,
// with and without a helper owner or a revision, whatever the strings.
func TestClaimBytesEqualsMapEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.OneOf(rapid.StringMatching(`[a-z0-9-]{0,16}`), rapid.String())
		owner := func(label string) statecas.Owner {
			return statecas.Owner{PID: rapid.Int().Draw(t, label+"-pid"), BootID: text.Draw(t, label+"-boot"),
				ProcessStartID: text.Draw(t, label+"-start"), Hostname: text.Draw(t, label+"-host"),
				PIDNamespace: text.Draw(t, label+"-ns"), Legacy: rapid.Bool().Draw(t, label+"-legacy")}
		}
		claim := Claim{SchemaVersion: rapid.IntRange(1, SchemaVersion).Draw(t, "version"),
			ID: text.Draw(t, "id"), Owner: owner("owner"), Phase: Phase(text.Draw(t, "phase")),
			Revision: rapid.SampledFrom([]string{"", text.Draw(t, "revision")}).Draw(t, "has-revision")}
		if rapid.Bool().Draw(t, "has-helper") {
			helper := owner("helper")
			claim.HelperOwner = &helper
		}
		if got, want := claim.Bytes(), mapEncoding(claim); !bytes.Equal(got, want) {
			t.Fatalf("Bytes %q, Canonical of the map %q", got, want)
		}
	})
}

// mapEncoding is the record as a map through Canonical: how Bytes wrote it
// before it wrote field by field.
func mapEncoding(c Claim) []byte {
	record := map[string]any{
		"schemaVersion": c.SchemaVersion, "kind": RecordKind, "id": c.ID, "owner": c.Owner.Wire(),
	}
	if c.SchemaVersion != 1 {
		record["phase"] = string(c.Phase)
		record["helperOwner"] = nil
		if c.HelperOwner != nil {
			record["helperOwner"] = c.HelperOwner.Wire()
		}
	}
	if c.Revision != "" {
		record["revision"] = c.Revision
	}
	return statefile.MustCanonical(record)
}
