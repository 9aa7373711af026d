package dirlease

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

const (
	fuzzHome = "/home"
	fuzzWork = "/work/a"
	fuzzID   = "00000000-0000-4000-8000-000000000001"
	// fuzzRevision is the valid claim's revision.
	fuzzRevision = "00000000-0000-4000-8000-0000000000aa"
)

var (
	fuzzSelf = leasetest.IdentityOf(7, 1000, "77")
	fuzzDead = leasetest.IdentityOf(42, 1000, "42")
)

type fuzzWorld struct {
	fsys   lease.FS
	config Config
	root   string
}

// newFuzzWorld is a simfs with a leased directory /work/a (holding one
// file) and the claim directory, every directory private to uid 1000.
func newFuzzWorld(t *testing.T) *fuzzWorld {
	sim := simfs.New(simfs.Options{Dev: 4})
	root := path.Join(append([]string{fuzzHome}, RootDir...)...)
	sim.MkdirAll(root, 0o700, 1000)
	sim.MkdirAll(fuzzWork, 0o700, 1000)
	fsys := sim.View(1000)
	w := &fuzzWorld{fsys: fsys, root: root, config: Config{StateHome: fuzzHome, FS: fsys,
		Clock:     leasetest.NewClock(),
		Inspector: leasetest.NewInspector(fuzzSelf), IDs: leasetest.NewIDsWithPrefix(0xd1)}}
	leasetest.WriteNew(t, w.fsys, fuzzWork+"/data", []byte("precious\n"))
	return w
}

func (w *fuzzWorld) identity(t *testing.T, name string) Identity {
	info, err := w.fsys.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := info.Identity()
	if !ok {
		t.Fatal("no birth time")
	}
	return IdentityOf(id)
}

// validClaim is the claim of a dead owner on /work/a, as Create writes it.
func (w *fuzzWorld) validClaim(t *testing.T) []byte {
	return Claim{SchemaVersion: SchemaVersion, ID: fuzzID, Role: RoleRawWorking, Path: fuzzWork,
		ParentPath: path.Dir(fuzzWork), ParentIdentity: w.identity(t, path.Dir(fuzzWork)),
		DirectoryIdentity: w.identity(t, fuzzWork), Owner: statecas.OwnerOf(fuzzDead), Phase: PhasePreparing,
		CreatedAtMs: 1000, RecoverAfterMs: 2000, Revision: fuzzRevision, CreatedAtBootMs: 5}.Bytes()
}

// FuzzParse: Parse never panics, refuses with ErrCorrupt only (bytes that
// are not JSON as such), and accepts exactly the canonical bytes of a claim
// named <id>.json.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":3,"id":"` + fuzzID + `"}`))
	f.Add(Claim{SchemaVersion: 2, ID: fuzzID, Role: RoleBundleStage, Path: "/w/a", ParentPath: "/w",
		OutputRoot: "/w/out", ParentIdentity: Identity{"1", "2", "3"}, DirectoryIdentity: Identity{"1", "4", "5"},
		Owner: statecas.Owner{PID: 1, BootID: strings.Repeat("a", 64), ProcessStartID: strings.Repeat("b", 64), Legacy: true},
		Phase: PhasePreparing, CreatedAtMs: 1, RecoverAfterMs: 1}.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		claim, err := Parse(data, fuzzID+".json", "/x/"+fuzzID+".json")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("refusal is not ErrCorrupt: %v", err)
			}
			if !json.Valid(data) && !strings.Contains(err.Error(), "directory lease is not valid JSON") {
				t.Fatalf("bytes that are not JSON refused for another reason: %v", err)
			}
			return
		}
		if claim.ID != fuzzID || !bytes.Equal(claim.Bytes(), data) {
			t.Fatalf("accepted %q, which is not the canonical claim named by its file", data)
		}
		claim.DirectoryIdentity.FileIdentity() // panics if an invalid identity passed
	})
}

// FuzzClaimFile writes arbitrary bytes as a claim file beside a leased
// directory and runs Recover. Every failure is a typed *Error; on a
// failure, the directory and the claim are untouched; the directory is
// removed only by a claim that parses and names exactly its identity.
func FuzzClaimFile(f *testing.F) {
	f.Add([]byte("VALID"))
	f.Add([]byte("VALID-RUNNING"))
	f.Add([]byte(`{"childOwner":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newFuzzWorld(t)
		valid := w.validClaim(t)
		seedValid := string(data) == "VALID"
		switch string(data) {
		case "VALID":
			data = valid
		case "VALID-RUNNING":
			data = bytes.Replace(valid, []byte(`"preparing"`), []byte(`"running"`), 1)
		}
		claimFile := path.Join(w.root, fuzzID+".json")
		leasetest.WriteNew(t, w.fsys, claimFile, data)
		_, err := Recover(ctx, w.config)
		_, statErr := w.fsys.Lstat(fuzzWork + "/data")
		if seedValid && (err != nil || !errors.Is(statErr, fs.ErrNotExist)) {
			t.Fatalf("the valid claim of a dead owner did not recover its directory: %v", err)
		}
		if err != nil {
			var own *Error
			if !errors.As(err, &own) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if statErr != nil {
				t.Fatalf("a failed recovery removed the leased directory: %v", err)
			}
			if content, readErr := statefile.ReadFile(w.fsys, claimFile, 1<<20); readErr != nil || !bytes.Equal(content, data) {
				t.Fatalf("a failed recovery changed the claim (%v)", readErr)
			}
			return
		}
		if errors.Is(statErr, fs.ErrNotExist) {
			claim, parseErr := Parse(data, fuzzID+".json", claimFile)
			if parseErr != nil || claim.Path != fuzzWork {
				t.Fatalf("the directory was removed for a claim that does not name it (%v)", parseErr)
			}
		}
	})
}

// FuzzMachineryFile writes arbitrary bytes as each kind of mutation
// machinery Recover's snapshot reads (a mutation claim, an orphan
// quarantine, a claim temp) beside a valid claim of a live owner. Recover
// never panics and fails only with a typed *Error; machinery that is not
// even JSON is never removed, and the live claim and its directory are
// never touched.
func FuzzMachineryFile(f *testing.F) {
	live := leasetest.IdentityOf(43, 1000, "43")
	f.Add(uint8(0), statecas.MutationClaimBytes("00000000-0000-4000-8000-000000000009", fuzzID+".json", fuzzDead))
	f.Add(uint8(1), statecas.MutationClaimBytes("00000000-0000-4000-8000-000000000009", fuzzID+".json", live))
	f.Add(uint8(2), []byte(`{"id":`))
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		w := newFuzzWorld(t)
		w.config.Inspector.(*leasetest.Inspector).SetLive(live)
		valid := w.validClaim(t)
		valid = bytes.Replace(valid, []byte(statecas.OwnerOf(fuzzDead).ProcessStartID), []byte(statecas.OwnerOf(live).ProcessStartID), 1)
		valid = bytes.Replace(valid, []byte(`"pid":42`), []byte(`"pid":43`), 1)
		claimFile := path.Join(w.root, fuzzID+".json")
		leasetest.WriteNew(t, w.fsys, claimFile, valid)
		names := []string{"." + fuzzID + ".json.mutation",
			"." + fuzzID + ".json.mutation.00000000-0000-4000-8000-0000000000aa.orphan",
			".tmp-mutation-00000000-0000-4000-8000-0000000000bb"}
		machinery := path.Join(w.root, names[int(kind)%len(names)])
		leasetest.WriteNew(t, w.fsys, machinery, data)
		report, err := Recover(ctx, w.config)
		if err != nil {
			var own *Error
			if !errors.As(err, &own) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
		} else if report.Active != 1 {
			t.Fatalf("the live claim was not reported active: %+v", report)
		}
		if content, readErr := statefile.ReadFile(w.fsys, claimFile, 1<<20); readErr != nil || !bytes.Equal(content, valid) {
			t.Fatalf("the live claim changed (%v)", readErr)
		}
		if _, statErr := w.fsys.Lstat(fuzzWork + "/data"); statErr != nil {
			t.Fatalf("the live lease's directory was touched: %v", statErr)
		}
		if !looksLikeObject(data) {
			if content, readErr := statefile.ReadFile(w.fsys, machinery, 1<<20); readErr != nil || !bytes.Equal(content, data) {
				t.Fatalf("machinery %s that is not JSON was removed or changed (%v)", path.Base(machinery), readErr)
			}
		}
	})
}

// looksLikeObject reports whether data could be a JSON object at all.
func looksLikeObject(data []byte) bool {
	trimmed := bytes.TrimSpace(data)
	return len(trimmed) > 1 && trimmed[0] == '{' && trimmed[len(trimmed)-1] == '}'
}
