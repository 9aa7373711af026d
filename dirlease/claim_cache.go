package dirlease

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
)

// The claim cache remembers claims that parsed, by their bytes and file
// name. Parsing is a pure function of the two (the file path only words a
// refusal, and refusals are never remembered), so a hit returns exactly
// what parsing would. Create's look after its write (checkAlone) parses
// every claim of the collection, most of them unchanged since the last
// look, and every recovery pass parses them all again: in the simulator's
// crash pile-ups that parsing was a quarter of a run.
//
// The cache is direct-mapped: a claim's bytes pick one of claimCacheSlots
// slots (see claimSlot), and a new claim replaces what was there. Each slot is an
// atomic pointer to an immutable entry, so concurrent callers (several
// goroutines, or the simulator's parallel workers) share it safely.
var claimCache [claimCacheSlots]atomic.Pointer[cachedClaim]

const claimCacheBits = 10

const claimCacheSlots = 1 << claimCacheBits

type cachedClaim struct {
	content []byte // a private copy: the caller's buffer may be reused
	name    string
	claim   Claim
}

// cachedParse is the claim content parsed to, when it is remembered under
// name.
func cachedParse(content []byte, name string) (Claim, bool) {
	hit := claimCache[claimSlot(content)].Load()
	if hit == nil || hit.name != name || !bytes.Equal(hit.content, content) {
		return Claim{}, false
	}
	return hit.claim.clone(), true
}

// rememberClaim records that content, named name, parsed to claim.
func rememberClaim(content []byte, name string, claim Claim) {
	claimCache[claimSlot(content)].Store(&cachedClaim{content: bytes.Clone(content), name: name, claim: claim.clone()})
}

// claimSlot picks content's slot. It folds eight bytes per multiply, not
// one as FNV-1a did: every Parse hashes its whole claim (hundreds of
// bytes), and the byte loop was most of a cache hit's cost. The slot only
// decides what is remembered, never what a parse returns.
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

// clone is the claim with its own copy of ChildOwner, so that neither the
// cache nor a caller sees the other's changes.
func (c Claim) clone() Claim {
	if c.ChildOwner != nil {
		child := *c.ChildOwner
		c.ChildOwner = &child
	}
	return c
}
