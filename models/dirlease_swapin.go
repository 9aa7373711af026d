package models

// DirClaimSwap is the environment event "a hostile co-tenant renamed a copy
// of another live claim's file over the claim file of Path": the file holds
// a valid claim, but another one's (its ID, path, owner and revision), so it
// is not a claim at its own name. Until the operator puts the owner's bytes
// back (DirClaimReturn):
//   - no handle matches the claim (the bytes are not the ones it wrote), so
//     the owner's compare-and-swap must lose;
//   - a recovery pass that read the claim directory while it held the
//     foreign bytes must fail closed: a pass that succeeds is not
//     linearizable, since it either trusted the record's own ID over its
//     file name or acted on another claim's directory through this name.
//
// The claim's contents stay as they were: they are what the owner wrote
// last, which the operator restores.
type DirClaimSwap struct{ Path string }

// DirClaimReturn is the environment event "the operator renamed the
// owner's last-written bytes back over the claim file of Path", which
// undoes a DirClaimSwap: the owner's handle matches again.
type DirClaimReturn struct{ Path string }

// claimSwapped applies a DirClaimSwap or a DirClaimReturn.
func (s dirWorld) claimSwapped(path string, swapped bool) dirWorld {
	i := s.find(path)
	if i < 0 {
		return s
	}
	c := s.claims[i]
	c.swappedIn = swapped
	return s.replaced(i, c)
}

// anySwappedIn reports whether some claim file holds another claim's bytes.
func (s dirWorld) anySwappedIn() bool {
	for _, c := range s.claims {
		if c.swappedIn {
			return true
		}
	}
	return false
}
