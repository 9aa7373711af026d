package statecas

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
)

// The claim cache remembers mutation claims that parsed, by their bytes.
// Every snapshot of a directory reads and parses each mutation claim in it
// (sweepMachinery), and a claim lives across many snapshots: in the
// simulator's dirlease runs that parsing was a fifteenth of the
// allocations. parseClaim is a pure function of the bytes and a claim
// holds only values, so a hit returns exactly what parsing would; only
// claims that parsed are remembered.
//
// The cache is direct-mapped: a claim's bytes pick one of claimCacheSlots
// slots, and a new claim replaces what was there. Each slot is an atomic
// pointer to an immutable entry, so concurrent callers share it safely.
var claimCache [claimCacheSlots]atomic.Pointer[cachedClaim]

const claimCacheBits = 8

const claimCacheSlots = 1 << claimCacheBits

type cachedClaim struct {
	data  []byte // a private copy: the caller's buffer may be reused
	claim claim
}

// parseClaimCached is parseClaim, from the cache when data parsed before.
func parseClaimCached(data []byte) (claim, error) {
	slot := &claimCache[claimSlot(data)]
	if hit := slot.Load(); hit != nil && bytes.Equal(hit.data, data) {
		return hit.claim, nil
	}
	parsed, err := parseClaim(data)
	if err == nil {
		slot.Store(&cachedClaim{data: bytes.Clone(data), claim: parsed})
	}
	return parsed, err
}

// claimSlot picks data's slot, folding eight bytes per multiply; it only
// decides what is remembered, never what a parse returns.
func claimSlot(data []byte) uint32 {
	const multiplier = 0x9e3779b97f4a7c15
	hash := uint64(len(data)) * multiplier
	for ; len(data) >= 8; data = data[8:] {
		hash = (hash ^ binary.LittleEndian.Uint64(data)) * multiplier
	}
	for _, b := range data {
		hash = (hash ^ uint64(b)) * multiplier
	}
	return uint32(hash >> (64 - claimCacheBits)) // the top bits mix every input bit
}
