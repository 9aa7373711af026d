package models

// DirClaimSwap is the environment event "a hostile co-tenant renamed a copy
// of another live claim's file over the claim file of Path": the file holds
// a valid claim, but another one's (its ID, path, owner and revision), so it
// is not a claim at its own name. The dirlease workload records it too when the
// co-tenant puts a symlink at the claim file's name (to the moved claim, or
// dangling): no read may follow it, so the name holds no claim either.
// Until the operator puts the owner's bytes back (DirClaimReturn):
//   - no handle matches the claim (the bytes are not the ones it wrote), so
//     the owner's compare-and-swap must lose;
//   - a recovery pass that read the claim file while it held the foreign
//     bytes (DirRecoverResult.ReadSwapped) must fail closed: a pass that
//     succeeds either trusted the record's own ID over its file name or
//     acted on another claim's directory through this name;
//   - a pass that read it before the swap or after the return may succeed,
//     but leaves the swapped claim alone at its instant.
//
// The claim's contents stay as they were: they are what the owner wrote
// last, which the operator restores.
type DirClaimSwap struct{ Path string }

// DirClaimReturn is the environment event "the operator renamed the
// owner's last-written bytes (or the claim a symlink replaced) back over the
// claim file of Path", which undoes a DirClaimSwap: the owner's handle
// matches again.
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
