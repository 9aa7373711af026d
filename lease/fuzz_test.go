package lease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

// The engine-level fuzz targets of package lease: each writes arbitrary
// bytes into one file the Manager reads (owner.json, the lifecycle guard, a
// reclaim intent, the epoch counter) in a fresh simfs namespace and runs
// Inspect and Acquire. No call may panic or return an untyped error, and
// the fuzzed bytes are evidence: they stay where they were or move into
// quarantine/, and are deleted only where docs say a stale record may be
// (a reclaim intent of a provably dead process).

const (
	fuzzNamespace = "/ns"
	fuzzUID       = 1000
)

// fuzzIdentity is leasetest.Identity(pid) running as fuzzUID, the owner of
// the simfs namespace.
func fuzzIdentity(pid int) lease.ProcessIdentity {
	id := leasetest.Identity(pid)
	id.UID = fuzzUID
	return id
}

type fuzzWorld struct {
	sim     *simfs.FS
	fsys    lease.FS
	manager *lease.Manager
}

func newFuzzWorld(t *testing.T) *fuzzWorld {
	sim := simfs.New(simfs.Options{Dev: 5})
	sim.MkdirAll(fuzzNamespace+"/quarantine", 0o700, fuzzUID)
	sim.MkdirAll(fuzzNamespace+"/lifecycle-reclaims", 0o700, fuzzUID)
	sim.MkdirAll(fuzzNamespace+"/receiver.lock", 0o700, fuzzUID)
	fsys := sim.View(fuzzUID)
	self := fuzzIdentity(1)
	inspector := leasetest.NewInspector(self)
	inspector.SetLive(fuzzIdentity(43))
	manager, err := lease.NewManager(lease.Config{
		Namespace: fuzzNamespace, RootID: "root-1", FS: fsys, Clock: leasetest.NewClock(),
		Inspector: inspector, IDs: leasetest.NewIDsWithPrefix(0xf022), GuardWait: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fuzzWorld{sim: sim, fsys: fsys, manager: manager}
}

// quarantined returns the bytes of every file under quarantine/ (one level
// of directories deep) whose name starts with prefix.
func (w *fuzzWorld) quarantined(t *testing.T, prefix string) [][]byte {
	dir := fuzzNamespace + "/quarantine"
	entries, err := w.fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var found [][]byte
	for _, entry := range entries {
		if !strings.HasPrefix(entry.Name, prefix) {
			continue
		}
		name := path.Join(dir, entry.Name)
		if entry.Type.IsDir() {
			name = path.Join(name, "owner.json")
		}
		found = append(found, leasetest.ReadOrNil(t, w.fsys, name))
	}
	return found
}

// acquire runs Inspect and Acquire and checks that neither panics or
// returns an untyped error.
func (w *fuzzWorld) acquire(t *testing.T) lease.AcquireResult {
	ctx := context.Background()
	if _, err := w.manager.Inspect(ctx); err != nil {
		checkTyped(t, err)
	}
	result, err := w.manager.Acquire(ctx, lease.AcquireRequest{SessionID: "s", SessionFile: "/s.json"})
	if err != nil {
		checkTyped(t, err)
	}
	return result
}

func checkTyped(t *testing.T, err error) {
	t.Helper()
	var pathError *fs.PathError
	var linkError interface{ Unwrap() error }
	if !errors.As(err, &pathError) && !errors.As(err, &linkError) {
		t.Fatalf("untyped error %T: %v", err, err)
	}
}

// epochOf reads the "epoch" number of JSON bytes, 0 when there is none.
func epochOf(data []byte) uint64 {
	var record struct{ Epoch uint64 }
	if json.Unmarshal(data, &record) != nil {
		return 0
	}
	return record.Epoch
}

func ownerRecord(pid int, schema int) []byte {
	legacy := `"bootIdentity":"boot-1","createdAt":"2026-01-02T03:04:05.000Z","executable":"/usr/local/bin/leasekit",` +
		`"generation":"00000000-0000-4000-8000-000000000abc","hostname":"host-a","piSessionFile":"/s/0.json",` +
		`"piSessionId":"s0","pid":%d,"processStartIdentity":"%d","rootId":"root-1","schema":%d`
	record := fmt.Sprintf(legacy, pid, 1000+pid, schema)
	if schema == 2 {
		record += `,"epoch":7,"executableDevice":"2049","executableInode":"131072","pidNamespace":"4026531836","uid":1000`
	}
	return []byte("{" + record + "}\n")
}

func guardRecord(pid int) []byte {
	return []byte(fmt.Sprintf(`{"bootIdentity":"boot-1","createdAt":"2026-01-02T03:04:05.000Z",`+
		`"executable":"/usr/local/bin/leasekit","executableDevice":"2049","executableInode":"131072",`+
		`"generation":"00000000-0000-4000-8000-000000000def","hostname":"host-a","pid":%d,`+
		`"pidNamespace":"4026531836","processStartIdentity":"%d","schema":2,"uid":1000}`+"\n", pid, 1000+pid))
}

// FuzzOwnerFile: arbitrary owner.json bytes. They survive in place or in
// quarantine/receiver.*; a new owner's epoch is above the old one's.
func FuzzOwnerFile(f *testing.F) {
	f.Add(ownerRecord(42, 2))
	f.Add(ownerRecord(43, 2))
	f.Add(ownerRecord(42, 1))
	f.Add([]byte(`{"schema":2`))
	// A dead owner at the largest epoch: refused corrupt-epoch, kept in place.
	f.Add(bytes.Replace(ownerRecord(42, 2), []byte(`"epoch":7`), []byte(fmt.Sprintf(`"epoch":%d`, math.MaxInt64)), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newFuzzWorld(t)
		owner := fuzzNamespace + "/receiver.lock/owner.json"
		leasetest.WriteNew(t, w.fsys, owner, data)
		result := w.acquire(t)
		kept := bytes.Equal(leasetest.ReadOrNil(t, w.fsys, owner), data)
		for _, moved := range w.quarantined(t, "receiver.") {
			kept = kept || bytes.Equal(moved, data)
		}
		if !kept {
			t.Fatalf("owner bytes %q were lost (result %v)", data, result.Kind)
		}
		if result.Kind == lease.Acquired && result.Owner.Epoch <= epochOf(data) {
			t.Fatalf("new epoch %d is not above the reclaimed owner's %d", result.Owner.Epoch, epochOf(data))
		}
	})
}

// FuzzGuardFile: arbitrary lifecycle guard bytes. They survive in place or
// in quarantine/lifecycle.*; a guard that is not a valid record refuses.
func FuzzGuardFile(f *testing.F) {
	f.Add(guardRecord(42))
	f.Add(guardRecord(43))
	f.Add([]byte(`{"schema":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newFuzzWorld(t)
		guard := fuzzNamespace + "/receiver.lifecycle.guard.json"
		leasetest.WriteNew(t, w.fsys, guard, data)
		result := w.acquire(t)
		kept := bytes.Equal(leasetest.ReadOrNil(t, w.fsys, guard), data)
		for _, moved := range w.quarantined(t, "lifecycle.") {
			kept = kept || bytes.Equal(moved, data)
		}
		if !kept {
			t.Fatalf("guard bytes %q were lost (result %v)", data, result.Kind)
		}
		if !json.Valid(data) && result.Kind != lease.Refused {
			t.Fatalf("invalid guard %q did not refuse: %v", data, result.Kind)
		}
	})
}

// FuzzIntentFile: arbitrary reclaim intent bytes. An intent that is not
// even JSON is never removed and always refuses.
func FuzzIntentFile(f *testing.F) {
	f.Add(guardRecord(42))
	f.Add(guardRecord(43))
	f.Add([]byte("\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newFuzzWorld(t)
		intent := fuzzNamespace + "/lifecycle-reclaims/reclaim.00000000-0000-4000-8000-000000000111.json"
		leasetest.WriteNew(t, w.fsys, intent, data)
		result := w.acquire(t)
		if !json.Valid(data) {
			if !bytes.Equal(leasetest.ReadOrNil(t, w.fsys, intent), data) {
				t.Fatalf("invalid intent %q was removed or changed", data)
			}
			if result.Kind != lease.Refused {
				t.Fatalf("invalid intent %q did not refuse: %v", data, result.Kind)
			}
		}
	})
}

// FuzzEpochFile: arbitrary epoch counter bytes. Either the call refuses
// and the file is unchanged, or the new epoch is above the stored one.
func FuzzEpochFile(f *testing.F) {
	f.Add([]byte("{\"epoch\":7,\"schema\":1}\n"))
	f.Add([]byte(`{"epoch":-1,"schema":1}`))
	f.Add([]byte(fmt.Sprintf("{\"epoch\":%d,\"schema\":1}\n", math.MaxInt64)))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newFuzzWorld(t)
		must(t, w.fsys.Remove(fuzzNamespace+"/receiver.lock"))
		epochFile := fuzzNamespace + "/receiver.epoch.json"
		leasetest.WriteNew(t, w.fsys, epochFile, data)
		result := w.acquire(t)
		switch result.Kind {
		case lease.Acquired:
			if result.Owner.Epoch <= epochOf(data) {
				t.Fatalf("epoch %d issued over stored %q", result.Owner.Epoch, data)
			}
		default:
			if !bytes.Equal(leasetest.ReadOrNil(t, w.fsys, epochFile), data) {
				t.Fatalf("epoch file %q changed by a %v call", data, result.Kind)
			}
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzLeftoverName: arbitrary names of leftover temp files (the engine
// parses the writer's identity out of ".tmp-lg.<ns>.<pid>.<start>.<host>-<uuid>").
// Acquire never panics; a temp is removed only if its name ends in a UUID
// and does not name a live writer.
func FuzzLeftoverName(f *testing.F) {
	const uuid = "-00000000-0000-4000-8000-000000000001"
	f.Add("4026531836.42.1042.host-a" + uuid)
	f.Add("4026531836.43.1043.host-a" + uuid)
	f.Add("-.42.1042._686f73742d61" + uuid)
	f.Add("anon")
	f.Fuzz(func(t *testing.T, tag string) {
		if tag == "" || len(tag) > 200 || strings.ContainsAny(tag, "/\x00") {
			return
		}
		w := newFuzzWorld(t)
		name := fuzzNamespace + "/.tmp-lg." + tag
		leasetest.WriteNew(t, w.fsys, name, []byte("temp\n"))
		w.acquire(t)
		if leasetest.ReadOrNil(t, w.fsys, name) != nil {
			if tag == "4026531836.42.1042.host-a"+uuid {
				t.Fatal("the temp of the dead writer 42 was not cleaned up")
			}
			return
		}
		if len(tag) < len(uuid) || tag[len(tag)-len(uuid)] != '-' {
			t.Fatalf("temp %q without a UUID suffix was removed", tag)
		}
		if strings.Contains(tag, ".43.1043.") {
			t.Fatalf("temp %q of the live writer 43 was removed", tag)
		}
	})
}
