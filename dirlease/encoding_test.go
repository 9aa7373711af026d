package dirlease

import (
	"bytes"
	"testing"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"pgregory.net/rapid"
)

// TestClaimBytesEqualsMapEncoding: Bytes, written field by field, gives the
// bytes Canonical gives for the claim as a map, for every schema version,
// with and without a child owner, an output root or a boot-clock time,
// whatever the strings.
func TestClaimBytesEqualsMapEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.OneOf(rapid.StringMatching(`[a-z0-9/-]{0,16}`), rapid.String())
		owner := func(label string) statecas.Owner {
			return statecas.Owner{PID: rapid.Int().Draw(t, label+"-pid"), BootID: text.Draw(t, label+"-boot"),
				ProcessStartID: text.Draw(t, label+"-start"), Hostname: text.Draw(t, label+"-host"),
				PIDNamespace: text.Draw(t, label+"-ns"), Legacy: rapid.Bool().Draw(t, label+"-legacy")}
		}
		identity := func(label string) Identity {
			return Identity{Device: text.Draw(t, label+"-dev"), Inode: text.Draw(t, label+"-ino"),
				BirthtimeNs: text.Draw(t, label+"-birth")}
		}
		claim := Claim{SchemaVersion: rapid.IntRange(schemaLegacyOwners, SchemaVersion).Draw(t, "version"),
			ID: text.Draw(t, "id"), Role: Role(text.Draw(t, "role")), Path: text.Draw(t, "path"),
			ParentPath: text.Draw(t, "parent"), ParentIdentity: identity("parent"),
			DirectoryIdentity: identity("directory"), OutputRoot: text.Draw(t, "output"),
			Owner: owner("owner"), Phase: Phase(text.Draw(t, "phase")),
			CreatedAtMs: rapid.Int64().Draw(t, "created"), RecoverAfterMs: rapid.Int64().Draw(t, "recover"),
			Revision:        text.Draw(t, "revision"),
			CreatedAtBootMs: rapid.SampledFrom([]int64{NoBootTime, rapid.Int64().Draw(t, "boot-ms")}).Draw(t, "boot-time")}
		if rapid.Bool().Draw(t, "has-child") {
			child := owner("child")
			claim.ChildOwner = &child
		}
		if got, want := claim.Bytes(), mapEncoding(claim); !bytes.Equal(got, want) {
			t.Fatalf("Bytes %q, Canonical of the map %q", got, want)
		}
	})
}

// mapEncoding is the claim as a map through Canonical: how Bytes wrote it
// before it wrote field by field.
func mapEncoding(c Claim) []byte {
	record := map[string]any{
		"schemaVersion": c.SchemaVersion, "kind": ClaimKind, "id": c.ID, "role": string(c.Role),
		"path": c.Path, "parentPath": c.ParentPath, "parentIdentity": c.ParentIdentity.wire(),
		"directoryIdentity": c.DirectoryIdentity.wire(), "outputRoot": nil, "owner": c.Owner.Wire(),
		"childOwner": nil, "phase": string(c.Phase), "createdAtMs": c.CreatedAtMs,
		"recoverAfterMs": c.RecoverAfterMs,
	}
	if c.OutputRoot != "" {
		record["outputRoot"] = c.OutputRoot
	}
	if c.ChildOwner != nil {
		record["childOwner"] = c.ChildOwner.Wire()
	}
	if !c.Legacy() {
		record["revision"] = c.Revision
		record["createdAtBootMs"] = nil
		if c.CreatedAtBootMs != NoBootTime {
			record["createdAtBootMs"] = c.CreatedAtBootMs
		}
	}
	return statefile.MustCanonical(record)
}
