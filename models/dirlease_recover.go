package models

import ()

// The recovery step: which counts of recovered and published claims a
// pass may report, over every claim and phantom.

// recoveryOption is one thing a pass may have done to one claim.
type recoveryOption struct {
	remove               bool
	recovered, published int
}

// recoveryOptions lists what a pass at nowMs may have done to c. Leaving
// it alone is always possible: the pass may have read the claims before c
// was created, or the inspector may have answered "unknown".
//
// A claim swapped in at the pass's instant (DirClaimSwap) is left alone:
// the pass read it before the swap or after the return (one that read the
// swapped bytes must fail, ReadSwapped), and it could act on it only
// through a compare-and-swap of bytes the file no longer holds.
func recoveryOptions(c dirClaim, nowMs int64) []recoveryOption {
	options := []recoveryOption{{}}
	if c.swappedIn {
		return options
	}
	if c.maybeGone {
		options = append(options, recoveryOption{remove: true}) // it was already gone
	}
	if !c.recoverable(nowMs) {
		return options
	}
	switch c.dir {
	case dirPresent:
		options = append(options, recoveryOption{remove: true, recovered: 1})
	case dirPublished:
		options = append(options, recoveryOption{remove: true, published: 1})
	case dirAbsent:
		// An absent directory is counted when the pass completes an
		// interrupted quarantine, and not counted otherwise.
		options = append(options, recoveryOption{remove: true}, recoveryOption{remove: true, recovered: 1})
	}
	return options
}

// countSums is the set of (recovered, published) totals, up to a target,
// reachable by some choice of options over a run of claims.
type countSums struct {
	recovered, published int // the target, the largest totals kept
	reachable            []bool
}

func newCountSums(recovered, published int) countSums {
	return countSums{recovered, published, make([]bool, (recovered+1)*(published+1))}
}

func (sums countSums) at(r, p int) bool {
	return r >= 0 && p >= 0 && r <= sums.recovered && p <= sums.published && sums.reachable[r*(sums.published+1)+p]
}

func (sums countSums) set(r, p int) {
	if r <= sums.recovered && p <= sums.published {
		sums.reachable[r*(sums.published+1)+p] = true
	}
}

// add marks every total of from plus option.
func (sums countSums) add(from countSums, option recoveryOption) {
	for r := 0; r <= sums.recovered; r++ {
		for p := 0; p <= sums.published; p++ {
			if from.at(r, p) {
				sums.set(r+option.recovered, p+option.published)
			}
		}
	}
}

// dirRecovered returns the state after a pass at nowMs that reported
// (recovered, published), or ok=false if no choice of options explains the
// counts. A claim every explaining choice removes is removed; one that some
// choices remove and others keep becomes maybeGone; the rest are untouched.
// Each phantom may add one to either count, or nothing.
func dirRecovered(s dirWorld, nowMs int64, recovered, published int) (dirWorld, bool) {
	if recovered < 0 || published < 0 {
		return s, false
	}
	options := make([][]recoveryOption, len(s.claims))
	prefix := make([]countSums, len(s.claims)+1)
	suffix := make([]countSums, len(s.claims)+1)
	for i := range prefix {
		prefix[i], suffix[i] = newCountSums(recovered, published), newCountSums(recovered, published)
	}
	prefix[0].set(0, 0)
	for r := 0; r <= s.phantoms; r++ {
		for p := 0; r+p <= s.phantoms; p++ {
			suffix[len(s.claims)].set(r, p)
		}
	}
	for i := 0; i < len(s.claims); i++ {
		options[i] = recoveryOptions(s.claims[i], nowMs)
		for _, option := range options[i] {
			prefix[i+1].add(prefix[i], option)
		}
	}
	for i := len(s.claims) - 1; i >= 0; i-- {
		for _, option := range options[i] {
			suffix[i].add(suffix[i+1], option)
		}
	}
	if !suffix[0].at(recovered, published) {
		return s, false
	}
	next := dirWorld{}
	for i := range s.claims {
		keep, remove := false, false
		for _, option := range options[i] {
			if explains(prefix[i], suffix[i+1], option, recovered, published) {
				keep = keep || !option.remove
				remove = remove || option.remove
			}
		}
		c := s.claims[i]
		switch {
		case keep && remove:
			c.maybeGone = true
			next = next.with(c)
		case keep:
			next = next.with(c)
		}
	}
	// The phantoms left: at most the bound minus the fewest any
	// explanation needs.
	used := recovered + published + 1
	for r := 0; r <= recovered; r++ {
		for p := 0; p <= published; p++ {
			if phantoms := recovered - r + published - p; prefix[len(s.claims)].at(r, p) && phantoms <= s.phantoms {
				used = min(used, phantoms)
			}
		}
	}
	if used > s.phantoms {
		panic("models: recovery counts explained without a phantom split")
	}
	next.phantoms = s.phantoms - used
	return next, true
}

// explains reports whether option for one claim, with some choice before
// it (prefix) and after it (suffix), sums to the reported counts.
func explains(prefix, suffix countSums, option recoveryOption, recovered, published int) bool {
	for r := 0; r <= recovered-option.recovered; r++ {
		for p := 0; p <= published-option.published; p++ {
			if prefix.at(r, p) && suffix.at(recovered-option.recovered-r, published-option.published-p) {
				return true
			}
		}
	}
	return false
}

func dirStepRecover(s dirWorld, in DirRecover, output any) (dirWorld, bool) {
	out, known := output.(DirRecoverResult)
	if !known {
		mustUnknown(output)
	}
	if known && !out.Failed {
		if out.ReadSwapped {
			return s, false // it read a claim file holding another claim: it must fail closed
		}
		return dirRecovered(s, in.NowMs, out.Recovered, out.Published)
	}
	// Failed or cut short: any recoverable claim may be gone, or only its
	// directory (removed before its claim file).
	s = s.clone()
	for i := range s.claims {
		if s.claims[i].recoverable(in.NowMs) && s.claims[i].dir != dirForeign {
			s.claims[i].maybeGone = true
		}
	}
	return s, true
}
