package statecas

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

// FuzzParseOwner: ParseOwner never panics, refuses with a *SchemaError, and
// an accepted owner (either shape) round-trips through its canonical wire
// bytes; judging it against a process table never panics.
func FuzzParseOwner(f *testing.F) {
	self := leasetest.IdentityOf(7, 1000, "77")
	f.Add(statefile.MustCanonical(OwnerOf(self).Wire()))
	legacy := OwnerOf(self)
	legacy.Legacy = true
	f.Add(statefile.MustCanonical(legacy.Wire()))
	f.Add([]byte(`{"bootId":"x","pid":0,"processStartId":"y"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		inspector := leasetest.NewInspector(self)
		inspector.SetLive(leasetest.IdentityOf(42, 1000, "42"))
		for _, legacyShape := range []bool{false, true} {
			owner, err := ParseOwner(data, "fuzz owner", legacyShape)
			if err != nil {
				var schema *statefile.SchemaError
				if !errors.As(err, &schema) {
					t.Fatalf("untyped refusal %T: %v", err, err)
				}
				continue
			}
			wire := statefile.MustCanonical(owner.Wire())
			back, err := ParseOwner(wire, "fuzz owner", legacyShape)
			if err != nil || back != owner {
				t.Fatalf("owner %+v does not round-trip through %q: %v", owner, wire, err)
			}
			if status := OwnerStatus(owner, self, inspector).Status; status < StatusLive || status > StatusUnknown {
				t.Fatalf("status %v", status)
			}
		}
	})
}

// FuzzParseClaim: a mutation claim parses only from its exact canonical
// bytes, and never panics.
func FuzzParseClaim(f *testing.F) {
	f.Add(MutationClaimBytes("00000000-0000-4000-8000-000000000001", "/s/active.json", leasetest.IdentityOf(7, 1000, "77")))
	f.Add([]byte(`{"id":"x","kind":"leasekit-state-mutation","owner":{},"schemaVersion":1,"target":"t"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		parsed, err := parseClaim(data)
		if err != nil {
			return
		}
		if !bytes.Equal(parsed.bytes(), data) {
			t.Fatalf("accepted non-canonical claim %q", data)
		}
	})
}

// FuzzMutationClaimFile writes arbitrary bytes as the mutation claim of a
// state file in simfs and runs every compare-and-swap operation over it. No
// call may panic; every refusal is a typed *Error; a claim that does not
// parse is never removed or changed, and the state file is never written
// while it is there.
func FuzzMutationClaimFile(f *testing.F) {
	self := leasetest.IdentityOf(7, 1000, "77")
	f.Add(MutationClaimBytes("00000000-0000-4000-8000-000000000001", "/s/state.json", leasetest.IdentityOf(42, 1000, "42")))
	f.Add(MutationClaimBytes("00000000-0000-4000-8000-000000000001", "/s/state.json", self))
	f.Add([]byte(`{"id":`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		sim := simfs.New(simfs.Options{Dev: 9})
		sim.MkdirAll("/s", 0o700, 1000)
		fsys := sim.View(1000)
		env := Env{FS: fsys, IDs: leasetest.NewIDsWithPrefix(0xabc), Inspector: leasetest.NewInspector(self), UID: 1000}
		const target = "/s/state.json"
		original := []byte("{\"v\":1}\n")
		leasetest.WriteNew(t, fsys, target, original)
		leasetest.WriteNew(t, fsys, ClaimPath(target), data)
		_, corruptErr := parseClaim(data)
		_, err := WriteIfUnchanged(env, target, []byte("{\"v\":2}\n"), statefile.SHA256Hex(original))
		checkTyped(t, err)
		if corruptErr != nil {
			if err == nil {
				t.Fatal("a write went through beside a corrupt claim")
			}
			if content, readErr := statefile.ReadFile(fsys, ClaimPath(target), 1<<20); readErr != nil || !bytes.Equal(content, data) {
				t.Fatalf("the corrupt claim was changed or removed (%v)", readErr)
			}
			if content, _ := statefile.ReadFile(fsys, target, 1<<20); !bytes.Equal(content, original) {
				t.Fatal("the state file changed beside a corrupt claim")
			}
		}
		_, err = RemoveIfUnchanged(env, target, "0")
		checkTyped(t, err)
	})
}

// checkTyped fails on an error that is neither a statecas *Error nor an
// FS error.
func checkTyped(t *testing.T, err error) {
	t.Helper()
	var own *Error
	var pathError *fs.PathError
	if err != nil && !errors.As(err, &own) && !errors.As(err, &pathError) {
		t.Fatalf("untyped error %T: %v", err, err)
	}
}
