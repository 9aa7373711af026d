package admission

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
)

// The claim cache remembers admission records that parsed, by their bytes.
// Parsing is a pure function of them (the path only words a refusal, and
// refusals are never remembered), so a hit returns exactly what parsing
// would. Every Acquire and every look of the simulator's controller parses
// the same record again, most times unchanged since the last parse: that
// parsing (a JSON decode, owner checks, and a canonical re-encoding to
// compare) was 4% of an admission run.
//
// The cache is direct-mapped, as dirlease's: a record's bytes pick one of
// claimCacheSlots slots, and a new record replaces what was there. Each
// slot is an atomic pointer to an immutable entry, so concurrent callers
// (several goroutines, or the simulator's parallel workers) share it safely.
var claimCache [claimCacheSlots]atomic.Pointer[cachedClaim]

const claimCacheBits = 8

const claimCacheSlots = 1 << claimCacheBits

type cachedClaim struct {
	content []byte // a private copy: the caller's buffer may be reused
	claim   Claim
}

// cachedParse is the claim content parsed to, when it is remembered.
func cachedParse(content []byte) (Claim, bool) {
	hit := claimCache[claimSlot(content)].Load()
	if hit == nil || !bytes.Equal(hit.content, content) {
		return Claim{}, false
	}
	return hit.claim.clone(), true
}

// rememberClaim records that content parsed to claim.
func rememberClaim(content []byte, claim Claim) {
	claimCache[claimSlot(content)].Store(&cachedClaim{content: bytes.Clone(content), claim: claim.clone()})
}

// claimSlot picks content's slot, folding eight bytes per multiply. The
// slot only decides what is remembered, never what a parse returns.
func claimSlot(content []byte) uint32 {
	const multiplier = 0x9e3779b97f4a7c15
	hash := uint64(len(content)) * multiplier
	for ; len(content) >= 8; content = content[8:] {
		hash = (hash ^ binary.LittleEndian.Uint64(content)) * multiplier
	}
	for _, b := range content {
		hash = (hash ^ uint64(b)) * multiplier
	}
	return uint32(hash >> (64 - claimCacheBits)) // the top bits mix every input bit
}

// clone is the claim with its own copy of HelperOwner, so that neither the
// cache nor a caller sees the other's changes.
func (c Claim) clone() Claim {
	if c.HelperOwner != nil {
		helper := *c.HelperOwner
		c.HelperOwner = &helper
	}
	return c
}
