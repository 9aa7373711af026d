package dirleasework

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// dirRepairDelayMax bounds the steps between a swap and the operator's
// removal of the impostor directory.
const dirRepairDelayMax = 600

// dirClaimsPath is the claim directory.
var dirClaimsPath = fspath.Join(append([]string{dirleaseHome}, dirlease.RootDir...)...)

// sortedTracks returns the tracked paths in a deterministic order (by
// path). Several hooks walk them at every step, so the order is kept until
// a track is added (addTrack) rather than sorted per call: in a large
// world (hundreds of tracks) the per-call sort was 44% of a guided
// search's CPU. Callers only read the slice; a track added while one of
// them walks it makes a new slice, so the walk sees the tracks as they were
// when it began, as with a fresh copy.
func (dw *dirWorld) sortedTracks() []*dirTrack {
	if dw.trackOrder == nil {
		dw.trackOrder = make([]*dirTrack, 0, len(dw.tracks))
		for _, t := range dw.tracks {
			dw.trackOrder = append(dw.trackOrder, t)
		}
		sort.Slice(dw.trackOrder, func(i, j int) bool { return dw.trackOrder[i].path < dw.trackOrder[j].path })
	}
	return dw.trackOrder
}

// addTrack follows a new path.
func (dw *dirWorld) addTrack(t *dirTrack) {
	if dw.tracks[t.path] != nil {
		panic(fmt.Sprintf("sim: dirlease: %s is tracked twice", t.path))
	}
	dw.tracks[t.path] = t
	dw.trackOrder = nil
}

// swap is the FaultRenameRace hook: a co-tenant moves a claimed directory
// away and puts an empty directory of its own (same user, mode 0700) at its
// path, between a recovery's check and its use.
func (dw *dirWorld) swap(w *sim.World) {
	var candidates []*dirTrack
	root := dw.volume.FS().View(dirleaseUID)
	for _, t := range dw.sortedTracks() {
		if !t.claimed || !t.created || t.foreign || t.bundle || dw.parentSwapped(t.path) {
			continue
		}
		if info, err := root.Lstat(t.path); err == nil && info.IsDir() {
			candidates = append(candidates, t)
		}
	}
	if len(candidates) == 0 {
		return
	}
	t := candidates[w.Decisions().Intn(len(candidates))]
	dw.swaps++
	if root.Rename(t.path, fmt.Sprintf("%s.moved-%d", t.path, dw.swaps)) != nil {
		return
	}
	if err := root.Mkdir(t.path, 0o700); err != nil {
		panic(fmt.Sprintf("sim: dirlease swap: %v", err))
	}
	workkit.SyncRoot(root, fspath.Dir(t.path))
	info, err := root.Lstat(t.path)
	if err != nil {
		panic(fmt.Sprintf("sim: dirlease swap: %v", err))
	}
	id, ok := info.Identity()
	if !ok {
		panic(fmt.Sprintf("sim: dirlease swap: %s has no identity", t.path))
	}
	dw.setForeign(t, true)
	t.foreignID = id
	t.repairAt = w.Step() + 1 + w.Decisions().Intn(dirRepairDelayMax)
	w.RecordEvent("swap", models.DirSwap{Path: t.path})
	w.Probe("dirlease-swap")
}

// repairDue removes the impostor directories whose time has come (all of
// them when force is set): the operator. The operator knows the impostor by
// its identity, not by its path: a recovery that found it at the claimed
// path renamed it to the claim's removal quarantine name before refusing,
// and a crash or power loss before its rename back leaves it there. The
// operator looks for it at the claimed path, then in the parent directory,
// and removes it wherever it is; only then can a recovery proceed.
func (dw *dirWorld) repairDue(force bool) {
	if dw.foreign == 0 {
		return // nothing swapped in: no track to walk
	}
	root := dw.volume.Root()
	for _, t := range dw.sortedTracks() {
		if !t.foreign || (!force && dw.world.Step() < t.repairAt) {
			continue
		}
		at, found := dw.findForeign(root, t)
		if !found {
			dw.setForeign(t, false)
			continue // already gone
		}
		if root.Remove(at) != nil {
			continue // an injected error: the operator retries at a later step
		}
		dw.setForeign(t, false)
		workkit.SyncRoot(root, fspath.Dir(t.path))
		delete(dw.quarantined, at)
		if at != t.path {
			dw.world.Probe("dirlease-operator-repair-quarantined")
		}
		dw.world.RecordEvent("remove", models.DirRemove{Path: t.path})
		dw.world.Probe("dirlease-operator-repair")
	}
}

// setForeign sets t.foreign and keeps dw.foreign, the count of foreign
// tracks, with it.
func (dw *dirWorld) setForeign(t *dirTrack, foreign bool) {
	setCounted(&t.foreign, &dw.foreign, foreign)
}

// setCounted sets *flag to value and keeps *count, the number of such flags
// that are set, in step with it: a per-step check then reads the count
// instead of walking every track.
func setCounted(flag *bool, count *int, value bool) {
	switch {
	case value && !*flag:
		*count++
	case !value && *flag:
		*count--
	}
	*flag = value
}

// findForeign returns where t's impostor directory is now: at t.path, or
// under another name in the parent (a recovery's quarantine name).
func (dw *dirWorld) findForeign(root lease.FS, t *dirTrack) (string, bool) {
	holds := func(name string) bool {
		info, err := root.Lstat(name) // a directory or a symlink
		if err != nil {
			return false
		}
		id, ok := info.Identity()
		return ok && id == t.foreignID
	}
	if holds(t.path) {
		return t.path, true
	}
	parent := fspath.Dir(t.path)
	entries, err := root.ReadDir(parent)
	if err != nil {
		panic(fmt.Sprintf("sim: dirlease operator: read %s: %v", parent, err))
	}
	for _, e := range entries {
		if name := fspath.Join(parent, e.Name); holds(name) {
			return name, true
		}
	}
	return "", false
}

// dirLiveness is the final phase.
type dirLiveness struct {
	dw        *dirWorld
	startStep int
	probe     *sim.Proc
	done      bool
	// visits counts the probes launched, one place after another (hosts.go).
	visits int
}

// startLiveness ends the workload: faults stop, every process is killed,
// the co-tenant's work is undone; then the crash pile-up runs in runs that
// draw it (pileup.go), and the liveness phase after it.
func (dw *dirWorld) startLiveness() {
	w := dw.world
	w.StopFaults()
	pileup := dw.drawPileup()
	if pileup {
		dw.pileup = &dirPileup{dw: dw}
	} else {
		dw.liveness = &dirLiveness{dw: dw, startStep: w.Step()}
	}
	for _, p := range append([]*sim.Proc(nil), w.Procs()...) {
		if p.Alive() {
			w.Crash(p)
		}
	}
	dw.disarmTraps()
	dw.loose.Restore(w)
	dw.repairParents(true)
	dw.repairDue(true)
	dw.repairSwappedClaims(true)
	dw.repairClaimSymlinks(true)
	if pileup {
		dw.pileup.start()
		return
	}
	dw.launchLiveness()
}

// launchLiveness starts the liveness phase's first probe.
func (dw *dirWorld) launchLiveness() {
	if dw.liveness == nil {
		dw.liveness = &dirLiveness{dw: dw, startStep: dw.world.Step()}
	}
	if dw.liveness.visits > 0 {
		panic("dirleasework: the liveness phase launched twice")
	}
	dw.world.Tracef("dirlease-liveness start")
	dw.liveness.launch()
}

// launch starts the probe in the next place (round the hosts' namespaces).
func (l *dirLiveness) launch() {
	dw := l.dw
	places := dw.allPlaces()
	if l.visits >= len(places)*livenessRounds {
		dw.fail(fmt.Errorf("liveness: claims left after %d rounds of recovery probes in every place", livenessRounds), true)
		return
	}
	place := places[l.visits%len(places)]
	l.visits++
	probe, err := dw.spawnAt(place, "probe", l.body)
	if err != nil {
		dw.fail(fmt.Errorf("liveness: spawn probe: %v", err), true)
		return
	}
	l.probe = probe
}

// exited hands over to the next place when a probe ended unfinished.
func (l *dirLiveness) exited(p *sim.Proc) {
	if p != l.probe || l.done || l.dw.failure != nil {
		return
	}
	l.probe = nil
	l.launch()
}

// body recovers until no claim is left, waiting out live-thread zombies and
// launching windows.
func (l *dirLiveness) body(p *sim.Proc) {
	dw := l.dw
	var last string
	for try := 0; try < dirleaseProbeTries; try++ {
		before := dw.pileup.claimsLeft(p)
		report, err, ok := dw.recoverRecorded(p)
		if dw.pileup.stalled(p, before, err) {
			return
		}
		switch {
		case (!ok || report.Active+report.Indeterminate > 0) && dw.handOver(p, !ok):
			return // what is left belongs to another place: recover it there
		case !ok:
			last = fmt.Sprintf("recovery failed: %v", err)
		case report.Active > 0 && dw.AliveCount() > 1:
			last = "waiting for a live-thread zombie"
		case report.Active == 0 && report.Indeterminate == 0:
			if left := dw.claimsLeft(); len(left) > 0 {
				dw.fail(fmt.Errorf("liveness: a clean recovery pass left claims %v", left), true)
				return
			}
			if dw.usersRecover(p) != usersRecovered {
				return // wedged (reported), or handed over to the next place
			}
			dw.world.Probe("dirlease-liveness-recovered")
			l.done = true
			return
		default:
			last = fmt.Sprintf("report %+v", report)
			if wait := dw.launchWait(p); wait > 0 {
				// A launching claim waits for its recoverAfterMs, which a
				// wall clock stepped backwards pushed into the future.
				dw.world.Probe("dirlease-liveness-waits-launch-window")
				_ = p.Clock().Sleep(context.Background(), wait)
			}
		}
		_ = p.Clock().Sleep(context.Background(), 2*time.Millisecond)
	}
	dw.fail(fmt.Errorf("liveness: with every process dead and faults off, recovery did not clear the claims in %d "+
		"passes; last: %s", dirleaseProbeTries, last), true)
}

// usersRecover is the liveness of the users' state home (users.go): with
// every process dead and faults off, `dirlease recover` there must
// succeed. A claim it cannot judge yet (active, indeterminate) is counted,
// never an error; a pass that fails every time wedges the state home: no
// run on its paths gets a lease again, and no recovery clears them. A
// failure caused by a record of another place (a mutation claim whose
// holder is in another PID namespace or host, which only that place can
// judge) hands the probe over to the next place (usersElsewhere), as the
// main recovery does.
func (dw *dirWorld) usersRecover(p *sim.Proc) usersVerdict {
	if dw.opts.Users == 0 {
		return usersRecovered
	}
	cfg, _ := dw.userConfig(p)
	var err error
	failed := 0 // failures with no process but the probe alive
	for try := 0; try < dirleaseProbeTries && failed < userRecoverTries; try++ {
		if _, err = dirlease.Recover(context.Background(), cfg); err == nil {
			dw.world.Probe("dirlease-liveness-users-recovered")
			return usersRecovered
		}
		if dw.usersElsewhere(p) {
			dw.world.Probe("dirlease-liveness-hands-over")
			return usersElsewhere
		}
		if dw.AliveCount() > 1 {
			// A live-thread zombie (a crashed process whose threads still
			// run) holds a mutation claim until its threads end: wait.
			dw.world.Probe("dirlease-liveness-users-wait-zombie")
		} else {
			failed++
		}
		_ = p.Clock().Sleep(context.Background(), 2*time.Millisecond)
	}
	dw.fail(fmt.Errorf("liveness: the users' state home is wedged: with every process dead and faults off, "+
		"dirlease recover failed (%d times with the probe alone): %v", failed, err), true)
	return usersWedged
}

// usersVerdict is usersRecover's outcome.
type usersVerdict int

const (
	usersRecovered usersVerdict = iota
	usersElsewhere
	usersWedged
)

// usersElsewhere reports whether a record in the users' claim directory
// belongs to another place than p's, with more than one place to visit.
func (dw *dirWorld) usersElsewhere(p *sim.Proc) bool {
	if len(dw.allPlaces()) == 1 {
		return false
	}
	for _, r := range dw.ownersIn(fspath.Join(append([]string{userHome}, dirlease.RootDir...)...)) {
		if r.elsewhere(p) {
			return true
		}
	}
	return false
}

// userRecoverTries bounds the liveness probe's recoveries of the users'
// state home.
const userRecoverTries = 8

// dirLaunchWaitMax bounds the probe's wait for a launching window.
const dirLaunchWaitMax = 48 * time.Hour

// launchWait returns how long until every claim's launching window has
// passed on the host's boot clock (faults are off: root reads are safe).
func (dw *dirWorld) launchWait(p *sim.Proc) time.Duration {
	latest := int64(0)
	for _, name := range dw.claimsLeft() {
		data, err := workkit.ReadRoot(dw.volume.Root(), fspath.Join(dirClaimsPath, name))
		var claim struct {
			CreatedAtMs     int64  `json:"createdAtMs"`
			RecoverAfterMs  int64  `json:"recoverAfterMs"`
			CreatedAtBootMs *int64 `json:"createdAtBootMs"`
			recordOwner
		}
		if err == nil && json.Unmarshal(data, &claim) == nil && claim.CreatedAtBootMs != nil && !claim.elsewhere(p) {
			latest = max(latest, *claim.CreatedAtBootMs+claim.RecoverAfterMs-claim.CreatedAtMs)
		}
	}
	wait := time.Duration(latest-p.Host().Monotonic().Milliseconds()+1) * time.Millisecond
	return min(wait, dirLaunchWaitMax)
}

// claimsLeft lists the claim files left (faults are off: root reads are safe).
func (dw *dirWorld) claimsLeft() []string {
	entries, _ := dw.volume.Root().ReadDir(dirClaimsPath)
	var left []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name, ".json") {
			left = append(left, e.Name)
		}
	}
	return left
}

// DirleaseOperations converts a dirlease workload history; read-only uses
// cut short by a crash are dropped (package models, "The history
// contract").
func DirleaseOperations(history []sim.Operation) []porcupine.Operation {
	return workkit.Operations(history, func(op sim.Operation) bool {
		_, use := op.Input.(models.DirUse)
		return use && (op.Unknown || op.Output == nil)
	})
}

// CheckDirleaseHistory checks a dirlease workload history against
// models.DirLeaseModel: nil means linearizable; a timeout wraps
// ErrCheckTimeout.
func CheckDirleaseHistory(history []sim.Operation) error {
	return workkit.CheckHistory("dirlease", DirleaseOperations(history), models.ValidateDirLeaseHistory, models.CheckDirLease,
		models.DirLeaseModel())
}

func (dw *dirWorld) childBody(p *sim.Proc) {
	_ = p.Clock().Sleep(context.Background(), time.Duration(1+dw.world.Decisions().Intn(30))*time.Millisecond)
}

func (dw *dirWorld) fail(err error, liveness bool) {
	if liveness {
		err = &sim.LivenessError{Message: err.Error()}
	}
	if dw.failure == nil {
		dw.failure = err
	}
}
