package statefile

import (
	"bytes"
	"encoding/binary"
	"math/bits"
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
// byte loop was most of a hit's cost) in four independent lanes, which the
// processor multiplies side by side: twice as fast as one chain on a
// record of a few hundred bytes. The slot only decides what is remembered,
// never what a lookup returns.
func parseSlot(data []byte) uint32 {
	const multiplier = 0x9e3779b97f4a7c15
	h0 := uint64(len(data)) * multiplier
	h1, h2, h3 := h0+1, h0+2, h0+3
	for ; len(data) >= 32; data = data[32:] {
		h0 = (h0 ^ binary.LittleEndian.Uint64(data)) * multiplier
		h1 = (h1 ^ binary.LittleEndian.Uint64(data[8:])) * multiplier
		h2 = (h2 ^ binary.LittleEndian.Uint64(data[16:])) * multiplier
		h3 = (h3 ^ binary.LittleEndian.Uint64(data[24:])) * multiplier
	}
	hash := h0 ^ bits.RotateLeft64(h1, 16) ^ bits.RotateLeft64(h2, 32) ^ bits.RotateLeft64(h3, 48)
	for ; len(data) >= 8; data = data[8:] {
		hash = (hash ^ binary.LittleEndian.Uint64(data)) * multiplier
	}
	for _, b := range data {
		hash = (hash ^ uint64(b)) * multiplier
	}
	hash *= multiplier                           // the lanes' last words reach the top bits too
	return uint32(hash >> (64 - parseCacheBits)) // the top bits mix every input bit
}
