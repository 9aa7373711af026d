package lockwork

import (
	"errors"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
)

// History operation names.
const (
	opAcquire = "acquire"
	opRelease = "release"
	opDeath   = "death"
)

// Recorder records a lock's history (Acquire and Release wrap the Lock's
// calls in sim.Proc Begin/End with models' outputs; deaths are recorded as
// models.ProcessDeath events) and keeps the ground truth beside it: who
// provably holds the lock. An answer that contradicts the ground truth is a
// finding, reported by the run's invariants at the end of the step, named
// after the hazard that explains it.
type Recorder struct {
	spec     Spec
	world    *sim.World
	disk     *sim.Volume
	rounds   int
	clients  int
	respawns int
	// holders are the live processes whose acquire answered acquired and
	// that have not begun a release.
	holders map[*sim.Proc]holding
	// inFlight are the acquires and releases under way, by process; an
	// acquire's entry says whether a possible owner existed while it ran.
	inFlight map[*sim.Proc]*flight
	// uncertain are live processes that may hold the lock: their last
	// acquire or release had an unknown outcome.
	uncertain map[*sim.Proc]bool
	// deadHelds counts, per process, its held answers in a row while no
	// live process held or could have been taking the lock.
	deadHelds map[*sim.Proc]int
	// zombies are exited processes whose other threads still run: alive
	// until reaped.
	zombies map[*simproc.Proc]*sim.Proc
	// dead are holders that died holding (or acquiring), latest last.
	dead []holding
	// epochs: the highest epoch an acquire returned, for an acquire that
	// begins afterwards to beat.
	epochSeen uint64
	findings  map[string]error
	// restarts is the run's count of server restarts (server.go); server
	// is the server's process, not a client, and lastRestart the time of
	// its latest restart (restarted: there was one).
	restarts    int
	server      *sim.Proc
	lastRestart int64
	restarted   bool
}

type holding struct {
	proc       *sim.Proc
	table      simproc.Proc // the process-table entry at acquire time
	since      int64
	wallOffset int64
	clockSteps int // the host's wall-clock steps at acquire time
}

type flight struct {
	op          string
	sawOwner    bool
	epochAtCall uint64
	// observedAtCall is the caller's sim.Observed().Calls when the call
	// began: later observations are the call's own.
	observedAtCall int
	// record is the holder's PID in the lock's record (Spec.Record) when
	// the call began.
	record evidence
}

// evidence is a holder's PID as the lock knows it: the PID it checked
// during a call, or the one its record holds.
type evidence struct {
	pid int
	// source says where the PID comes from, for messages; "" means the
	// lock gave none.
	source string
	// check is the lock's liveness check of pid, when it made one.
	check   sim.Inspected
	checked bool
}

// deadHeldsMax is how many held answers in a row, with no live possible
// owner, make a dead holder's lock stuck: a lock may take an attempt or two
// to clean up after a holder that died mid-call, not forever.
const deadHeldsMax = 3

// Finding class names, beside "two holders (<hazard>)".
const (
	findingTwoHolders = "two holders"
	findingDeadHolder = "held by a dead holder"
	findingEpoch      = "epoch went back"
)

func newRecorder(spec Spec, params campaign.Params, w *sim.World) *Recorder {
	return &Recorder{spec: spec, world: w, rounds: params[ParamRounds], clients: params[ParamProcesses],
		respawns: params[ParamRespawns], restarts: params[ParamServerRestarts], holders: map[*sim.Proc]holding{}, inFlight: map[*sim.Proc]*flight{},
		uncertain: map[*sim.Proc]bool{}, zombies: map[*simproc.Proc]*sim.Proc{}, deadHelds: map[*sim.Proc]int{}, findings: map[string]error{}}
}

// findingNames lists every class the recorder can report, in check order:
// one invariant each, so the class names the hazard.
func (r *Recorder) findingNames() []string {
	names := []string{}
	for _, h := range r.spec.Hazards {
		names = append(names, findingTwoHolders+" ("+h.Name+")")
	}
	return append(names, findingTwoHolders+" ("+hazardServerRestart+")", findingTwoHolders+" ("+hazardLivenessFailed+")", findingTwoHolders+" (clock step)",
		findingTwoHolders+" (paused holder)", findingTwoHolders,
		findingDeadHolder+" (PID reuse)", findingDeadHolder+" (zombie)", findingDeadHolder, findingEpoch)
}

func (r *Recorder) setup() error {
	w := r.world
	disk := w.AddVolume("disk")
	r.disk = disk
	disk.FS().MkdirAll(r.spec.Dir, 0o700, clientUID)
	host := w.AddHost(sim.HostSpec{Name: "alpha", PIDMax: 24, Volume: disk})
	for i := range r.clients {
		if _, err := w.Spawn(host, sim.ProcSpec{Name: fmt.Sprintf("client-%d", i), UID: clientUID}, r.client); err != nil {
			return err
		}
	}
	for _, name := range r.findingNames() {
		w.Invariant(name, func() error { return r.findings[name] })
	}
	w.OnExit(func(p *sim.Proc, reason sim.ExitReason) {
		if p != r.server {
			r.exited(host, p, reason)
		}
	})
	w.OnReap(func(_ *sim.Host, proc *simproc.Proc) { r.reaped(proc) })
	if err := r.startServer(); err != nil {
		return err
	}
	if r.spec.Setup != nil {
		r.spec.Setup(w)
	}
	return nil
}

// exited records the death (a zombie whose other threads still run dies
// when it is reaped) and respawns a crashed client.
func (r *Recorder) exited(host *sim.Host, p *sim.Proc, reason sim.ExitReason) {
	_, cutShort := r.inFlight[p] // an acquire or release: p may hold the lock
	delete(r.inFlight, p)
	if t := p.Table(); t.State == simproc.Zombie && t.Threads > 1 && !r.spec.DescriptorLocks {
		r.zombies[t] = p
		if cutShort { // alive until reaped, and it may hold the lock
			r.uncertain[p] = true
		}
	} else {
		if cutShort {
			r.dead = append(r.dead, holding{proc: p, table: *p.Table()})
		}
		r.died(p)
	}
	if reason != sim.ExitFinished && r.respawns > 0 {
		r.respawns--
		if _, err := r.world.Spawn(host, sim.ProcSpec{Name: p.Name() + "'", UID: clientUID}, r.client); err != nil {
			r.world.Probe("respawn-failed")
		}
	}
}

// died records p's death: from now on it holds nothing.
func (r *Recorder) died(p *sim.Proc) {
	r.world.RecordEvent(opDeath, models.ProcessDeath{Proc: p.Lane()})
	if h, ok := r.holders[p]; ok {
		r.dead = append(r.dead, h)
		delete(r.holders, p)
	}
	delete(r.uncertain, p)
}

// reaped records the death of a zombie that kept threads running.
func (r *Recorder) reaped(proc *simproc.Proc) {
	if p := r.zombies[proc]; p != nil {
		delete(r.zombies, proc)
		r.died(p)
	}
}

// Acquire makes one TryLock on p's behalf, records it, and returns its
// answer: LockAcquired when p holds the lock now, 0 when the outcome is
// unknown.
func (r *Recorder) Acquire(p *sim.Proc, lock Lock) models.LockAcquireKind {
	f := &flight{op: opAcquire, sawOwner: r.possibleOwner(p), epochAtCall: r.epochSeen, observedAtCall: p.Observed().Calls,
		record: r.readRecord()}
	r.markOwnersSeen(p)
	r.inFlight[p] = f
	handle := p.Begin(opAcquire, nil)
	ok, epoch, err := lock.TryLock()
	delete(r.inFlight, p)
	switch {
	case err != nil && errors.Is(err, ErrRefused):
		p.End(handle, models.LockAcquireResult{Kind: models.LockRefused})
		return models.LockRefused
	case err != nil: // unknown: the lock may be held by p now
		p.End(handle, models.Unknown{})
		r.uncertain[p] = true
		return 0
	case !ok:
		p.End(handle, models.LockAcquireResult{Kind: models.LockHeld})
		r.world.Probe(ProbeContended)
		if f.sawOwner || !r.spec.Rules.DeadHolderFree {
			r.deadHelds[p] = 0
		} else if r.deadHelds[p]++; r.deadHelds[p] == deadHeldsMax {
			r.heldByDead(p, f)
		}
		return models.LockHeld
	}
	delete(r.deadHelds, p)
	p.End(handle, models.LockAcquireResult{Kind: models.LockAcquired, Epoch: epoch})
	r.world.Probe(ProbeAcquired)
	r.acquired(p, epoch, f)
	return models.LockAcquired
}

// Release makes one Unlock on p's behalf, records it, and reports whether
// its outcome is known (released, or not the owner).
func (r *Recorder) Release(p *sim.Proc, lock Lock) bool {
	delete(r.holders, p) // from the call on, p may have released
	r.inFlight[p] = &flight{op: opRelease}
	handle := p.Begin(opRelease, nil)
	err := lock.Unlock()
	delete(r.inFlight, p)
	switch {
	case err == nil:
		p.End(handle, models.LockReleaseResult{Released: true})
		r.world.Probe(ProbeReleased)
	case errors.Is(err, ErrNotOwner):
		p.End(handle, models.LockReleaseResult{Released: false})
	default:
		p.End(handle, models.Unknown{})
		r.uncertain[p] = true
		return false
	}
	delete(r.uncertain, p)
	return true
}

// possibleOwner reports whether a live process other than p holds, or
// may be taking or releasing, the lock; or whether p itself may hold it
// (an earlier acquire of p's had an unknown outcome).
func (r *Recorder) possibleOwner(p *sim.Proc) bool {
	if r.uncertain[p] {
		return true
	}
	for q := range r.holders {
		if q != p {
			return true
		}
	}
	for q := range r.inFlight {
		if q != p {
			return true
		}
	}
	for q := range r.uncertain {
		if q != p {
			return true
		}
	}
	return false
}

// markOwnersSeen tells every acquire in flight that p may become an owner.
func (r *Recorder) markOwnersSeen(p *sim.Proc) {
	for q, f := range r.inFlight {
		if q != p {
			f.sawOwner = true
		}
	}
}

func (r *Recorder) acquired(p *sim.Proc, epoch uint64, f *flight) {
	host := p.Host()
	if epoch != 0 && epoch <= f.epochAtCall {
		r.fail(findingEpoch, fmt.Errorf("%s acquired with epoch %d, not above epoch %d handed out before its call", p.Name(), epoch, f.epochAtCall))
	}
	r.epochSeen = max(r.epochSeen, epoch)
	for q, h := range r.holders {
		if q == p {
			continue
		}
		class, why := r.twoHolderClass(h, p, f)
		r.fail(class, fmt.Errorf("%s acquired the lock at %v while %s (pid %d) holds it since %v%s",
			p.Name(), time.Duration(r.world.Now()), q.Name(), h.table.PID, time.Duration(h.since), why))
	}
	r.holders[p] = holding{proc: p, table: *p.Table(), since: r.world.Now(), wallOffset: wallOffset(host, r.world),
		clockSteps: host.ClockSteps()}
}

func wallOffset(h *sim.Host, w *sim.World) int64 { return h.Wall().UnixNano() - w.Now() }

// hazardLivenessFailed names a newcomer that checked the live holder's PID,
// got an error, and took the holder for gone.
const hazardLivenessFailed = "liveness check failed (EACCES or ESRCH)"

// twoHolderClass names the hazard that let newcomer in while h holds, from
// what the lock observed during newcomer's acquire f, and says why. A
// built-in hazard is named only when the lock saw it: a server restart
// when the lock lives in descriptors and the server restarted after the
// holder took it, a clock step when the newcomer's or the holder's
// process read the wall clock after it, a failed liveness check when the
// newcomer's own check of the holder's PID answered unknown (EACCES) or
// absent (ESRCH).
func (r *Recorder) twoHolderClass(h holding, newcomer *sim.Proc, f *flight) (class, why string) {
	evidence := r.twoHolderEvidence(newcomer, f, h.table.PID)
	for _, hazard := range r.spec.Hazards {
		if hazard.Caused(h.proc, newcomer) {
			return findingTwoHolders + " (" + hazard.Name + ")", evidence
		}
	}
	check, checked := newcomer.Inspection(h.table.PID)
	switch {
	case r.spec.DescriptorLocks && r.restartedSince(h.since):
		return findingTwoHolders + " (" + hazardServerRestart + ")", evidence
	case checked && check.Call > f.observedAtCall && check.Kind != lease.InspectLive:
		return findingTwoHolders + " (" + hazardLivenessFailed + ")",
			fmt.Sprintf("; %s's check of pid %d answered %s", newcomer.Name(), h.table.PID, inspectionAnswer(check))
	case wallOffset(h.proc.Host(), r.world) != h.wallOffset && (r.readSteppedClock(newcomer, h) || r.readSteppedClock(h.proc, h)):
		return findingTwoHolders + " (clock step)", evidence
	case time.Duration(r.world.Now()-h.since) >= r.spec.PausedAfter:
		return findingTwoHolders + " (paused holder)", evidence
	}
	return findingTwoHolders, evidence
}

// readSteppedClock reports whether q read its wall clock (Clock().Now)
// after a step of h's host clock that came after h acquired.
func (r *Recorder) readSteppedClock(q *sim.Proc, h holding) bool {
	seen := q.Observed()
	return q.Host() == h.proc.Host() && seen.WallReads > 0 && seen.WallStepsSeen > h.clockSteps
}

// holderEvidence is the holder's PID as the lock knew it in acquire f of
// p: the last PID p checked during f, else the PID the lock's record held
// as f began.
func (r *Recorder) holderEvidence(p *sim.Proc, f *flight) evidence {
	if last := p.Observed().LastInspection; last.Call > f.observedAtCall {
		return evidence{pid: last.PID, source: "the PID the lock checked", check: last, checked: true}
	}
	return f.record
}

// readRecord reads the holder's PID from the lock's record (Spec.Record).
func (r *Recorder) readRecord() evidence {
	if r.spec.Record == nil {
		return evidence{}
	}
	if pid, ok := r.spec.Record(r.disk.Root()); ok {
		return evidence{pid: pid, source: "the PID the lock's record holds"}
	}
	return evidence{}
}

// twoHolderEvidence says which PID the lock knew as the holder during
// newcomer's acquire when that is not the holder's: the lock's own record
// of its holder disagrees with the harness's.
func (r *Recorder) twoHolderEvidence(newcomer *sim.Proc, f *flight, holderPID int) string {
	ev := r.holderEvidence(newcomer, f)
	switch {
	case ev.source == "" || ev.pid == holderPID:
		return ""
	case ev.checked:
		return fmt.Sprintf("; the lock's record names pid %d (%s's check answered %s)", ev.pid, newcomer.Name(), inspectionAnswer(ev.check))
	}
	return fmt.Sprintf("; the lock's record names pid %d as %s's acquire began", ev.pid, newcomer.Name())
}

// inspectionAnswer renders a liveness check's answer: "live", "absent
// (ESRCH)", "unknown (EACCES on ...)".
func inspectionAnswer(in sim.Inspected) string {
	switch in.Kind {
	case lease.InspectAbsent:
		return "absent (ESRCH)"
	case lease.InspectUnknown:
		return "unknown (" + in.Diagnostic + ")"
	}
	return in.Kind.String()
}

// heldByDead reports a held answer although no live process held, or
// could have been taking, the lock while the acquire ran. The dead holder
// named is the one on the PID the lock knows as its holder (the PID it
// checked during acquire f, else the PID its record holds, Spec.Record),
// when it knows one; the last holder to die is named too when it is
// another.
func (r *Recorder) heldByDead(p *sim.Proc, f *flight) {
	class, detail := findingDeadHolder, "no process holds it"
	ev := r.holderEvidence(p, f)
	if ev.source == "" && r.spec.Record != nil {
		ev = r.readRecord() // the record as the finding is made
	}
	d, found := r.deadHolder(p, ev)
	switch {
	case found:
		detail = fmt.Sprintf("its holder %s (pid %d) is dead", d.proc.Name(), d.table.PID)
		if ev.source != "" {
			detail = fmt.Sprintf("its holder %s (pid %d, %s) is dead", d.proc.Name(), d.table.PID, ev.source)
		}
		if latest := r.dead[len(r.dead)-1]; latest.proc != d.proc {
			detail += fmt.Sprintf(", as is the last holder to die, %s (pid %d),", latest.proc.Name(), latest.table.PID)
		}
		if ev.checked {
			class, detail = deadHolderHazard(ev.check, d, detail)
		}
	case len(r.dead) > 0:
		latest := r.dead[len(r.dead)-1]
		detail = fmt.Sprintf("%s is pid %d, no holder's, and the last holder to die was %s (pid %d)",
			ev.source, ev.pid, latest.proc.Name(), latest.table.PID)
		if ev.checked {
			detail += fmt.Sprintf("; the lock's check of pid %d answered %s", ev.pid, inspectionAnswer(ev.check))
		}
	}
	r.fail(class, fmt.Errorf("%s was told the lock is held %d times in a row, but %s", p.Name(), deadHeldsMax, detail))
}

// deadHolderHazard names what the lock's check of dead holder d's PID
// found: PID reuse when it answered live for another process, a zombie
// when it answered live for d's unreaped zombie, else nothing.
func deadHolderHazard(check sim.Inspected, d holding, detail string) (class, more string) {
	switch {
	case check.Kind != lease.InspectLive || !check.Found:
		return findingDeadHolder, detail
	case !sameIncarnation(check.Entry, d.table):
		return findingDeadHolder + " (PID reuse)", detail + fmt.Sprintf(" and the lock's check found another process on pid %d", d.table.PID)
	case check.Entry.State == simproc.Zombie:
		return findingDeadHolder + " (zombie)", detail + " and the lock's check found it alive, an unreaped zombie"
	}
	return findingDeadHolder, detail
}

// deadHolder is the dead holder the lock's evidence points at (the latest
// to die on that PID in p's namespace), or, when the lock gave none, the
// latest to die.
func (r *Recorder) deadHolder(p *sim.Proc, ev evidence) (holding, bool) {
	for i := len(r.dead) - 1; i >= 0; i-- {
		d := r.dead[i]
		if ev.source == "" || d.table.PID == ev.pid && d.table.NS == p.Table().NS && d.proc.Host() == p.Host() {
			return d, true
		}
	}
	return holding{}, false
}

// sameIncarnation reports whether two process-table entries are one
// process: the same PID, start tick and boot.
func sameIncarnation(a, b simproc.Proc) bool {
	return a.PID == b.PID && a.StartTicks == b.StartTicks && a.Boot == b.Boot
}

// fail records the first finding of a class; the class's invariant reports
// it at the end of the step.
func (r *Recorder) fail(class string, err error) {
	if r.findings[class] == nil {
		r.findings[class] = err
	}
}

// clientUID is the uid of every client process, and the owner of Spec.Dir.
const clientUID = 1000
