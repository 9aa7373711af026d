package admission

import "github.com/leasekit/leasekit/internal/statefile"

// The claim cache remembers admission records that parsed, by their bytes.
// Parsing is a pure function of them (the path only words a refusal, and
// refusals are never remembered), so a hit returns exactly what parsing
// would. Every Acquire and every look of the simulator's controller parses
// the same record again, most times unchanged since the last parse: that
// parsing (a strict decode, owner checks, and a canonical re-encoding to
// compare) was 4% of an admission run.
var claimCache statefile.ParseCache[Claim]

// cachedParse is the claim content parsed to, when it is remembered.
func cachedParse(content []byte) (Claim, bool) {
	hit, ok := claimCache.Lookup(content)
	if !ok {
		return Claim{}, false
	}
	return hit.clone(), true
}

// rememberClaim records that content parsed to claim.
func rememberClaim(content []byte, claim Claim) {
	claimCache.Remember(content, claim.clone())
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
