package models

import (
	"fmt"
)

// The directory lease model's steps: one function per operation and
// environment event.

// dirStep is the deterministic step: ok=false if no state explains the
// output.
func dirStep(state, input, output any) (bool, any) {
	next, ok := dirStepWorld(decodeDirState(state.(dirState)), input, output)
	if !ok {
		return false, state
	}
	return true, encodeDirWorld(next.normalized())
}

// normalized turns every claim that only a recovery pass can still act on,
// and that may already be gone, into a phantom.
func (s dirWorld) normalized() dirWorld {
	for i := 0; i < len(s.claims); {
		if !s.claims[i].phantomable() {
			i++
			continue
		}
		s = s.without(i)
		s.phantoms++
	}
	return s
}

func (c dirClaim) phantomable() bool {
	if !c.maybeGone || c.ownerAlive || c.swappedIn {
		return false
	}
	for _, content := range c.contents {
		if content.child == childAlive || content.child == childMaybeAlive {
			return false
		}
	}
	return true
}

func dirStepWorld(s dirWorld, input, output any) (dirWorld, bool) {
	switch in := input.(type) {
	case DirCreate:
		return dirStepCreate(s, in, output)
	case DirUpdate:
		return dirStepUpdate(s, in, output)
	case DirRelease:
		return dirStepRelease(s, in, output)
	case DirRecover:
		return dirStepRecover(s, in, output)
	case DirUse:
		return dirStepUse(s, in, output)
	case ProcessDeath:
		return s.killed(func(proc int, _ string) bool { return proc == in.Proc }), true
	case Reboot:
		return s.killed(func(_ int, host string) bool { return host == in.Host }), true
	case PIDReuse:
		return s, true
	case DirSwap:
		return s.moveDir(in.Path, dirForeign), true
	case DirPublish:
		return s.moveDir(in.Path, dirPublished), true
	case DirRemove:
		return s.moveDir(in.Path, dirAbsent), true
	case DirRestore:
		return s.restored(in), true
	case DirClaimSwap:
		return s.claimSwapped(in.Path, true), true
	case DirClaimReturn:
		return s.claimSwapped(in.Path, false), true
	}
	panic(fmt.Sprintf("models: dirlease model got input %T", input))
}

// killed marks dead every owner and child that dies.
func (s dirWorld) killed(dies func(proc int, host string) bool) dirWorld {
	s = s.clone()
	for i := range s.claims {
		c := s.claims[i]
		c.ownerAlive = c.ownerAlive && !dies(c.ownerProc, c.ownerHost)
		contents := append([]dirContent(nil), c.contents...)
		for j := range contents {
			if contents[j].childProc != 0 && dies(contents[j].childProc, contents[j].childHost) {
				contents[j].child = childDead
			}
		}
		s.claims[i] = c.withContents(contents)
	}
	return s
}

func (s dirWorld) moveDir(path string, to dirAt) dirWorld {
	if i := s.find(path); i >= 0 {
		c := s.claims[i]
		c.dir = to
		return s.replaced(i, c)
	}
	return s
}

func dirStepCreate(s dirWorld, in DirCreate, output any) (dirWorld, bool) {
	if s.find(in.Path) >= 0 {
		return s, false // ValidateDirLeaseHistory rules out a second claim on a path
	}
	claim := dirClaim{
		path: in.Path, role: in.Role, ownerProc: in.Proc, ownerHost: in.Host,
		ownerAlive: true, recoverAfterMs: in.RecoverAfterMs, dir: dirPresent,
		contents: []dirContent{{phase: DirPreparing}},
	}
	out, known := output.(DirCreateResult)
	if !known {
		mustUnknown(output)
		claim.maybeGone = true // may never have been written
		return s.with(claim), true
	}
	if out.ClaimID == "" {
		return s, false
	}
	claim.claimID = out.ClaimID
	return s.with(claim), true
}

// handle finds the claim a caller's handle names (same path, claim ID and
// owner), or -1.
func (s dirWorld) handle(path, claimID string, proc int) int {
	i := s.find(path)
	if i < 0 || s.claims[i].claimID == "" || s.claims[i].claimID != claimID || s.claims[i].ownerProc != proc {
		return -1
	}
	return i
}

// refused applies a compare-and-swap refused as "changed" to claim i: the
// file does not hold the caller's view, so only the other contents remain,
// or, if none, the claim must be gone.
func (s dirWorld) refused(i int, others []dirContent) (dirWorld, bool) {
	c := s.claims[i]
	switch {
	case len(others) > 0:
		return s.replaced(i, c.withContents(others)), true
	case c.maybeGone:
		return s.without(i), true
	}
	return s, false
}

func dirStepUpdate(s dirWorld, in DirUpdate, output any) (dirWorld, bool) {
	valid := DirTransitionValid(in.Role, in.FromPhase, in.ToPhase, in.Child != 0)
	i := s.handle(in.Path, in.ClaimID, in.Proc)
	var matched, others []dirContent
	if i >= 0 {
		matched, others = s.claims[i].matching(in.FromPhase, in.FromChild)
	}
	next := dirContent{phase: in.ToPhase, childProc: in.Child, childHost: in.ChildHost}
	if in.Child != 0 {
		next.child = [...]childLife{childAliveAtReturn: childAlive, childDeadBeforeCall: childDead, childDiedDuring: childMaybeAlive}[in.childFate]
	}
	out, known := output.(DirUpdateResult)
	if !known {
		mustUnknown(output)
		if valid && len(matched) > 0 {
			c := s.claims[i]
			return s.replaced(i, c.withContents(append(append([]dirContent(nil), c.contents...), next))), true
		}
		return s, true
	}
	switch out.Kind {
	case CASInvalid:
		return s, !valid
	case CASOK:
		if !valid || len(matched) == 0 {
			return s, false
		}
		c := s.claims[i]
		c.maybeGone = false // the swap proves the file exists
		return s.replaced(i, c.withContents([]dirContent{next})), true
	case CASChanged:
		if !valid {
			return s, false
		}
		if i < 0 {
			return s, true
		}
		return s.refused(i, others)
	}
	return s, false
}

func dirStepRelease(s dirWorld, in DirRelease, output any) (dirWorld, bool) {
	i := s.handle(in.Path, in.ClaimID, in.Proc)
	var matched, others []dirContent
	if i >= 0 {
		matched, others = s.claims[i].matching(in.Phase, in.Child)
	}
	out, known := output.(DirReleaseResult)
	if !known {
		mustUnknown(output)
		if len(matched) > 0 {
			c := s.claims[i]
			c.maybeGone = true
			return s.replaced(i, c), true
		}
		return s, true
	}
	switch out.Kind {
	case CASOK:
		if len(matched) > 0 {
			return s.without(i), true
		}
	case CASChanged:
		if i < 0 {
			return s, true
		}
		return s.refused(i, others)
	}
	return s, false
}

func dirStepUse(s dirWorld, in DirUse, output any) (dirWorld, bool) {
	out, known := output.(DirUseResult)
	if !known {
		mustUnknown(output)
		return s, true
	}
	i := s.find(in.Path)
	if i < 0 {
		return s, true // untracked path: anything may be there
	}
	c := s.claims[i]
	want := UseMissing
	switch c.dir {
	case dirPresent:
		want = UsePresent
	case dirForeign:
		want = UseForeign
	}
	// A claim that may be gone may have taken its directory with it.
	return s, out.Kind == want || (c.maybeGone && out.Kind == UseMissing)
}
