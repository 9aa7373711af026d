package admissionwork

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"time"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// admissionRepairDelayMax bounds the steps between a corruption and the
// operator's repair.
const admissionRepairDelayMax = 600

// claimBusy reports whether a mutation claim guards the slot: a process is
// inside a compare-and-swap, and a hostile write now could race its commit
// in a way no engine can see (the hook is not a process). A live holder's
// claim that an orphan recovery moved aside by mistake counts too: the
// recoverer renames it back, and its holder, between its compare and its
// commit all along, goes on (claimWatch.aside; random seed 33738 garbled the
// record in that window, the holder's compare-and-swap then removed it, and
// the repair read that as "the engine wrote over it").
func (aw *admissionWorld) claimBusy() bool {
	_, err := aw.volume.Root().Lstat(statecas.ClaimPath(admissionFile))
	return !errors.Is(err, fs.ErrNotExist) || aw.claims.liveAside()
}

// corrupt is the FaultCorrupt hook: it garbles a valid slot record.
func (aw *admissionWorld) corrupt(w *sim.World) {
	if aw.corrupted || aw.claimBusy() {
		return
	}
	root := aw.volume.FS().View(admissionUID)
	data, err := workkit.ReadRoot(root, admissionFile)
	if err != nil || len(data) == 0 || data[0] != '{' {
		return
	}
	written := workkit.Garble(data, w.Decisions())
	if workkit.WriteRoot(root, admissionFile, lease.O_TRUNC, written) != nil {
		return
	}
	workkit.SyncRoot(root, fspath.Dir(admissionFile))
	aw.corrupted, aw.corruption = true, written
	aw.slot.Spoil()
	aw.repairAt = w.Step() + 1 + w.Decisions().Intn(admissionRepairDelayMax)
	aw.legacy = false
	w.RecordEvent("corrupt", models.AdmissionCorruption{})
	w.Probe("admission-hostile-corrupt")
}

// repair is the operator: it removes the garbled record once no process is
// inside a compare-and-swap (the engine never removes a corrupt record).
// force repairs under an orphaned claim too (every process is dead).
func (aw *admissionWorld) repair(force bool) {
	if aw.symlinked {
		aw.repairSymlink(force)
		return
	}
	if !force && aw.claimBusy() {
		return
	}
	root := aw.volume.Root()
	data, err := workkit.ReadRoot(root, admissionFile)
	if err != nil || !bytes.Equal(data, aw.corruption) {
		aw.fail(fmt.Errorf("the corrupt admission record changed before its repair (%v, %q): the engine wrote over it", err, data), false)
		return
	}
	if err := root.Remove(admissionFile); err != nil {
		aw.fail(fmt.Errorf("operator repair of %s: %v", admissionFile, err), false)
		return
	}
	workkit.SyncRoot(root, fspath.Dir(admissionFile))
	aw.corrupted, aw.corruption = false, nil
	aw.slot.Spoil()
	aw.world.RecordEvent("clear", models.AdmissionClear{})
	aw.world.Probe("admission-operator-repair")
}

// renameRace is the FaultRenameRace hook: a co-tenant replaces the slot's
// mutation claim by an identical copy (a new inode under the same name),
// between an orphan recoverer's check and its use.
func (aw *admissionWorld) renameRace(w *sim.World) {
	claim := statecas.ClaimPath(admissionFile)
	root := aw.volume.FS().View(admissionUID)
	data, err := workkit.ReadRoot(root, claim)
	if err != nil {
		return
	}
	aw.swaps++
	copyPath := fspath.Join(fspath.Dir(claim), fmt.Sprintf(".hostile-%d", aw.swaps))
	if workkit.WriteRoot(root, copyPath, lease.O_CREATE|lease.O_EXCL, data) != nil {
		return
	}
	if root.Rename(copyPath, claim) != nil {
		_ = root.Remove(copyPath)
		return
	}
	workkit.SyncRoot(root, fspath.Dir(claim))
	aw.left.Swapped(claim)
	w.Probe("admission-hostile-swap-claim")
}

// admissionLiveness is the final phase.
type admissionLiveness struct {
	aw        *admissionWorld
	startStep int
	probe     *sim.Proc
	rebooted  bool
	// wantReboot is set by a probe that met an indeterminate slot.
	wantReboot bool
	done       bool
	// quarantines counts the operator's moves of records of another host
	// or namespace (hosts.go); at is where the next probe runs (nil: the
	// home place) and hops counts the moves there; rebootedHosts are the
	// hosts the phase rebooted, rebootHost the one a probe asked for.
	quarantines   int
	at            *workkit.Place
	hops          int
	rebootedHosts map[*sim.Host]bool
	rebootHost    *sim.Host
}

// startLiveness kills every helper and descendant left, stops faults,
// repairs the slot, and launches the probe.
func (aw *admissionWorld) startLiveness() {
	w := aw.world
	w.StopFaults()
	aw.liveness = &admissionLiveness{aw: aw, startStep: w.Step()}
	for _, p := range append([]*sim.Proc(nil), w.Procs()...) {
		if p.Alive() {
			w.Crash(p)
		}
	}
	aw.loose.Restore(w)
	aw.returnSwappedRecord(true)
	if aw.corrupted {
		aw.repair(true)
	}
	w.Tracef("admission-liveness start")
	aw.liveness.launch()
}

func (l *admissionLiveness) exited(p *sim.Proc) {
	if p != l.probe || l.done || l.aw.failure != nil {
		return
	}
	l.probe = nil
	if l.wantReboot {
		l.wantReboot = false
		if l.rebootedHosts == nil {
			l.rebootedHosts = map[*sim.Host]bool{}
		}
		l.rebootedHosts[l.rebootHost] = true
		l.aw.world.Probe("admission-liveness-reboot")
		l.aw.world.PowerLoss(l.rebootHost)
	}
	l.launch()
}

func (l *admissionLiveness) launch() {
	place := l.aw.places.Home()
	if l.at != nil {
		place = *l.at
	}
	probe, err := l.aw.spawnAt(place, "probe", l.body)
	if err != nil {
		l.aw.fail(fmt.Errorf("liveness: spawn probe: %v", err), true)
		return
	}
	l.probe = probe
}

// body acquires until Acquired, waiting out live-thread zombies and a
// pending repair; an indeterminate slot asks for one operator reboot.
func (l *admissionLiveness) body(p *sim.Proc) {
	aw := l.aw
	cfg := aw.config(p)
	for try := 0; try < admissionProbeTries; try++ {
		a, kind, known := aw.acquireRecorded(p, cfg)
		others := aw.AliveCount() - 1 // every tracked live process but the probe
		l.rebooted = l.rebootedHosts[p.Host()]
		if kind != models.AdmissionAcquired && l.rehost(p) {
			return // a mutation claim of another host or namespace: probe from there
		}
		switch {
		case !known, kind == models.AdmissionContention:
		case kind == models.AdmissionAcquired:
			aw.world.Probe("admission-liveness-acquired")
			l.done = true
			aw.release(p, &handle{a: a})
			return
		case kind == models.AdmissionActive && others > 0:
			aw.world.Probe("admission-liveness-waits-zombie")
		case kind == models.AdmissionIndeterminate && aw.quarantineElsewhere(p):
			return // an operator moved a record of another host or namespace; probe again
		case kind == models.AdmissionIndeterminate && !l.rebooted:
			l.wantReboot, l.rebootHost = true, p.Host()
			return
		case kind == models.AdmissionCorrupt && aw.corrupted:
		default:
			// The models describe operations for porcupine's HTML page; a failure message is text.
			answer := html.UnescapeString(models.DescribeAdmissionOperation(models.AdmissionAcquire{Proc: p.ID(), Host: "host0"},
				models.AdmissionAcquireResult{Kind: kind}))
			aw.fail(fmt.Errorf("liveness: with every process dead and faults off (rebooted %t), the probe's acquire "+
				"answered %s", l.rebooted, answer), true)
			return
		}
		_ = p.Clock().Sleep(context.Background(), 2*time.Millisecond)
	}
	aw.fail(fmt.Errorf("liveness: the probe did not acquire in %d attempts", admissionProbeTries), true)
}
