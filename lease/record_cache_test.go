package lease

import (
	"sync"
	"testing"
)

func cacheTestGuard(generation string) guardRecord {
	return guardRecord{Schema: GuardSchema, Generation: generation, CreatedAt: "2026-11-30T05:50:13.123Z",
		Identity: ProcessIdentity{PID: 1234, StartTime: "987654", Executable: "/usr/bin/worker", Hostname: "host-a",
			UID: 1000, BootID: "boot-1", ExecutableDev: 2049, ExecutableIno: 123456, PIDNamespace: "pid:[4026531836]"}}
}

// TestRecordCacheAnswersAsParsing: whatever bytes come, in whatever order,
// the cached parse returns what parseGuard returns: a hit never hides a
// changed or corrupt record, and a refusal is never remembered.
func TestRecordCacheAnswersAsParsing(t *testing.T) {
	m := &Manager{}
	first := canonicalGuard(cacheTestGuard("g1"))
	second := canonicalGuard(cacheTestGuard("g2"))
	corrupt := first[:len(first)-1]
	inputs := [][]byte{first, first, second, corrupt, second, first, corrupt, corrupt, first}
	for i, data := range inputs {
		got, gotErr := m.parseGuardCached(data, "guard")
		want, wantErr := parseGuard(data, "guard")
		if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("input %d: cached %+v, %v; parsed %+v, %v", i, got, gotErr, want, wantErr)
		}
	}
}

// TestRecordCacheKeepsItsOwnCopy: reusing the buffer a record was read
// into cannot change what the cache answers for other bytes.
func TestRecordCacheKeepsItsOwnCopy(t *testing.T) {
	m := &Manager{}
	buffer := canonicalGuard(cacheTestGuard("g1"))
	if _, err := m.parseGuardCached(buffer, "guard"); err != nil {
		t.Fatal(err)
	}
	other := canonicalGuard(cacheTestGuard("g2"))
	copy(buffer, other) // the same length: g1 and g2 differ in one byte
	got, err := m.parseGuardCached(buffer, "guard")
	if err != nil || got.Generation != "g2" {
		t.Fatalf("after the buffer changed: %+v, %v; want generation g2", got, err)
	}
}

// TestRecordCacheIsSafeAcrossGoroutines: one Manager parsing from several
// goroutines (run with -race) always gets the record of its own bytes.
func TestRecordCacheIsSafeAcrossGoroutines(t *testing.T) {
	m := &Manager{}
	var wait sync.WaitGroup
	for worker := range 4 {
		wait.Go(func() {
			generation := []string{"g1", "g2"}[worker%2]
			data := canonicalGuard(cacheTestGuard(generation))
			for range 200 {
				got, err := m.parseGuardCached(data, "guard")
				if err != nil || got.Generation != generation {
					t.Errorf("worker %d: %+v, %v", worker, got, err)
					return
				}
				owner := canonicalOwner(Owner{Schema: OwnerSchema, Generation: generation, SessionID: "s", SessionFile: "/f",
					PID: 1, ProcessStartIdentity: "1", Executable: "/bin/x", Hostname: "h", RootID: "r",
					CreatedAt: "2026-11-30T05:50:13.123Z", Epoch: 1, UID: 0})
				if parsed, err := m.parseOwnerCached(owner); err != nil || parsed.Generation != generation {
					t.Errorf("worker %d owner: %+v, %v", worker, parsed, err)
					return
				}
			}
		})
	}
	wait.Wait()
}
