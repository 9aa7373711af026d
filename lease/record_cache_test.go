package lease

import (
	"path"
	"sync"
	"testing"

	"pgregory.net/rapid"
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

// fullRoundTrip reports whether the package encodeGuard accepts g.
func fullRoundTrip(g guardRecord) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	encodeGuard(g)
	return true
}

// TestGuardTextRoundTripsAsParsing: for a verified identity, the
// shortcut accepts a generation and creation time exactly when the full
// round trip does, whatever the strings.
func TestGuardTextRoundTripsAsParsing(t *testing.T) {
	base := cacheTestGuard("g1")
	if !fullRoundTrip(base) {
		t.Fatal("the base guard does not round-trip")
	}
	texts := rapid.OneOf(
		rapid.SampledFrom([]string{"", "g", "lg.0123.abc", "2026-11-30T05:50:13.123Z", "2026-11-30T05:50:13Z",
			"2026-11-30T05:50:13+01:00", "2026-11-30T05:50:13.123456789Z", "2026-13-30T05:50:13Z", "2026-11-30",
			"yesterday", "\xff\xfe", "a\"b", "tab\there", "\u2028", "é", "2026-11-30T05:50:13.123Z\xff"}),
		rapid.StringOfN(rapid.RuneFrom([]rune("0123456789-:TZ.+ a\"\\\x01é")), 0, 32, -1),
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 12), func(b []byte) string { return string(b) }),
	)
	rapid.Check(t, func(t *rapid.T) {
		g := base
		g.Generation = texts.Draw(t, "generation")
		g.CreatedAt = texts.Draw(t, "createdAt")
		if got, want := guardTextRoundTrips(g.Generation, g.CreatedAt), fullRoundTrip(g); got != want {
			t.Fatalf("generation %q, createdAt %q: shortcut %v, full round trip %v", g.Generation, g.CreatedAt, got, want)
		}
	})
}

// TestManagerEncodeGuardChecksEveryGuard: the Manager's encodeGuard gives
// the package encodeGuard's bytes, and still refuses a bad guard after a
// good one with the same identity, or a good text under another identity.
func TestManagerEncodeGuardChecksEveryGuard(t *testing.T) {
	m := &Manager{}
	good := cacheTestGuard("g1")
	if got := m.encodeGuard(good); string(got) != string(encodeGuard(good)) {
		t.Fatalf("bytes differ: %q", got)
	}
	second := cacheTestGuard("g2")
	encoded := m.encodeGuard(second)
	if string(encoded) != string(encodeGuard(second)) {
		t.Fatalf("bytes differ on the shortcut: %q", encoded)
	}
	if back, err := m.parseGuardCached(encoded, "guard"); err != nil || back != second {
		t.Fatalf("reading back what it encoded: %+v, %v", back, err)
	}
	for name, bad := range map[string]guardRecord{
		"empty generation":           func() guardRecord { g := good; g.Generation = ""; return g }(),
		"bad time":                   func() guardRecord { g := good; g.CreatedAt = "yesterday"; return g }(),
		"invalid UTF-8":              func() guardRecord { g := good; g.Generation = "\xff"; return g }(),
		"relative exe, new identity": func() guardRecord { g := good; g.Identity.Executable = "bin/x"; return g }(),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: encoded without a panic", name)
				}
			}()
			m.encodeGuard(bad)
		}()
	}
}

// TestManagerEncodeOwnerIsReadBack: what the Manager encodes, its cache
// reads back as the owner it encoded.
func TestManagerEncodeOwnerIsReadBack(t *testing.T) {
	m := &Manager{}
	owner := Owner{Schema: OwnerSchema, Generation: "g", SessionID: "s", SessionFile: "/f", PID: 1,
		ProcessStartIdentity: "1", Executable: "/bin/x", Hostname: "h", RootID: "r",
		CreatedAt: "2026-11-30T05:50:13.123Z", Epoch: 3, UID: 0}
	data := m.encodeOwner(owner)
	if string(data) != string(encodeOwner(owner)) {
		t.Fatalf("bytes differ: %q", data)
	}
	if back, err := m.parseOwnerCached(data); err != nil || back != owner {
		t.Fatalf("read back %+v, %v", back, err)
	}
}

// TestNamespacePathsAreJoins: the concatenated paths are path.Join's.
func TestNamespacePathsAreJoins(t *testing.T) {
	for _, namespace := range []string{"/a", "/state/lease", "/x/y.z/ns-1"} {
		got := newNamespacePaths(namespace)
		want := namespacePaths{
			receiver: path.Join(namespace, receiverName), owner: path.Join(namespace, receiverName, ownerName),
			guard: path.Join(namespace, guardName), epoch: path.Join(namespace, epochName),
			epochIssued: path.Join(namespace, epochIssuedName),
			reclaims:    path.Join(namespace, reclaimsName), quarantine: path.Join(namespace, quarantineName),
		}
		if got != want {
			t.Fatalf("%s: %+v, want %+v", namespace, got, want)
		}
		if allocs := testing.AllocsPerRun(10, func() { newNamespacePaths(namespace) }); allocs != 1 {
			t.Fatalf("%s: %v allocations, want 1", namespace, allocs)
		}
	}
}
