package lease

import (
	"bytes"
	"sync/atomic"
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
// last guard this Manager parsed.
func (m *Manager) parseGuardCached(data []byte, record string) (guardRecord, error) {
	if hit := m.cache.guard.Load(); hit != nil && bytes.Equal(hit.data, data) {
		return hit.guard, nil
	}
	g, err := parseGuard(data, record)
	if err == nil {
		m.cache.guard.Store(&cachedGuard{data: bytes.Clone(data), guard: g})
	}
	return g, err
}

// parseOwnerCached is parseOwner, answered from the cache when data is the
// last owner this Manager parsed.
func (m *Manager) parseOwnerCached(data []byte) (Owner, error) {
	if hit := m.cache.owner.Load(); hit != nil && bytes.Equal(hit.data, data) {
		return hit.owner, nil
	}
	owner, err := parseOwner(data)
	if err == nil {
		m.cache.owner.Store(&cachedOwner{data: bytes.Clone(data), owner: owner})
	}
	return owner, err
}
