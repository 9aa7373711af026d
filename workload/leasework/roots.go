package leasework

// Several roots in one namespace. Managers with different
// RootIDs share a lease namespace: a run draws one, two or three roots
// (swarm style), and every worker and impostor serves one of them. A
// generation is a capability only within its owner's root: an impostor of
// another root that learned it through Inspect must get NotOwner from
// Release, and a worker that presents its own lease through a Manager of
// another root (the same process, two Managers) must be fenced by
// WithCurrentLease and refused by Release. The calls carry their root into
// the history (models.LeaseAcquire, LeaseRelease, LeaseWithCurrent .Root),
// where the model judges them; the fenced-exclusive ground truth checks that
// a process entered fn through a Manager of the root its acquire used.

import (
	"fmt"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// leaseRoots is the run's roots and who serves which.
type leaseRoots struct {
	names []string
	// byName maps a process name to its root: a restart keeps its root.
	byName map[string]string
	// byManager maps every Manager the workload made to its root.
	byManager map[*lease.Manager]string
	// byGeneration maps an acquired generation to the root it was granted to.
	byGeneration map[string]string
}

// drawRoots draws how many roots share each namespace: opts.Roots, or one
// to three per run when it is zero.
func (lw *leaseWorld) drawRoots() {
	n := lw.opts.Roots
	if n == 0 {
		n = 1 + lw.world.Decisions().Intn(3)
	}
	lw.roots = leaseRoots{byName: make(map[string]string), byManager: make(map[*lease.Manager]string),
		byGeneration: make(map[string]string)}
	for i := 0; i < n; i++ {
		name := leaseRootID
		if i > 0 {
			name = fmt.Sprintf("%s-%c", leaseRootID, 'a'+i)
		}
		lw.roots.names = append(lw.roots.names, name)
	}
	if n > 1 {
		lw.world.Probe("lease-roots-shared-namespace")
	}
}

// rootFor returns the root a process named name serves, assigning the next
// one round-robin on first use (restarts keep theirs).
func (lw *leaseWorld) rootFor(name string) string {
	if root, ok := lw.roots.byName[name]; ok {
		return root
	}
	root := lw.roots.names[len(lw.roots.byName)%len(lw.roots.names)]
	lw.roots.byName[name] = root
	return root
}

// rootOf returns the root of a Manager the workload made.
func (lw *leaseWorld) rootOf(m *lease.Manager) string {
	root, ok := lw.roots.byManager[m]
	if !ok {
		panic("leasework: a Manager the workload did not make")
	}
	return root
}

// foreignManager returns a Manager of p for another root than p's own, or
// nil when the run has one root.
func (lw *leaseWorld) foreignManager(p *sim.Proc) *lease.Manager {
	if len(lw.roots.names) < 2 {
		return nil
	}
	own := lw.rootFor(p.Name())
	var others []string
	for _, root := range lw.roots.names {
		if root != own {
			others = append(others, root)
		}
	}
	return lw.managerRoot(p, p.Inspector(), others[lw.world.Decisions().Intn(len(others))])
}

// crossRoot presents p's own lease through a Manager of another root: the
// fence and the release must both refuse it (the lease stays p's).
func (lw *leaseWorld) crossRoot(p *sim.Proc, h held) {
	m := lw.foreignManager(p)
	if m == nil {
		return
	}
	if lw.world.Decisions().Intn(2) == 0 {
		lw.withCurrent(p, m, h)
		return
	}
	lw.release(p, m, h)
}

// noteRootCall fires the roots probes of a Release or WithCurrentLease that
// presented generation through m: kind is the outcome's probe suffix.
func (lw *leaseWorld) noteRootCall(m *lease.Manager, generation, call, kind string) {
	granted, known := lw.roots.byGeneration[generation]
	if !known || granted == lw.rootOf(m) {
		return
	}
	lw.world.Probe("lease-foreign-root-" + call + "-" + kind)
}

// checkEnterRoot is the fenced-exclusive rule's root half: p entered fn
// through m with a generation granted to another root.
func (lw *leaseWorld) checkEnterRoot(p *sim.Proc, m *lease.Manager, generation string) {
	if granted, known := lw.roots.byGeneration[generation]; known && granted != lw.rootOf(m) {
		lw.fail(fmt.Errorf("%s entered WithCurrentLease through a Manager of root %q with generation %s granted to root %q",
			p.Name(), lw.rootOf(m), generation, granted), false)
	}
}
