package dirleasework

// Hosts and containers. Per seed the volume is
// mounted by host0 and, in half the seeds, by host1 too (workkit.Places),
// and each host has one to three PID namespaces. Creators and recoverers
// are dealt round the hosts and namespaces; children run in their
// creator's place, restarts in the dead process's. A claim whose owner is
// in another place is never judged by PID: Recover must count it
// indeterminate, and a recovery that moves or removes its directory is a
// ground-truth violation (judgeElsewhere), whatever the owner's fate. The
// liveness phase resolves such claims where they live: it runs its
// recovery probe in each place in turn (a probe hands over once every
// claim left, or a mutation claim in its way, belongs to another place).

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// placeOf is where p runs.
func placeOf(p *sim.Proc) workkit.Place { return workkit.Place{Host: p.Host(), NS: p.Table().NS} }

// bootsKey names the current boots of every host: the model's clock jumps
// at a reboot of any of them (modelNowMs).
func (dw *dirWorld) bootsKey() string {
	if len(dw.places.Hosts) == 1 {
		return dw.host.Table().BootID()
	}
	var b strings.Builder
	for _, h := range dw.places.Hosts {
		b.WriteString(h.Table().BootID())
		b.WriteByte(' ')
	}
	return b.String()
}

// judgeElsewhere fails the run if the recovering process moves or removes
// the directory of an owner in another place.
func (f *dirFS) judgeElsewhere(t *dirTrack, verb string) {
	if placeOf(t.owner) == placeOf(f.p) {
		return
	}
	f.dw.fail(fmt.Errorf("%s's recovery (%s, PID namespace %d) %s %s of owner %s on %s in PID namespace %d: an owner "+
		"of another host or namespace is never judged from here", f.p.Name(), f.p.Host().Name(), f.p.Table().NS, verb,
		t.path, t.owner.Name(), t.owner.Host().Name(), t.owner.Table().NS), false)
}

// recordOwner is the owner of a claim or mutation claim file, read from
// outside.
type recordOwner struct {
	Owner struct {
		PID          int    `json:"pid"`
		Hostname     string `json:"hostname"`
		PIDNamespace string `json:"pidNamespace"`
	} `json:"owner"`
}

// ownersLeft reads the owners of every claim file and mutation claim in
// the claim directory (ok false for a legacy or unreadable one).
func (dw *dirWorld) ownersLeft() []recordOwner { return dw.ownersIn(dirClaimsPath) }

// ownersIn is ownersLeft of the claim directory dir.
func (dw *dirWorld) ownersIn(dir string) []recordOwner {
	entries, _ := dw.volume.Root().ReadDir(dir)
	var owners []recordOwner
	for _, e := range entries {
		if !strings.HasSuffix(e.Name, ".json") && !strings.HasSuffix(e.Name, ".mutation") {
			continue
		}
		data, err := workkit.ReadRoot(dw.volume.Root(), fspath.Join(dir, e.Name))
		var r recordOwner
		if err == nil {
			r = dw.ownerOf(data)
		}
		owners = append(owners, r)
	}
	return owners
}

// ownerOf decodes the owner of a record's bytes (the zero recordOwner when
// they name none). A pile-up run decodes the same few hundred claims after
// every recovery, and encoding/json was 2% of it: the answers are kept by
// content, which decides them.
func (dw *dirWorld) ownerOf(data []byte) recordOwner {
	if r, ok := dw.owners[string(data)]; ok {
		return r
	}
	var r recordOwner
	if json.Unmarshal(data, &r) != nil || r.Owner.Hostname == "" {
		r = recordOwner{} // unreadable: judged here
	}
	if dw.owners == nil {
		dw.owners = map[string]recordOwner{}
	}
	dw.owners[string(data)] = r
	return r
}

// elsewhere reports whether r's owner runs in another place than p.
func (r recordOwner) elsewhere(p *sim.Proc) bool {
	return r.Owner.Hostname != "" && (r.Owner.Hostname != p.Host().Name() ||
		r.Owner.PIDNamespace != p.Host().Table().NamespaceID(p.Table().NS))
}

// noteElsewhere fires the remote and container probes for the claims of
// other places that p's recovery counted indeterminate.
func (dw *dirWorld) noteElsewhere(p *sim.Proc) {
	w := dw.world
	for _, r := range dw.ownersLeft() {
		if !r.elsewhere(p) || !workkit.NoteOwnerMet(w, p, r.Owner.Hostname, r.Owner.PIDNamespace, r.Owner.PID) {
			continue
		}
		if r.Owner.Hostname != p.Host().Name() {
			w.Probe("dirlease-remote-holder")
		} else {
			w.Probe("dirlease-foreign-namespace-holder")
		}
	}
}

// allPlaces lists every host's namespaces: the liveness probe's rounds.
func (dw *dirWorld) allPlaces() []workkit.Place {
	var all []workkit.Place
	for _, h := range dw.places.Hosts {
		for ns := 0; ns < h.Table().NamespaceCount(); ns++ {
			all = append(all, workkit.Place{Host: h, NS: ns})
		}
	}
	return all
}

// livenessRounds bounds how often the liveness probe visits every place.
const livenessRounds = 4

// handOver reports whether the liveness probe p should end so that the
// next place's probe recovers what is left: every claim left is another
// place's, or p's pass failed and some record in its way is.
func (dw *dirWorld) handOver(p *sim.Proc, failed bool) bool {
	if len(dw.allPlaces()) == 1 {
		return false
	}
	owners := dw.ownersLeft()
	some, all := false, len(owners) > 0
	for _, r := range owners {
		elsewhere := r.elsewhere(p)
		some = some || elsewhere
		all = all && elsewhere
	}
	if all || (failed && some) {
		dw.world.Probe("dirlease-liveness-hands-over")
		return true
	}
	return false
}
