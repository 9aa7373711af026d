package lease

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
)

// sharedCache remembers records that parsed, by their bytes, across every
// Manager of the process. A Manager's own cache keeps only the last guard
// and owner it parsed; but a record is mostly read by Managers other than
// its writer's (every waiting acquire, every inspection, each with its own
// Manager), and each parsed it afresh. Parsing is a pure function of the
// bytes and T holds only values (no pointers or slices), so a hit returns
// exactly what parsing would. Only records that parsed are remembered.
//
// It is direct-mapped: a record's bytes pick one of sharedCacheSlots slots,
// and a new record replaces what was there. Each slot is an atomic pointer
// to an immutable entry, so concurrent Managers share it safely.
type sharedCache[T any] struct {
	slots [sharedCacheSlots]atomic.Pointer[sharedEntry[T]]
}

const sharedCacheBits = 8

const sharedCacheSlots = 1 << sharedCacheBits

type sharedEntry[T any] struct {
	data  []byte // a private copy: the caller's buffer may be reused
	value T
}

// The shared caches of the records read most: guards, owners and the
// receiver epoch counters.
var (
	sharedGuards sharedCache[guardRecord]
	sharedOwners sharedCache[Owner]
	sharedEpochs sharedCache[uint64]
)

// lookup is what data parsed to, when it is remembered.
func (c *sharedCache[T]) lookup(data []byte) (T, bool) {
	if hit := c.slots[sharedSlot(data)].Load(); hit != nil && bytes.Equal(hit.data, data) {
		return hit.value, true
	}
	var zero T
	return zero, false
}

// remember records that data parsed to value.
func (c *sharedCache[T]) remember(data []byte, value T) {
	c.slots[sharedSlot(data)].Store(&sharedEntry[T]{data: bytes.Clone(data), value: value})
}

// sharedSlot picks data's slot, folding eight bytes per multiply. The slot
// only decides what is remembered, never what a parse returns.
func sharedSlot(data []byte) uint32 {
	const multiplier = 0x9e3779b97f4a7c15
	hash := uint64(len(data)) * multiplier
	for ; len(data) >= 8; data = data[8:] {
		hash = (hash ^ binary.LittleEndian.Uint64(data)) * multiplier
	}
	for _, b := range data {
		hash = (hash ^ uint64(b)) * multiplier
	}
	return uint32(hash >> (64 - sharedCacheBits)) // the top bits mix every input bit
}

// parseEpochCached is parseEpoch, answered from the shared cache when data
// parsed before.
func parseEpochCached(data []byte) (uint64, error) {
	if epoch, ok := sharedEpochs.lookup(data); ok {
		return epoch, nil
	}
	epoch, err := parseEpoch(data)
	if err == nil {
		sharedEpochs.remember(data, epoch)
	}
	return epoch, err
}
