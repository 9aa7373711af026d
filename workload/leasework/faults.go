package leasework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Paths inside the namespace the hostile hooks touch.
var (
	leaseOwnerPath      = fspath.Join(leaseNamespace, "receiver.lock", "owner.json")
	leaseGuardPath      = fspath.Join(leaseNamespace, "receiver.lifecycle.guard.json")
	leaseReclaimsPath   = fspath.Join(leaseNamespace, "lifecycle-reclaims")
	leaseQuarantinePath = fspath.Join(leaseNamespace, "quarantine")
)

// leaseRepairDelayMax bounds the steps between a corruption and the
// operator's repair.
const leaseRepairDelayMax = 800

// recordIdentity is the part of an owner, guard or intent record the
// workload reads from outside: who wrote it.
type recordIdentity struct {
	Generation string  `json:"generation"`
	Session    string  `json:"piSessionId"`
	PID        int     `json:"pid"`
	Start      string  `json:"processStartIdentity"`
	Boot       *string `json:"bootIdentity"`
	Hostname   string  `json:"hostname"`
	// PIDNamespace is the writer's PID namespace id (a container's).
	PIDNamespace string `json:"pidNamespace"`
	UID          int    `json:"uid"`
	// Executable, ExecutableDevice and ExecutableInode name the writer's
	// executable (the path may carry " (deleted)" after an upgrade).
	Executable       string `json:"executable"`
	ExecutableDevice string `json:"executableDevice"`
	ExecutableInode  string `json:"executableInode"`
}

// parsedRecord is parseRecord's answer for one byte string.
type parsedRecord struct {
	identity recordIdentity
	ok       bool
}

// parseRecord is the package function parseRecord, remembered per run by
// the record's bytes: the hooks and checks between steps read the same few
// records over and over, and json.Unmarshal cost more than the rest of them.
// The memo is bounded; clearing it changes no answer.
func (lw *leaseWorld) parseRecord(data []byte) (recordIdentity, bool) {
	if hit, ok := lw.parsedRecords[string(data)]; ok {
		return hit.identity, hit.ok
	}
	if lw.parsedRecords == nil || len(lw.parsedRecords) >= parsedRecordsMax {
		lw.parsedRecords = make(map[string]parsedRecord)
	}
	identity, ok := parseRecord(data)
	lw.parsedRecords[string(data)] = parsedRecord{identity, ok}
	return identity, ok
}

const parsedRecordsMax = 256

func parseRecord(data []byte) (recordIdentity, bool) {
	var r recordIdentity
	if err := json.Unmarshal(data, &r); err != nil || r.Hostname == "" || r.PID <= 0 {
		return recordIdentity{}, false
	}
	return r, true
}

// corrupt is the FaultCorrupt hook: a hostile edit of one lease file.
func (lw *leaseWorld) corrupt(w *sim.World) {
	d := w.Decisions()
	space := lw.spaces[d.Intn(len(lw.spaces))]
	if space.unsafeLinks > 0 {
		return // a directory is a planted link: every path through it leaves the tree
	}
	root := space.cotenant()
	if info, err := root.Lstat(leaseQuarantinePath); err != nil || !info.IsDir() {
		return // not initialised yet
	}
	var targets []string
	owner, ownerErr := workkit.ReadRoot(root, leaseOwnerPath)
	_, ownerValid := lw.parseRecord(owner)
	if !space.ownerCorrupted {
		if ownerErr == nil && ownerValid {
			targets = append(targets, "owner")
		}
		if _, err := root.Lstat(leaseReceiver()); errors.Is(err, fs.ErrNotExist) {
			targets = append(targets, "receiver")
		}
	}
	if lw.corruptable(space, leaseGuardPath) {
		targets = append(targets, "guard")
	}
	entries, _ := root.ReadDir(leaseReclaimsPath)
	var intents []string
	for _, e := range entries {
		if name := fspath.Join(leaseReclaimsPath, e.Name); strings.HasPrefix(e.Name, "reclaim.") && lw.corruptable(space, name) {
			intents = append(intents, name)
		}
	}
	if len(intents) > 0 {
		targets = append(targets, "intent")
	}
	if len(targets) == 0 {
		return
	}
	c := leaseCorruption{kind: targets[d.Intn(len(targets))], repairAt: w.Step() + 1 + d.Intn(leaseRepairDelayMax)}
	switch c.kind {
	case "owner":
		c = ownerCorruption(w, owner)
	case "receiver":
		c.path = leaseReceiver()
		c.written = []byte("hostile co-tenant\n")
	case "guard", "intent":
		c.path = leaseGuardPath
		if c.kind == "intent" {
			c.path = intents[d.Intn(len(intents))]
		}
		data, err := workkit.ReadRoot(root, c.path)
		record, ok := lw.parseRecord(data)
		if err != nil || !ok {
			return
		}
		c.writer = leaseWriter{host: record.Hostname, ns: record.PIDNamespace, pid: record.PID, startTicks: record.Start}
		if record.Boot != nil {
			c.writer.boot = *record.Boot
		}
		c.written = workkit.Garble(data, d)
	}
	lw.applyCorruption(w, space, c)
}

// ownerCorruption is the hostile edit of a valid owner.json (data): its
// bytes garbled in place.
func ownerCorruption(w *sim.World, data []byte) leaseCorruption {
	d := w.Decisions()
	return leaseCorruption{kind: "owner", path: leaseOwnerPath, written: workkit.Garble(data, d),
		repairAt: w.Step() + 1 + d.Intn(leaseRepairDelayMax)}
}

// applyCorruption writes c through space's co-tenant and records it: in
// the history when it hides the owner, and for the repair.
func (lw *leaseWorld) applyCorruption(w *sim.World, space *leaseSpace, c leaseCorruption) {
	root := space.cotenant()
	flag := lease.O_TRUNC
	if c.kind == "receiver" {
		flag = lease.O_CREATE | lease.O_EXCL
	}
	if err := workkit.WriteRoot(root, c.path, flag, c.written); err != nil {
		return
	}
	workkit.SyncRoot(root, fspath.Dir(c.path))
	space.corruptions = append(space.corruptions, c)
	space.hostileBytes = append(space.hostileBytes, c.written)
	if c.kind == "guard" || c.kind == "intent" {
		space.hostileInPlace = append(space.hostileInPlace, c.path)
	}
	w.Probe("lease-hostile-corrupt-" + c.kind)
	w.Tracef("lease-hostile corrupt %s %s", c.kind, c.path)
	if c.kind == "owner" || c.kind == "receiver" {
		space.ownerCorrupted = true
		w.RecordEvent("corrupt", models.LeaseCorruption{Namespace: space.key})
	}
}

// cotenant returns the hostile co-tenant's view: the workload's own user,
// so its files look like the engine's; its calls are not scheduling points.
func (s *leaseSpace) cotenant() lease.FS {
	if s.hostile == nil {
		s.hostile = s.volume.FS().View(leaseUID)
	}
	return s.hostile
}

// corruptable reports whether name is a valid record not already corrupted.
func (lw *leaseWorld) corruptable(space *leaseSpace, name string) bool {
	for _, c := range space.corruptions {
		if c.path == name {
			return false
		}
	}
	data, err := workkit.ReadRoot(space.volume.Root(), name)
	if err != nil {
		return false
	}
	_, ok := lw.parseRecord(data)
	return ok
}

// trackCorruption notices, at the step it happens, that an owner-level
// corruption left receiver.lock: a release or reclaim that had checked the
// owner before the hook struck renamed the corrupt record away. The lease
// is empty from then on, which the history gets as a LeaseClear.
func (lw *leaseWorld) trackCorruption() {
	for _, space := range lw.spaces {
		// Both watches look for files by name, and no file they watch is
		// written in place (the hook corrupts only files not already
		// corrupted; the engines and the operator rename): while no name
		// changed, they would find what they found last.
		names, versioned := space.volume.NameGeneration()
		if versioned && space.tracked && names == space.trackedNames {
			continue
		}
		space.trackedNames, space.tracked = names, versioned
		lw.trackReturn(space)
		if !space.ownerCorrupted {
			continue
		}
		kept := space.corruptions[:0]
		for _, c := range space.corruptions {
			if c.kind == "owner" || c.kind == "receiver" {
				if !c.present(space.volume.Root()) {
					lw.ownerCorruptionGone(space, c)
					continue
				}
			}
			kept = append(kept, c)
		}
		space.corruptions = kept
	}
}

// ownerCorruptionGone files an owner-level corruption that left
// receiver.lock: the lease is empty from here (a LeaseClear for the
// history), and the corruption is watched in case a reclaimer gives it
// back (trackReturn).
func (lw *leaseWorld) ownerCorruptionGone(space *leaseSpace, c leaseCorruption) {
	space.ownerCorrupted = false
	space.hostileClearedAt = lw.world.Now()
	space.carried = append(space.carried, c)
	if c.link != nil {
		lw.checkSymlinkTarget(space, c.link) // the engine moved the link itself
	}
	lw.world.RecordEvent("carried-away", models.LeaseClear{Namespace: space.key})
	lw.world.Probe("lease-corruption-carried-away")
}

// trackReturn notices, at the step it happens, that an owner-level
// corruption carried away came back: a reclaimer that moved receiver.lock
// into quarantine re-read it, found it was not the record it had judged
// stale, and gave it back. The lease is corrupt again from then on.
func (lw *leaseWorld) trackReturn(space *leaseSpace) {
	if space.ownerCorrupted || len(space.carried) == 0 {
		return
	}
	for i, c := range space.carried {
		if !c.present(space.volume.Root()) {
			continue
		}
		space.carried = append(space.carried[:i], space.carried[i+1:]...)
		space.ownerCorrupted = true
		space.corruptions = append(space.corruptions, c)
		lw.world.RecordEvent("corrupt", models.LeaseCorruption{Namespace: space.key})
		lw.world.Probe("lease-corruption-given-back")
		return
	}
}

// renameRace is the FaultRenameRace hook: a hostile co-tenant replaces
// receiver.lock, owner.json or the guard by an identical copy (a new inode
// under the old name) between some process's check and its use.
func (lw *leaseWorld) renameRace(w *sim.World) {
	d := w.Decisions()
	space := lw.spaces[d.Intn(len(lw.spaces))]
	if space.unsafeLinks > 0 {
		return // as in corrupt
	}
	root := space.cotenant()
	var targets []string
	owner, err := workkit.ReadRoot(root, leaseOwnerPath)
	if _, ok := lw.parseRecord(owner); err == nil && ok && !space.ownerCorrupted {
		targets = append(targets, "receiver", "owner")
	}
	guard, err := workkit.ReadRoot(root, leaseGuardPath)
	if _, ok := lw.parseRecord(guard); err == nil && ok && lw.corruptable(space, leaseGuardPath) {
		targets = append(targets, "guard")
	}
	if len(targets) == 0 {
		return
	}
	space.hostileSerial++
	n := space.hostileSerial
	kind := targets[d.Intn(len(targets))]
	switch kind {
	case "receiver":
		fresh := fspath.Join(leaseNamespace, fmt.Sprintf(".hostile-new-%d", n))
		if root.Mkdir(fresh, 0o700) != nil || workkit.WriteRoot(root, fspath.Join(fresh, "owner.json"), lease.O_CREATE|lease.O_EXCL, owner) != nil {
			return
		}
		workkit.SyncRoot(root, fresh)
		if root.Rename(leaseReceiver(), fspath.Join(leaseNamespace, fmt.Sprintf(".hostile-old-%d", n))) != nil {
			return
		}
		if err := root.Rename(fresh, leaseReceiver()); err != nil {
			panic(fmt.Sprintf("sim: hostile receiver swap: %v", err))
		}
		workkit.SyncRoot(root, leaseNamespace)
	case "owner":
		copyPath := fspath.Join(leaseReceiver(), fmt.Sprintf(".hostile-%d", n))
		if workkit.WriteRoot(root, copyPath, lease.O_CREATE|lease.O_EXCL, owner) != nil {
			return
		}
		if root.Rename(copyPath, leaseOwnerPath) != nil {
			return
		}
		workkit.SyncRoot(root, leaseReceiver())
	case "guard":
		copyPath := fspath.Join(leaseNamespace, fmt.Sprintf(".hostile-guard-%d", n))
		if workkit.WriteRoot(root, copyPath, lease.O_CREATE|lease.O_EXCL, guard) != nil {
			return
		}
		if root.Rename(copyPath, leaseGuardPath) != nil {
			return
		}
		workkit.SyncRoot(root, leaseNamespace)
	}
	w.Probe("lease-hostile-swap-" + kind)
	w.Tracef("lease-hostile swap %s", kind)
}

// checkQuarantine checks that a reported reclaim's owner record is in
// quarantine with the reclaimed generation.
func (lw *leaseWorld) checkQuarantine(c leaseReclaimCheck) error {
	if !strings.HasPrefix(c.path, leaseQuarantinePath+"/") {
		return fmt.Errorf("%s reported reclaiming generation %s into %s, outside quarantine/", c.proc, c.generation, c.path)
	}
	data, err := workkit.ReadRoot(c.space.volume.Root(), fspath.Join(c.path, "owner.json"))
	if err != nil && (c.space.isPlantedLink(fspath.Join(c.path, "owner.json")) || c.space.isPlantedLink(c.path)) {
		return nil // the co-tenant's link, planted after the engine's last check
	}
	if err != nil {
		return fmt.Errorf("%s reclaimed generation %s into %s, but its owner.json is not there: %v", c.proc,
			c.generation, c.path, err)
	}
	record, ok := lw.parseRecord(data)
	if !ok && c.space.hostileWrote(data) {
		return nil // corrupted by the hook after the engine's last check
	}
	if !ok || record.Generation != c.generation {
		return fmt.Errorf("%s reclaimed generation %s into %s, which holds generation %q", c.proc, c.generation,
			c.path, record.Generation)
	}
	return nil
}

// leaseLiveness is the final phase: faults off, every hostile corruption
// repaired, every workload process dead; one probe per lease space must
// acquire within a bound.
type leaseLiveness struct {
	lw        *leaseWorld
	startStep int
	// pending lists the spaces still to probe; hops counts probes of the
	// current space (a probe on the wrong host hands over to another).
	pending []*leaseSpace
	hops    int
	probe   *sim.Proc
	done    bool
}

// startLiveness begins the liveness phase: it runs in an exit hook.
func (lw *leaseWorld) startLiveness() {
	w := lw.world
	w.StopFaults()
	lw.repairDue(true)
	lw.liveness = &leaseLiveness{lw: lw, startStep: w.Step(), pending: append([]*leaseSpace(nil), lw.spaces...)}
	w.Tracef("lease-liveness start")
	// Let start-time ticks move on, so a bystander never shares a dead
	// owner's start tick (two processes in one tick are indistinguishable).
	settle := func(p *sim.Proc) { _ = p.Clock().Sleep(context.Background(), 30*time.Millisecond) }
	if _, err := w.Spawn(w.Hosts()[0], sim.ProcSpec{Name: "settle", UID: leaseUID}, settle); err != nil {
		lw.fail(fmt.Errorf("liveness: spawn: %v", err), true)
	}
}

func (l *leaseLiveness) exited(p *sim.Proc) {
	if l.done || l.lw.failure != nil || (p != l.probe && p.Name() != "settle") {
		return
	}
	l.probe = nil
	l.launch()
}

// launch starts the probe of the first pending space, on the host its
// records name (intents, then guard, then owner), with a bystander on a
// dead owner's PID when that PID is free.
func (l *leaseLiveness) launch() {
	lw, w := l.lw, l.lw.world
	if len(l.pending) == 0 {
		l.done = true
		for _, c := range lw.allReclaims {
			if err := lw.checkQuarantine(c); err != nil {
				lw.fail(err, false)
			}
		}
		w.Tracef("lease-liveness done")
		return
	}
	space := l.pending[0]
	l.hops++
	if l.hops > leaseProbeHops {
		lw.fail(fmt.Errorf("liveness: %s: no probe acquired after %d hops between hosts", space.key, leaseProbeHops), true)
		return
	}
	root := space.volume.Root()
	host := space.hosts[0]
	var owner recordIdentity
	var ownerOK bool
	if data, err := workkit.ReadRoot(root, leaseOwnerPath); err == nil {
		owner, ownerOK = lw.parseRecord(data)
	}
	// The host to probe from is the one named by the first record the engine
	// will meet: it scans reclaim intents before it contends for the guard,
	// and judges the owner last. Probing from the guard's host while a dead
	// remote intent blocks every call there would hand over forever.
	// (A container's record names its PID namespace too: the probe runs
	// in it, since no other namespace may judge it.)
	var named *recordIdentity
	entries, _ := root.ReadDir(leaseReclaimsPath)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name, "reclaim.") || !strings.HasSuffix(e.Name, ".json") {
			continue // a crashed writer's temp: the engine does not read it either
		}
		if data, err := workkit.ReadRoot(root, fspath.Join(leaseReclaimsPath, e.Name)); err == nil {
			if r, ok := lw.parseRecord(data); ok && named == nil {
				named = &r
			}
		}
	}
	if named == nil {
		if data, err := workkit.ReadRoot(root, leaseGuardPath); err == nil {
			if r, ok := lw.parseRecord(data); ok {
				named = &r
			}
		}
	}
	if named == nil && ownerOK {
		named = &owner
	}
	ns := 0
	if named != nil {
		for _, h := range space.hosts {
			if h.Name() == named.Hostname {
				host = h
			}
		}
		if i, ok := workkit.NamespaceOf(host, named.PIDNamespace); ok && host.Name() == named.Hostname {
			ns = i
		}
	}
	ownerHere := ownerOK && owner.Hostname == host.Name() && (owner.PIDNamespace == "" ||
		owner.PIDNamespace == host.Table().NamespaceID(ns))
	if ownerHere && owner.Boot != nil {
		if *owner.Boot == host.Table().BootID() {
			l.bystander(host, ns, owner.PID, sim.ProcSpec{Name: "bystander", UID: leaseUID + 1, Namespace: ns},
				"lease-bystander-on-owner-pid")
		} else if spec, ok := twinSpec(host, owner); ok {
			spec.Namespace = ns
			l.bystander(host, ns, owner.PID, spec, leaseProbeTwinAfterReboot)
		}
	}
	probe, err := w.Spawn(host, sim.ProcSpec{Name: "probe", UID: leaseUID, Namespace: ns}, l.body)
	if err != nil {
		lw.fail(fmt.Errorf("liveness: spawn probe: %v", err), true)
		return
	}
	lw.deathByProc[probe.Table()] = probe
	l.probe = probe
}

// leaseProbeTwinAfterReboot fires when a bystander with a dead owner's PID,
// start tick and executable runs after the owner's host rebooted.
const leaseProbeTwinAfterReboot = "lease-bystander-on-owner-pid-and-tick-after-reboot"

// twinSpec describes a boot-time daemon that is the exact identity twin of
// owner, a dead owner recorded in an earlier boot of h: its start tick and
// executable (same inode) are the owner's, so only the boot id tells them
// apart (ARCHITECTURE.md: PID reuse across reboots with equal start ticks).
// ok is false when no such process could exist: the owner's tick is still in
// this boot's future, or its executable has been replaced since.
func twinSpec(h *sim.Host, owner recordIdentity) (sim.ProcSpec, bool) {
	ticks, err := strconv.ParseUint(owner.Start, 10, 64)
	if err != nil || ticks > h.Table().TicksNow() {
		return sim.ProcSpec{}, false
	}
	exe := strings.TrimSuffix(owner.Executable, " (deleted)")
	if !strings.HasPrefix(exe, "/") || !h.RanExe(exe) {
		return sim.ProcSpec{}, false
	}
	ino := strconv.FormatUint(h.Table().ExeInode(exe), 10)
	if owner.ExecutableDevice != strconv.FormatUint(simproc.ExeDev, 10) || owner.ExecutableInode != ino {
		return sim.ProcSpec{}, false
	}
	return sim.ProcSpec{Name: "bystander", UID: leaseUID + 1, Exe: exe, StartTicks: &ticks}, true
}

// bystander puts an unrelated process described by spec on the dead owner's
// PID, alive until the liveness phase ends, and fires probe once it runs
// there: a start-time check (or, for a twin from an earlier boot, the boot
// id check) must still call the owner stale.
func (l *leaseLiveness) bystander(h *sim.Host, ns, pid int, spec sim.ProcSpec, probe string) {
	w := l.lw.world
	if h.Table().Lookup(ns, pid) != nil {
		return
	}
	body := func(p *sim.Proc) {
		if p.Table().PID != pid {
			return
		}
		w.Probe(probe)
		for i := 0; i < 4096 && !l.done; i++ {
			_ = p.Clock().Sleep(context.Background(), 5*time.Millisecond)
		}
	}
	first, err := w.Spawn(h, spec, body)
	if err != nil || first.Table().PID == pid {
		return
	}
	free, pidMax := 0, h.Table().PIDMax()
	for candidate := first.Table().PID%(pidMax-1) + 1; candidate != pid; candidate = candidate%(pidMax-1) + 1 {
		if h.Table().Lookup(ns, candidate) == nil {
			free++
		}
	}
	if h.Table().Churn(ns, free) == nil {
		_, _ = w.Spawn(h, spec, body)
	}
}

// body is the probe: acquire until Acquired, waiting out live holders and
// busy guards, handing over to another host on a remote record, and
// reporting every refusal that crashes alone can explain as a finding.
func (l *leaseLiveness) body(p *sim.Proc) {
	lw := l.lw
	space := lw.space(p)
	m := lw.manager(p)
	for try := 0; try < leaseProbeTries; try++ {
		call := lw.world.Now()
		res, _, err := lw.acquireRecorded(p, m)
		switch {
		case err != nil:
			lw.world.Probe("lease-probe-error")
		case res.Kind == lease.Acquired:
			lw.world.Probe("lease-probe-acquired")
			l.pending = l.pending[1:]
			l.hops = 0
			return
		case res.Kind == lease.Held:
			// Held is a finding only if the holder had died before the
			// call: a live-thread zombie reaped during the call was alive
			// when the engine looked.
			holder := lw.sessionProc[res.Owner.SessionID]
			diedAt, dead := lw.deathAt[holder]
			if holder == nil || (dead && diedAt < call) {
				lw.fail(fmt.Errorf("liveness: %s: probe %s found the lease held by dead owner %s (session %s, "+
					"PID %d on %s) with every holder dead", space.key, p.Name(), procName(holder),
					res.Owner.SessionID, res.Owner.PID, res.Owner.Hostname), true)
				return
			}
			lw.world.Probe("lease-probe-waits-live-zombie")
		case lw.guardOperatorZombie() && (res.Refusal.Human == lease.HumanRemoteRecord ||
			res.Refusal.Human == lease.HumanForeignNamespace):
			// A guard operator crashed inside a force and its threads keep
			// it (and its reclaim intent) alive until the reap: wait here,
			// hopping would only bounce between the intents' homes.
			lw.world.Probe("lease-probe-waits-operator-zombie")
		case lw.crashedZombieRuns() && (res.Refusal.Human == lease.HumanRemoteRecord ||
			res.Refusal.Human == lease.HumanForeignNamespace):
			// A worker crashed inside a reclaim as a zombie whose threads
			// run: its intent is alive to the engine on its own host, and a
			// dead intent elsewhere sends the probe back there, so hopping
			// would bounce between the two until the reap (lease seed
			// 83049865: 'no probe acquired after 8 hops between hosts').
			lw.world.Probe("lease-probe-waits-crashed-zombie")
		case res.Refusal.Human == lease.HumanRemoteRecord:
			lw.world.Probe("lease-probe-rehost")
			return
		case res.Refusal.Human == lease.HumanForeignNamespace:
			lw.world.Probe("lease-probe-renamespace") // a container's record: probe from inside it
			return
		case res.Refusal.Reason == lease.RefusalLifecycleBusy:
		case len(space.corruptions) > 0 || space.ownerCorrupted || space.hostileClearedAt >= call:
			// A hostile corruption was there when the call began.
			lw.world.Probe("lease-probe-waits-hostile-repair")
		default:
			lw.fail(fmt.Errorf("liveness: %s: with every holder dead and no hostile corruption left, the probe "+
				"was refused: %s", space.key, res.Refusal), true)
			return
		}
		_ = p.Clock().Sleep(context.Background(), 2*time.Millisecond)
	}
	lw.fail(fmt.Errorf("liveness: %s: the probe did not acquire in %d attempts", space.key, leaseProbeTries), true)
}

// check enforces the liveness phase's step bound.
func (l *leaseLiveness) check() {
	if !l.done && l.lw.world.Step()-l.startStep > l.lw.opts.LivenessStepsMax {
		l.lw.fail(fmt.Errorf("liveness: no acquire within %d steps after the workload ended", l.lw.opts.LivenessStepsMax), true)
	}
}

func procName(p *sim.Proc) string {
	if p == nil {
		return "(unknown acquire)"
	}
	return p.Name()
}
