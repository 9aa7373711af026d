package admissionwork

// Hosts and containers. Per seed the volume is
// mounted by host0 and, in half the seeds, by host1 too (workkit.Places),
// and each host has one to three PID namespaces. Controllers are dealt
// round the hosts and namespaces (each namespace's first is its PID 1);
// helpers and descendants run in their controller's place, restarts in the
// dead controller's. An owner of another host or namespace is never judged
// by PID: Acquire must answer indeterminate, and a removal of its record by
// an Acquire is a ground-truth violation (judgeReclaim), whatever the owner's
// fate. In the liveness phase such a record is resolved by the operator
// path: InspectState must call it operator-needed, and Quarantine moves it
// (the AdmissionClear event).

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// quarantinesMax bounds the liveness phase's operator moves.
const quarantinesMax = 4

// placeOf is where p runs.
func placeOf(p *sim.Proc) workkit.Place { return workkit.Place{Host: p.Host(), NS: p.Table().NS} }

// ownerAt reads the owner of the record at path (the slot, or the name an
// Acquire moved it aside to before unlinking it) from outside; ok is false
// for no record, a corrupt one, or an owner from the original
// implementation (read as the caller's own host and namespace by design).
func (aw *admissionWorld) ownerAt(path string) (owner admission.Claim, ok bool) {
	data, err := workkit.ReadRoot(aw.volume.Root(), path)
	if err != nil {
		return admission.Claim{}, false
	}
	claim, err := admission.Parse(data, admissionFile)
	if err != nil || claim.Owner.Legacy {
		return admission.Claim{}, false
	}
	return claim, true
}

// elsewhere reports whether the slot's owner runs in another place than p.
func (aw *admissionWorld) elsewhere(p *sim.Proc) (admission.Claim, bool) {
	return aw.elsewhereAt(p, admissionFile)
}

// elsewhereAt reports whether the owner of the record at path runs in
// another place than p.
func (aw *admissionWorld) elsewhereAt(p *sim.Proc, path string) (admission.Claim, bool) {
	claim, ok := aw.ownerAt(path)
	if !ok {
		return claim, false
	}
	here := p.Host().Name() == claim.Owner.Hostname &&
		p.Host().Table().NamespaceID(p.Table().NS) == claim.Owner.PIDNamespace
	return claim, !here
}

// noteElsewhere fires the remote and container probes for an indeterminate
// answer to p.
func (aw *admissionWorld) noteElsewhere(p *sim.Proc) {
	claim, elsewhere := aw.elsewhere(p)
	if !elsewhere {
		return
	}
	w := aw.world
	if workkit.NoteOwnerMet(w, p, claim.Owner.Hostname, claim.Owner.PIDNamespace, claim.Owner.PID) {
		if claim.Owner.Hostname != p.Host().Name() {
			w.Probe("admission-remote-holder")
		} else {
			w.Probe("admission-foreign-namespace-holder")
		}
	}
}

// judgeReclaim is the ground truth of an Acquire's removal of the slot (a
// stale reclaim), judged on the record at path just before it is unlinked:
// the owner must be in the acquirer's own place.
func (aw *admissionWorld) judgeReclaim(p *sim.Proc, path string) {
	claim, elsewhere := aw.elsewhereAt(p, path)
	if elsewhere {
		aw.fail(fmt.Errorf("%s (%s, PID namespace %d) reclaimed admission %s of PID %d on %s in PID namespace %q: "+
			"an owner of another host or namespace is never judged from here", p.Name(), p.Host().Name(),
			p.Table().NS, claim.ID, claim.Owner.PID, claim.Owner.Hostname, claim.Owner.PIDNamespace), false)
	}
}

// quarantineElsewhere is the operator path of the liveness phase: with
// every process dead, an indeterminate record of another host or namespace
// is moved into quarantine by an operator (here, at the probe's place). It
// reports whether it moved one.
func (aw *admissionWorld) quarantineElsewhere(p *sim.Proc) bool {
	claim, elsewhere := aw.elsewhere(p)
	l := aw.liveness
	if !elsewhere || l.quarantines >= quarantinesMax {
		return false
	}
	l.quarantines++
	cfg := aw.config(p)
	state, err := admission.InspectState(context.Background(), cfg)
	if err != nil {
		return false
	}
	if state.Claim == nil || state.Claim.ID != claim.ID {
		return false // changed since: probe again
	}
	if state.Disposition != admission.DispositionIndeterminate || !state.OperatorNeeded {
		aw.fail(fmt.Errorf("liveness: InspectState of admission %s, owned by PID %d on %s in PID namespace %q, "+
			"answered %s (operator needed %t), not an operator-needed indeterminate state", claim.ID,
			claim.Owner.PID, claim.Owner.Hostname, claim.Owner.PIDNamespace, state.Disposition, state.OperatorNeeded), false)
		return false
	}
	aw.slot.Begin()
	_, err = admission.Quarantine(context.Background(), cfg, state.ContentSHA256)
	aw.slot.End(false)
	if err != nil {
		return false
	}
	aw.slot.Spoil()
	aw.world.RecordEvent("clear", models.AdmissionClear{})
	aw.world.Probe("admission-operator-quarantined-elsewhere")
	return true
}

// hopsMax bounds the liveness probe's moves to another place.
const hopsMax = 8

// rehost moves the liveness probe to the place of a mutation claim left by
// a process of another host or namespace (only there can it be proven
// orphaned and recovered). It reports whether p should end so that the
// next probe runs there.
func (l *admissionLiveness) rehost(p *sim.Proc) bool {
	aw := l.aw
	data, err := workkit.ReadRoot(aw.volume.Root(), statecas.ClaimPath(admissionFile))
	if err != nil {
		return false
	}
	var c struct {
		Owner struct {
			Hostname     string `json:"hostname"`
			PIDNamespace string `json:"pidNamespace"`
		} `json:"owner"`
	}
	if json.Unmarshal(data, &c) != nil {
		return false
	}
	place, ok := aw.places.Named(c.Owner.Hostname, c.Owner.PIDNamespace)
	if !ok || place.Same(p) || l.hops >= hopsMax {
		return false
	}
	l.hops++
	l.at = &place
	aw.world.Probe("admission-probe-rehost-claim")
	return true
}
