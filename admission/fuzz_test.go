package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

const fuzzHome = "/home"

var (
	fuzzSelf = leasetest.IdentityOf(7, 1000, "77")
	fuzzDead = leasetest.IdentityOf(42, 1000, "42")
	fuzzLive = leasetest.IdentityOf(43, 1000, "43")
)

func fuzzRecord(owner lease.ProcessIdentity, phase Phase, schema int) []byte {
	claim := Claim{SchemaVersion: schema, ID: "00000000-0000-4000-8000-000000000001",
		Owner: statecas.OwnerOf(owner), Phase: phase, Revision: "00000000-0000-4000-8000-000000000002"}
	if schema != SchemaVersion {
		claim.Owner.Hostname, claim.Owner.PIDNamespace, claim.Owner.Legacy = "", "", true
		if schema == 1 {
			claim.Phase, claim.Revision = "", ""
		}
	}
	return claim.Bytes()
}

// FuzzParse: Parse never panics, every refusal is an *Error of kind
// ErrCorrupt (bytes that are not JSON as such), an accepted record is
// exactly its canonical encoding, and judging its disposition never panics.
func FuzzParse(f *testing.F) {
	f.Add(fuzzRecord(fuzzDead, PhaseParentOwned, 3))
	f.Add(fuzzRecord(fuzzDead, PhaseHelperLaunching, 2))
	f.Add(fuzzRecord(fuzzDead, "", 1))
	f.Add([]byte(`{"schemaVersion":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		claim, err := Parse(data, "/x/active.json")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("refusal is not ErrCorrupt: %v", err)
			}
			if !json.Valid(data) && !strings.Contains(err.Error(), "export admission is not valid JSON") {
				t.Fatalf("bytes that are not JSON refused for another reason: %v", err)
			}
			return
		}
		if !bytes.Equal(claim.Bytes(), data) {
			t.Fatalf("accepted non-canonical bytes %q", data)
		}
		inspector := leasetest.NewInspector(fuzzSelf)
		inspector.SetLive(fuzzLive)
		dispose(claim, statusFunc(Config{Inspector: inspector}, fuzzSelf), statecas.BootDigest(fuzzSelf.BootID))
	})
}

type fuzzWorld struct {
	fsys   lease.FS
	config Config
	file   string
}

func newFuzzWorld(t *testing.T) *fuzzWorld {
	sim := simfs.New(simfs.Options{Dev: 3})
	dir := path.Join(append([]string{fuzzHome}, RootDir...)...)
	sim.MkdirAll(dir, 0o700, 1000)
	fsys := sim.View(1000)
	inspector := leasetest.NewInspector(fuzzSelf)
	inspector.SetLive(fuzzLive)
	config := Config{StateHome: fuzzHome, FS: fsys, Clock: leasetest.NewClock(),
		Inspector: inspector, IDs: leasetest.NewIDsWithPrefix(0xad)}
	return &fuzzWorld{fsys: fsys, config: config, file: path.Join(dir, FileName)}
}

// FuzzAdmissionFile writes arbitrary bytes as active.json and runs Inspect
// and Acquire. Every failure is a typed *Error; a refused Acquire leaves the
// file exactly as it was; a file is replaced only if it parsed as a
// recoverable record.
func FuzzAdmissionFile(f *testing.F) {
	f.Add(fuzzRecord(fuzzDead, PhaseParentOwned, 3))
	f.Add(fuzzRecord(fuzzLive, PhaseParentOwned, 3))
	f.Add(fuzzRecord(fuzzDead, PhaseHelperLaunching, 2))
	f.Add([]byte("{\"helperOwner\":null,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newFuzzWorld(t)
		leasetest.WriteNew(t, w.fsys, w.file, data)
		if _, _, err := Inspect(ctx, w.config); err != nil {
			checkTyped(t, err)
		}
		_, err := Acquire(ctx, w.config)
		if err != nil {
			checkTyped(t, err)
			if !bytes.Equal(leasetest.ReadOrNil(t, w.fsys, w.file), data) {
				t.Fatalf("refused Acquire changed active.json %q", data)
			}
			return
		}
		claim, parseErr := Parse(data, w.file)
		if parseErr != nil {
			t.Fatalf("Acquire replaced an unparsable active.json %q", data)
		}
		inspector := w.config.Inspector
		if got := dispose(claim, statusFunc(Config{Inspector: inspector}, fuzzSelf), statecas.BootDigest(fuzzSelf.BootID)); got != DispositionRecoverable {
			t.Fatalf("Acquire replaced a %s admission", got)
		}
	})
}

// FuzzMutationClaim writes arbitrary bytes as the mutation claim of
// active.json: Acquire never panics, refuses with a typed *Error beside a
// claim that does not parse, and never removes or changes that claim.
func FuzzMutationClaim(f *testing.F) {
	f.Add(statecas.MutationClaimBytes("00000000-0000-4000-8000-000000000009", "/home/active.json", fuzzDead))
	f.Add(statecas.MutationClaimBytes("00000000-0000-4000-8000-000000000009", "/home/active.json", fuzzLive))
	f.Add([]byte(`{"id":"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newFuzzWorld(t)
		claimPath := statecas.ClaimPath(w.file)
		leasetest.WriteNew(t, w.fsys, claimPath, data)
		_, err := Acquire(ctx, w.config)
		if err != nil {
			checkTyped(t, err)
		}
		if !looksLikeObject(data) && (err == nil || !bytes.Equal(leasetest.ReadOrNil(t, w.fsys, claimPath), data)) {
			t.Fatalf("a claim that is not JSON was overridden or removed (%v)", err)
		}
	})
}

// looksLikeObject reports whether data is a JSON object prefix worth parsing at all.
func looksLikeObject(data []byte) bool {
	trimmed := bytes.TrimSpace(data)
	return len(trimmed) > 1 && trimmed[0] == '{' && trimmed[len(trimmed)-1] == '}'
}

func checkTyped(t *testing.T, err error) {
	t.Helper()
	var own *Error
	if !errors.As(err, &own) {
		t.Fatalf("untyped error %T: %v", err, err)
	}
}
