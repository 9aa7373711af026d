package models

import (
	"sort"
)

// The directory lease model's state: claims, their directory contents and
// what a recovery may do to each (see dirlease.go for the model).

type dirAt uint8

const (
	dirPresent dirAt = iota
	dirForeign
	dirAbsent
	dirPublished
)

// childLife is the ground truth about a recorded child process.
type childLife uint8

const (
	childNone childLife = iota
	childAlive
	childDead
	// childMaybeAlive: the child died while the update recording it ran,
	// before or after the update took effect; a later ProcessDeath cannot
	// come, so "maybe" stays until a reboot of its host.
	childMaybeAlive
)

// dirContent is what a claim file may hold beyond its fixed fields.
type dirContent struct {
	phase     DirPhase
	childProc int
	childHost string
	child     childLife
}

// recoverable reports whether a pass at nowMs may remove a claim of role
// holding c whose owner is dead (the original's rules on ground truth).
func (c dirContent) recoverable(role DirRole, recoverAfterMs, nowMs int64) bool {
	if role == RoleBundleStage {
		return true
	}
	switch c.phase {
	case DirPreparing, DirSettled:
		return true
	case DirRunning:
		return c.child != childAlive
	case DirLaunching:
		return nowMs >= recoverAfterMs
	}
	return false
}

// dirClaim is one claim of the state.
type dirClaim struct {
	path           string
	claimID        string // "" = unknown (created by an operation of unknown outcome)
	role           DirRole
	ownerProc      int
	ownerHost      string
	ownerAlive     bool
	recoverAfterMs int64
	dir            dirAt
	// maybeGone: the claim file (and, if a recovery removed it, the
	// directory) may already be gone. Set by operations of unknown outcome
	// and by recoveries whose counts do not say which claims they took.
	maybeGone bool
	// restored: a co-tenant wrote an earlier version back (DirRestore), so
	// no handle's view matches the file any more (revisions never repeat).
	restored bool
	// swappedIn: the claim file holds another live claim's bytes
	// (DirClaimSwap) until the operator returns the owner's (DirClaimReturn).
	swappedIn bool
	// contents: what the claim file may hold, sorted, never empty; more
	// than one after an update of unknown outcome.
	contents []dirContent
}

// dirWorld is one state of the model, decoded: the claims, sorted by path,
// and the phantoms. The model is deterministic: each uncertainty is kept
// inside the state (maybeGone, several contents, a child maybe alive,
// phantoms) instead of forking states, whose number would multiply with
// every crash. Step functions treat a dirWorld as a value: every change
// copies first.
//
// A phantom is a claim that may be gone, whose owner is dead and which has
// no child that may be alive: nothing but a recovery pass can still act on
// it. The model stops tracking its path and keeps only how many there may
// be; a later pass may count each phantom as recovered, as published, or
// not at all. Without that, such claims would pile up and slow every step
// (a 1000-operation history took 130 ms to check). Lost with the path:
// Use of it is untracked, so a pass that wrongly removes a directory
// swapped onto a phantom's path is not seen; and a phantom may be counted
// before its recoverAfterMs.
type dirWorld struct {
	claims   []dirClaim
	phantoms int
}

// dirState is the porcupine state: a dirWorld encoded into a string, so it
// is a comparable value of any size.
type dirState struct {
	encoded string
}

func (s dirWorld) clone() dirWorld {
	s.claims = append([]dirClaim(nil), s.claims...)
	return s
}

func (s dirWorld) find(path string) int {
	for i := range s.claims {
		if s.claims[i].path == path {
			return i
		}
	}
	return -1
}

func (s dirWorld) with(c dirClaim) dirWorld {
	at := sort.Search(len(s.claims), func(i int) bool { return s.claims[i].path >= c.path })
	claims := make([]dirClaim, 0, len(s.claims)+1)
	s.claims = append(append(append(claims, s.claims[:at]...), c), s.claims[at:]...)
	return s
}

func (s dirWorld) without(i int) dirWorld {
	claims := make([]dirClaim, 0, len(s.claims)-1)
	s.claims = append(append(claims, s.claims[:i]...), s.claims[i+1:]...)
	return s
}

// replaced returns s with claim i replaced by c.
func (s dirWorld) replaced(i int, c dirClaim) dirWorld {
	s = s.clone()
	s.claims[i] = c
	return s
}

// recoverable reports whether a pass at nowMs may remove c.
func (c dirClaim) recoverable(nowMs int64) bool {
	if c.ownerAlive {
		return false
	}
	for _, content := range c.contents {
		if content.recoverable(c.role, c.recoverAfterMs, nowMs) {
			return true
		}
	}
	return false
}

// withContents returns c holding contents, sorted and without duplicates.
func (c dirClaim) withContents(contents []dirContent) dirClaim {
	sorted := append([]dirContent(nil), contents...)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.phase != b.phase {
			return a.phase < b.phase
		}
		if a.childProc != b.childProc {
			return a.childProc < b.childProc
		}
		return a.child < b.child
	})
	c.contents = sorted[:0]
	for i, content := range sorted {
		if i == 0 || content != sorted[i-1] {
			c.contents = append(c.contents, content)
		}
	}
	if len(c.contents) == 0 {
		panic("models: a directory claim with no possible contents")
	}
	return c
}

// matching splits c's contents by whether they equal the caller's view.
func (c dirClaim) matching(phase DirPhase, child int) (matched, others []dirContent) {
	if c.restored || c.swappedIn {
		return nil, c.contents
	}
	for _, content := range c.contents {
		if content.phase == phase && content.childProc == child {
			matched = append(matched, content)
		} else {
			others = append(others, content)
		}
	}
	return matched, others
}
