package statefile

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
)

// ParseCache remembers what byte strings parsed to, for a parser that is a
// pure function of the bytes: a hit is exactly what parsing them again
// would return. The engines read the same records over and over (every
// look of Create, Recover, Acquire, every snapshot, every waiting call),
// mostly unchanged since the last read, and parsing them (a strict decode
// and a canonical re-encoding to compare) was a large share of the
// simulator's runs. Callers remember only what parsed, never a refusal
// (whose words may name a path), and T must not share mutable state with
// its callers (copy any pointer both ways).
//
// It is direct-mapped: the bytes pick one of parseCacheSlots slots, and a
// new string replaces what was there. Each slot is an atomic pointer to an
// immutable entry, so concurrent callers (several goroutines, the
// simulator's parallel workers) share one cache safely. The zero value is
// an empty cache.
type ParseCache[T any] struct {
	slots [parseCacheSlots]atomic.Pointer[parsedEntry[T]]
}

const parseCacheBits = 10

const parseCacheSlots = 1 << parseCacheBits

type parsedEntry[T any] struct {
	data  []byte // a private copy: the caller's buffer may be reused
	value T
}

// Lookup returns what data parsed to, when it is remembered.
func (c *ParseCache[T]) Lookup(data []byte) (T, bool) {
	if hit := c.slots[parseSlot(data)].Load(); hit != nil && bytes.Equal(hit.data, data) {
		return hit.value, true
	}
	var zero T
	return zero, false
}

// Remember records that data parsed to value.
func (c *ParseCache[T]) Remember(data []byte, value T) {
	c.slots[parseSlot(data)].Store(&parsedEntry[T]{data: bytes.Clone(data), value: value})
}

// Parse returns what data parses to: the remembered value, or parse's
// answer, remembered when it is not an error. It is the lookup, parse and
// remember that every cache of a plain parse function would write again.
func (c *ParseCache[T]) Parse(data []byte, parse func([]byte) (T, error)) (T, error) {
	if hit, ok := c.Lookup(data); ok {
		return hit, nil
	}
	parsed, err := parse(data)
	if err == nil {
		c.Remember(data, parsed)
	}
	return parsed, err
}

// parseSlot picks data's slot, folding eight bytes per multiply (FNV-1a's
// byte loop was most of a hit's cost). The slot only decides what is
// remembered, never what a lookup returns.
func parseSlot(data []byte) uint32 {
	const multiplier = 0x9e3779b97f4a7c15
	hash := uint64(len(data)) * multiplier
	for ; len(data) >= 8; data = data[8:] {
		hash = (hash ^ binary.LittleEndian.Uint64(data)) * multiplier
	}
	for _, b := range data {
		hash = (hash ^ uint64(b)) * multiplier
	}
	return uint32(hash >> (64 - parseCacheBits)) // the top bits mix every input bit
}
