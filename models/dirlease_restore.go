package models

// DirRestore is the environment event "a hostile co-tenant wrote an earlier
// version of the claim on Path back over its file" (an ABA: the bytes are
// those of an older revision, valid and of the same owner). The claim then
// holds that version's phase and child, and the owner's handle no longer
// matches it even when the phase and child are the same: every write
// rotates a revision, so the owner's next compare-and-swap must be refused.
type DirRestore struct {
	Path      string
	Phase     DirPhase
	ChildProc int
	ChildHost string
	// ChildAlive is the ground truth about ChildProc at the restore.
	ChildAlive bool
}

// restored applies a DirRestore: the claim's file holds exactly the
// restored contents, and exists.
func (s dirWorld) restored(in DirRestore) dirWorld {
	i := s.find(in.Path)
	if i < 0 {
		return s
	}
	content := dirContent{phase: in.Phase, childProc: in.ChildProc, childHost: in.ChildHost}
	if in.ChildProc != 0 {
		content.child = childDead
		if in.ChildAlive {
			content.child = childAlive
		}
	}
	c := s.claims[i]
	c.maybeGone, c.restored = false, true
	return s.replaced(i, c.withContents([]dirContent{content}))
}
