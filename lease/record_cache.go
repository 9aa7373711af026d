package lease

import (
	"bytes"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// recordCache remembers, per Manager, the last guard and the last owner it
// parsed, by their bytes. A call re-reads the same records many times (a
// held guard is polled while waiting, the owner is read by every projection),
// and parsing is a pure function of the bytes, so a hit returns exactly what
// parsing would. Only records that parsed are remembered; refusals are
// always parsed again and worded from scratch. The pointers are atomic
// because one Manager may serve several goroutines.
type recordCache struct {
	guard atomic.Pointer[cachedGuard]
	owner atomic.Pointer[cachedOwner]
	// verifiedGuard is the schema and identity of the last guard whose
	// bytes encodeGuard round-tripped in full (see Manager.encodeGuard).
	verifiedGuard atomic.Pointer[guardIdentity]
}

type guardIdentity struct {
	schema   int
	identity ProcessIdentity
}

type cachedGuard struct {
	data  []byte // a private copy: the caller's buffer may be reused
	guard guardRecord
}

type cachedOwner struct {
	data  []byte
	owner Owner
}

// parseGuardCached is parseGuard, answered from the cache when data is the
// last guard this Manager parsed, or else from the shared cache.
func (m *Manager) parseGuardCached(data []byte, record string) (guardRecord, error) {
	if hit := m.cache.guard.Load(); hit != nil && bytes.Equal(hit.data, data) {
		return hit.guard, nil
	}
	g, shared := sharedGuards.Lookup(data)
	var err error
	if !shared {
		g, err = parseGuard(data, record)
	}
	if err == nil {
		m.cache.guard.Store(&cachedGuard{data: bytes.Clone(data), guard: g})
		if !shared {
			sharedGuards.Remember(data, g)
		}
	}
	return g, err
}

// parseOwnerCached is parseOwner, answered from the cache when data is the
// last owner this Manager parsed, or else from the shared cache.
func (m *Manager) parseOwnerCached(data []byte) (Owner, error) {
	if hit := m.cache.owner.Load(); hit != nil && bytes.Equal(hit.data, data) {
		return hit.owner, nil
	}
	owner, shared := sharedOwners.Lookup(data)
	var err error
	if !shared {
		owner, err = parseOwner(data)
	}
	if err == nil {
		m.cache.owner.Store(&cachedOwner{data: bytes.Clone(data), owner: owner})
		if !shared {
			sharedOwners.Remember(data, owner)
		}
	}
	return owner, err
}

// encodeGuard is the package's encodeGuard, which checks that the bytes
// parse back to g, without repeating that check for what an earlier call
// verified. A Manager writes guards for one process: only the generation
// and the creation time change between them. When the schema and identity
// are those of the last guard verified in full, the other fields are
// checked as parseGuard checks them (guardTextRoundTrips); anything else
// takes the full round trip. TestGuardTextRoundTripsAsParsing holds the
// shortcut to the full check.
//
// The bytes are also remembered as parsing to g: the caller reads its own
// guard back right after publishing it.
func (m *Manager) encodeGuard(g guardRecord) []byte {
	var data []byte
	verified := m.cache.verifiedGuard.Load()
	if verified != nil && verified.schema == g.Schema && verified.identity == g.Identity &&
		guardTextRoundTrips(g.Generation, g.CreatedAt) {
		data = canonicalGuard(g)
	} else {
		data = encodeGuard(g) // panics unless the bytes parse back to g
		m.cache.verifiedGuard.Store(&guardIdentity{schema: g.Schema, identity: g.Identity})
	}
	m.cache.guard.Store(&cachedGuard{data: bytes.Clone(data), guard: g})
	return data
}

// guardTextRoundTrips reports whether parseGuard reads a guard's
// generation and creation time back unchanged: non-empty strings of valid
// UTF-8 (canonical JSON replaces invalid bytes), the time in RFC 3339.
func guardTextRoundTrips(generation, createdAt string) bool {
	if generation == "" || createdAt == "" || !utf8.ValidString(generation) || !utf8.ValidString(createdAt) {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, createdAt)
	return err == nil
}

// encodeOwner is the package's encodeOwner (bytes checked to parse back to
// o), remembering the bytes as the parse of o: every later projection of
// this Manager reads them back.
func (m *Manager) encodeOwner(o Owner) []byte {
	data := encodeOwner(o)
	m.cache.owner.Store(&cachedOwner{data: bytes.Clone(data), owner: o})
	return data
}
