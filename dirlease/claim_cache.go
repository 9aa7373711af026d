package dirlease

import "github.com/leasekit/leasekit/internal/statefile"

// The claim cache remembers claims that parsed, by their bytes and file
// name. Parsing is a pure function of the two (the file path only words a
// refusal, and refusals are never remembered), so a hit returns exactly
// what parsing would. Create's look after its write (checkAlone) parses
// every claim of the collection, most of them unchanged since the last
// look, and every recovery pass parses them all again: in the simulator's
// crash pile-ups that parsing was a quarter of a run. Entries are keyed by
// the bytes and hold the name, which a hit must match.
var claimCache statefile.ParseCache[namedClaim]

type namedClaim struct {
	name  string
	claim Claim
}

// cachedParse is the claim content parsed to, when it is remembered under
// name.
func cachedParse(content []byte, name string) (Claim, bool) {
	hit, ok := claimCache.Lookup(content)
	if !ok || hit.name != name {
		return Claim{}, false
	}
	return hit.claim.clone(), true
}

// rememberClaim records that content, named name, parsed to claim.
func rememberClaim(content []byte, name string, claim Claim) {
	claimCache.Remember(content, namedClaim{name: name, claim: claim.clone()})
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
