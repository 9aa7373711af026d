package admissionwork

// The mutation-claim ground truth: which process holds the slot's mutation
// claim (statecas's ".active.json.mutation"), so that a refusal because a
// mutation is in progress can be judged. A lifecycle update or Release that
// fails with statecas.ErrMutationActive, or an Acquire that gives up with
// ErrContention, is legal only if some other live process held or created
// the claim during the call (or the world interfered: a hostile corruption,
// repair or claim swap during the call, or a claim the watch lost track of).
// Otherwise the engine took a dead claimant for a live one: the bug an owner
// check by PID alone makes when a PID-reuse impostor (impostors.go) sits on
// a crashed claimant's PID. The history cannot show it (the outcome is
// unknown there), so the watch is the oracle.
//
// What the watch sees: the claim published by a process (its FS's
// RenameNoReplace or Link onto the claim's name), removed (Remove), moved
// aside by an orphan recovery (a rename to *.orphan) or moved back (the
// recoverer found a live claim displaced: the holder is then unknown). A
// power loss kills every process, so whatever claim it leaves is a dead
// one's: the holder is then "none alive".

import (
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/sim"
)

var admissionClaimPath = statecas.ClaimPath(admissionFile)

type claimWatch struct {
	aw *admissionWorld
	// holder is the process whose claim is at the claim's name (nil: none,
	// or a dead process's); unknown says the watch lost track.
	holder  *sim.Proc
	unknown bool
	// aside maps each *.orphan name an orphan recovery renamed a claim to
	// onto that claim's holder (nil: none alive), until the recoverer
	// removes it or puts it back. Keyed by name: removing one recoverer's
	// dead orphan must not forget another's displaced live claim (random
	// seed 9181627: forgotten, a co-tenant planted its symlink in the
	// middle of a live compare-and-swap).
	aside map[string]*sim.Proc
	calls []claimCall
}

// claimCall is a call in flight that may refuse for a mutation in progress.
type claimCall struct {
	proc    *sim.Proc
	sawLive bool
	hostile int
}

func (cw *claimWatch) hostileEvents() int {
	w := cw.aw.world
	return cw.aw.swaps + w.ProbeCount("admission-hostile-corrupt") + w.ProbeCount("admission-operator-repair")
}

func (cw *claimWatch) liveHolder() bool {
	return cw.unknown || (cw.holder != nil && cw.aw.Alive(cw.holder))
}

// begin opens p's call.
func (cw *claimWatch) begin(p *sim.Proc) {
	cw.forget(p)
	cw.calls = append(cw.calls, claimCall{proc: p, sawLive: cw.liveHolder(), hostile: cw.hostileEvents()})
}

// end closes p's call and judges a refusal for a mutation in progress.
func (cw *claimWatch) end(p *sim.Proc, call string, err error) {
	var c claimCall
	found := false
	for _, open := range cw.calls {
		if open.proc == p {
			c, found = open, true
		}
	}
	cw.forget(p)
	busy := errors.Is(err, statecas.ErrMutationActive) || (call == "acquire" && errors.Is(err, admission.ErrContention))
	if !found || !busy {
		return
	}
	if c.sawLive || c.hostile != cw.hostileEvents() {
		cw.aw.world.Probe("admission-mutation-busy-live-claimant")
		return
	}
	cw.aw.fail(fmt.Errorf("%s: %s refused (%v) though no live process held or took the mutation claim during the call",
		p.Name(), call, err), false)
}

func (cw *claimWatch) forget(p *sim.Proc) {
	for i, c := range cw.calls {
		if c.proc == p {
			cw.calls = append(cw.calls[:i], cw.calls[i+1:]...)
			return
		}
	}
}

// sawLive marks every open call but by's: a live claimant acted.
func (cw *claimWatch) sawLive(by *sim.Proc) {
	for i := range cw.calls {
		if cw.calls[i].proc != by {
			cw.calls[i].sawLive = true
		}
	}
}

// observeRename and observeRemove follow the claim through p's FS.
func (cw *claimWatch) observeRename(p *sim.Proc, oldpath, newpath string, err error) {
	switch {
	case err != nil:
	case newpath == admissionClaimPath && isOrphanName(oldpath):
		delete(cw.aside, oldpath)
		cw.holder, cw.unknown = nil, true // a displaced live claim put back
		cw.sawLive(nil)
	case newpath == admissionClaimPath:
		cw.published(p)
	case oldpath == admissionClaimPath:
		if isOrphanName(newpath) {
			if cw.aside == nil {
				cw.aside = map[string]*sim.Proc{}
			}
			cw.aside[newpath] = cw.holder
		}
		cw.holder, cw.unknown = nil, false
	}
}

func (cw *claimWatch) published(p *sim.Proc) {
	cw.holder, cw.unknown = p, false
	cw.sawLive(p)
}

func (cw *claimWatch) observeRemove(name string, err error) {
	if err == nil && name == admissionClaimPath {
		cw.holder, cw.unknown = nil, false
	}
	if err == nil && isOrphanName(name) {
		delete(cw.aside, name)
	}
}

// liveAside reports whether some claim moved aside is a live process's.
func (cw *claimWatch) liveAside() bool {
	for _, holder := range cw.aside {
		if holder != nil && cw.aw.Alive(holder) {
			return true
		}
	}
	return false
}

// powerLoss: every process died; a claim left is a dead one's.
func (cw *claimWatch) powerLoss() { cw.holder, cw.unknown, cw.aside = nil, false, nil }

func isOrphanName(name string) bool {
	return len(name) > len(admissionClaimPath) && name[:len(admissionClaimPath)] == admissionClaimPath &&
		name[len(name)-len(".orphan"):] == ".orphan"
}
