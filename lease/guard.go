package lease

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
)

// The lifecycle guard is a create-only file naming the process that may
// change receiver.lock, the epoch file and the leftovers. Reclaim intents
// (lifecycle-reclaims/reclaim.<id>.json) announce that a process is about to
// move a stale guard into quarantine.
//
// The protocol, and why each step is there:
//
//  1. Pre-scan: wait until no live reclaim intent exists (stale intents are
//     removed), then create the guard (create-only).
//  2. Post-scan: scan the intents again WHILE holding the guard. A reclaimer
//     writes its intent BEFORE it reads the guard it judges stale, so a
//     reclaimer that may still move a guard created after that read is
//     always visible here. While a live intent exists the holder waits,
//     keeping its guard, and never runs its operation.
//  3. Verify: once the scan is clear, re-read the guard. If it is no longer
//     this call's (a reclaimer moved it while we waited), the call starts
//     over and never touches the guard path again. After a clear scan and a
//     successful verify, no reclaimer can move the guard: any later reclaimer
//     reads this live guard after writing its intent and waits.
//  4. Run the operation, then remove the guard after checking it is still
//     this call's.
//
// A reclaimer re-reads the stale guard, renames it into quarantine, and
// checks that the quarantined bytes are the stale record it judged. If a
// racing reclaimer had already replaced it and a new guard had appeared,
// the reclaimer renames that guard back (no-replace); its holder is waiting
// in step 2 and, if the restore fails, finds it gone in step 3.

// newGuard returns a fresh guard (or intent) record for the current process.
func (m *Manager) newGuard(current ProcessIdentity) guardRecord {
	current.Executable = fspath.Clean(current.Executable)
	return guardRecord{
		Schema:     GuardSchema,
		Generation: m.ids.NewID(),
		Identity:   current,
		CreatedAt:  formatTimestamp(m.clock.Now()),
	}
}

// guardRead is one read of a guard or intent file.
type guardRead struct {
	present bool
	// corrupt is the diagnostic when the file is present but invalid.
	corrupt string
	guard   guardRecord
	data    []byte
}

// readGuardFile reads and parses a guard or intent; record names which.
// A file of another uid than uid is corrupt: never judged, never moved.
func (m *Manager) readGuardFile(file, record string, uid uint32) (guardRead, error) {
	data, err := statefile.ReadOwnedFile(m.fs, file, guardBytesMax, uid)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist), statefile.IsError[*statefile.ChangedError](err):
			// Gone or swapped while reading: the caller re-reads.
			return guardRead{}, nil
		case statefile.IsError[*statefile.NotRegularError](err), statefile.IsError[*statefile.TooLargeError](err),
			statefile.IsError[*statefile.ForeignOwnerError](err):
			return guardRead{present: true, corrupt: err.Error()}, nil
		}
		return guardRead{}, fmt.Errorf("lease: reading %s: %w", record, err)
	}
	g, err := m.parseGuardCached(data, record)
	if err != nil {
		return guardRead{present: true, corrupt: fmt.Sprintf("%s: %v", file, err), data: data}, nil
	}
	return guardRead{present: true, guard: g, data: data}, nil
}

func busy(diagnostic string) Refusal {
	return Refusal{Reason: RefusalLifecycleBusy, Diagnostic: diagnostic + "; no owner was displaced"}
}

func unverifiable(diagnostic string, human HumanState) Refusal {
	return Refusal{Reason: RefusalLifecycleUnverifiable, Diagnostic: diagnostic, Human: human}
}

// verdictRefusal turns a remote or unknown verdict on a guard or intent
// into the lifecycle-unverifiable refusal.
func verdictRefusal(state OwnerState, what, file string, g guardRecord, current ProcessIdentity) Refusal {
	human := humanFor(state, g.Identity, g.legacy(), current)
	if state.Kind == OwnerRemote {
		return unverifiable(remoteAdvice(what, file, g.Identity), human)
	}
	return unverifiable(fmt.Sprintf("%s %s: %s", what, file, state.Reason), human)
}

// nextAttempt counts one guard attempt against the call's bound.
func (m *Manager) nextAttempt(c *call) (Refusal, error) {
	if err := c.ctx.Err(); err != nil {
		return Refusal{}, err
	}
	c.attempts++
	if c.attempts > m.attemptsMax() {
		return busy(fmt.Sprintf("gave up after %d lifecycle guard attempts", m.attemptsMax())), nil
	}
	return Refusal{}, nil
}

// withGuard runs op while holding the lifecycle guard. A non-zero Refusal
// means op did not run. The error is op's (returned as is when the guard
// release succeeds) or an unexpected I/O failure.
func (m *Manager) withGuard(c *call, op func() error) (Refusal, error) {
	for {
		if refusal, err := m.nextAttempt(c); err != nil || !refusal.IsZero() {
			return refusal, err
		}
		refusal, clear, err := m.scanIntents(c)
		if err == nil && (!clear || !refusal.IsZero()) {
			err = m.syncBeforeActing(c)
		}
		if err != nil || !refusal.IsZero() {
			return refusal, err
		}
		if !clear {
			if refusal, err := m.waitOrBusy(c, "a lifecycle reclaim is active"); err != nil || !refusal.IsZero() {
				return refusal, err
			}
			continue
		}
		guard := m.newGuard(c.current)
		published, err := statefile.CreateOnlyPublished(m.fs, m.ids, m.guardPath(), m.tempTag(c.current), m.encodeGuard(guard))
		if errors.Is(err, fs.ErrExist) {
			if refusal, err := m.contendGuard(c); err != nil || !refusal.IsZero() {
				return refusal, err
			}
			continue
		}
		if err != nil && !published {
			// Nothing was published: whatever is at the guard path is
			// another process's, and must not even be moved.
			return Refusal{}, fmt.Errorf("lease: creating the lifecycle guard: %w", err)
		}
		if err != nil {
			// The guard was published though a later step (the namespace
			// fsync) failed: give back one that is ours, or this live
			// process blocks every later call until it exits.
			return Refusal{}, statefile.JoinErrors(fmt.Errorf("lease: creating the lifecycle guard: %w", err),
				m.abandonIfOurs(c, guard))
		}
		held, refusal, err := m.settleGuard(c, guard)
		if err != nil || !refusal.IsZero() {
			return refusal, err
		}
		if !held {
			continue
		}
		opErr := op()
		return Refusal{}, statefile.JoinErrors(opErr, m.removeGuard(guard))
	}
}

// waitOrBusy pauses one poll, or refuses busy when the deadline has passed.
func (m *Manager) waitOrBusy(c *call, what string) (Refusal, error) {
	if m.expired(c) {
		return busy(fmt.Sprintf("receiver lifecycle operation is busy (%s) for the whole %v wait", what, m.guardWait)), nil
	}
	return Refusal{}, m.pause(c)
}

// settleGuard runs steps 2 and 3 for a guard this call just created:
// held reports that the scan is clear and the guard is still this call's.
// On a refusal or error the guard has been removed (if still this call's).
func (m *Manager) settleGuard(c *call, guard guardRecord) (held bool, refusal Refusal, err error) {
	for {
		refusal, clear, err := m.scanIntents(c)
		if err != nil || !refusal.IsZero() {
			return false, refusal, statefile.JoinErrors(err, m.abandonGuard(guard))
		}
		if clear {
			read, unsettled, err := m.readOwnGuard(c)
			if err != nil || unsettled {
				// Our guard may still be there: give it back (and start
				// over), or this live process blocks every later call
				// until it exits.
				return false, Refusal{}, statefile.JoinErrors(err, m.abandonGuard(guard))
			}
			// Not ours any more: a reclaimer moved it while we waited.
			// Leave the path alone; start over.
			return read.present && read.corrupt == "" && read.guard == guard, Refusal{}, nil
		}
		refusal, err = m.nextAttempt(c)
		if err == nil && refusal.IsZero() {
			refusal, err = m.waitOrBusy(c, "a lifecycle reclaim is active")
		}
		if err != nil || !refusal.IsZero() {
			return false, refusal, statefile.JoinErrors(err, m.abandonGuard(guard))
		}
	}
}

// readOwnGuard reads the guard this call just created. readGuardFile
// reads a guard swapped for another inode during the read (a co-tenant's
// copy) as absent, for the caller to re-read: read as "moved away", our
// own guard would stay behind while we start over and then wait for it
// as for any live holder's, and after the wait it would block every later
// call until this process exits (the simulator's "a failed call leaves
// nothing behind" oracle checks it). So an absent guard is read
// again, a bounded number of times; unsettled says the name still held a
// file after the last read, for the caller to give its guard back.
func (m *Manager) readOwnGuard(c *call) (read guardRead, unsettled bool, err error) {
	for i := 0; i < guardRereadsMax; i++ {
		read, err = m.readGuardFile(m.guardPath(), "receiver lifecycle guard", c.uid)
		if err != nil || read.present {
			return read, false, err
		}
		if _, statErr := m.fs.Lstat(m.guardPath()); errors.Is(statErr, fs.ErrNotExist) {
			return read, false, nil // gone: moved by a reclaimer
		}
	}
	return read, true, nil
}

// guardRereadsMax bounds readOwnGuard's reads of a guard that keeps
// changing under it.
const guardRereadsMax = 3

// abandonIfOurs gives back the guard at the guard path only if it is this
// call's (its generation is fresh): after a failed create the name may as
// well hold another holder's guard, which must not even be moved.
// A name that keeps changing under the reads (unsettled) is most likely
// our guard swapped for copies; abandonGuard's rename-and-verify puts back
// whatever is not ours.
func (m *Manager) abandonIfOurs(c *call, guard guardRecord) error {
	read, unsettled, err := m.readOwnGuard(c)
	if err != nil {
		// The guard this call published may still be at its path; only
		// the caller can know, so the error names it: while it stays, this
		// live process holds the guard and later calls wait for it.
		m.stranded.Store(&guard)
		return fmt.Errorf("lease: the lifecycle guard %s that this call created may still be there "+
			"(this Manager's next call gives it back): %w", m.guardPath(), err)
	}
	if !unsettled && (!read.present || read.corrupt != "" || read.guard != guard) {
		return nil
	}
	return m.abandonGuard(guard)
}

// abandonGuard removes this call's guard when giving up before the
// operation ran; a guard that is no longer this call's is left alone (put
// back where it was).
func (m *Manager) abandonGuard(guard guardRecord) error {
	_, err := m.releaseGuardFile(guard, true)
	if err != nil {
		m.stranded.Store(&guard)
	}
	return err
}

// removeGuard releases the guard after the operation ran. Finding it gone
// or replaced is a GuardLostError: the protocol never does that to a holder
// that passed step 3.
//
// The guard's removal needs no fsync of the namespace, and the operation
// needs none from it: every step of an operation that must survive a power
// loss fsyncs its own directories before the call reports it (the release's
// rename, a reclaim's move into quarantine, the owner's publication). Lost
// at a power loss, the guard comes back naming a process that died with
// that power loss (a stale guard, reclaimed), or its private release name
// comes back as a leftover that cleanup removes; so does a released
// directory whose removal was lost. A volume shared between hosts keeps
// its changes through one host's power loss.
func (m *Manager) removeGuard(guard guardRecord) error {
	lost, err := m.releaseGuardFile(guard, false)
	if err != nil {
		m.stranded.Store(&guard)
		return err
	}
	if lost != "" {
		return &GuardLostError{Path: m.guardPath(), Why: lost}
	}
	return nil
}

// releaseGuardFile releases the guard as Release releases receiver.lock:
// rename it to a private name, check that what moved is this call's guard,
// and only then remove it. Reading, comparing and removing by path would
// delete a guard planted at that name between the read and the remove.
// What moved but is not this call's guard is put back; if the name is taken
// again meanwhile, or if it is corrupt (no process's guard), it goes into
// quarantine/ as evidence. lost says what was found instead of this call's
// guard ("" when it was released).
//
// The private name carries the guard's generation (a fresh UUID, so the
// name is unique); a crash before the removal leaves it for leftover
// cleanup, which removes it once its writer is provably gone. syncAfter
// says whether the namespace is fsynced after the removal: a guard given
// back before its operation ran is, so that no later call waits for it.
func (m *Manager) releaseGuardFile(guard guardRecord, syncAfter bool) (lost string, err error) {
	private := m.releasedGuardPath(guard.Generation)
	if err := m.renameNoReplace(m.guardPath(), private); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "the guard file is gone", nil
		}
		return "", fmt.Errorf("lease: releasing the lifecycle guard: %w", err)
	}
	read, err := m.readGuardFile(private, "receiver lifecycle guard", uint32(guard.Identity.UID))
	if err != nil {
		// What moved cannot be told from another process's guard: put it
		// back, so that a holder's guard never stays off its path. If it
		// is this call's, the caller keeps it as stranded and gives it
		// back later.
		return "", m.putBackUnread(private, err)
	}
	switch {
	case !read.present:
		return "the guard file is gone", nil
	case read.corrupt == "" && read.guard == guard:
		if err := m.fs.Remove(private); err != nil {
			return "", fmt.Errorf("lease: removing the released lifecycle guard: %w", err)
		}
		if !syncAfter {
			return "", nil
		}
		return "", statefile.SyncDir(m.fs, m.namespace)
	case read.corrupt != "":
		// What was written over this call's guard is nobody's guard:
		// no process can hold it, so putting it back would only block the
		// namespace. It is kept in quarantine/ as evidence.
		return m.keepDisplacedGuard(private, "the guard file is now corrupt: "+read.corrupt)
	}
	return m.restoreGuard(private, "the guard now has generation "+read.guard.Generation)
}

// putBackUnread renames a guard releaseGuardFile moved but could not read
// (readErr) back to the guard path, and returns readErr naming where the
// guard is. If the name was taken again meanwhile, the moved file stays at
// its private name.
func (m *Manager) putBackUnread(private string, readErr error) error {
	err := m.fs.RenameNoReplace(private, m.guardPath())
	switch {
	case err == nil:
		return statefile.JoinErrors(fmt.Errorf("lease: the lifecycle guard could not be read once moved, "+
			"and was put back at %s: %w", m.guardPath(), readErr), statefile.SyncDir(m.fs, m.namespace))
	case errors.Is(err, fs.ErrNotExist):
		return readErr
	}
	return fmt.Errorf("lease: the lifecycle guard could not be read once moved, nor put back at %s; it stays at %s: %w",
		m.guardPath(), private, statefile.JoinErrors(readErr, err))
}

// restoreGuard puts back another process's guard that releaseGuardFile
// moved; if the name was taken again meanwhile, the moved guard is kept in
// quarantine/ instead.
func (m *Manager) restoreGuard(private, lost string) (string, error) {
	err := m.fs.RenameNoReplace(private, m.guardPath())
	switch {
	case err == nil:
		return lost, statefile.SyncDir(m.fs, m.namespace)
	case errors.Is(err, fs.ErrNotExist):
		return lost, nil
	case !errors.Is(err, fs.ErrExist):
		return lost, fmt.Errorf("lease: putting back a lifecycle guard released by mistake: %w", err)
	}
	return m.keepDisplacedGuard(private, lost+"; it could not be put back (the name was taken again)")
}

// keepDisplacedGuard moves a guard file that is not this call's from its
// private release name into quarantine/.
func (m *Manager) keepDisplacedGuard(private, lost string) (string, error) {
	target := m.quarantineEntry("lifecycle", "displaced", ".json")
	if err := m.moveToQuarantine(private, target); err != nil {
		return lost, fmt.Errorf("lease: keeping a displaced lifecycle guard: %w", err)
	}
	return lost + "; it is kept in " + target, nil
}

// releasedGuardPath is the private name of a guard being released.
func (m *Manager) releasedGuardPath(generation string) string {
	return m.namespace + "/" + guardReleasedPrefix + safePathPart(generation) + intentSuffix
}

// contendGuard handles a guard that exists: wait for a live one, reclaim a
// stale one, refuse a corrupt, remote or uninspectable one.
func (m *Manager) contendGuard(c *call) (Refusal, error) {
	read, err := m.readGuardFile(m.guardPath(), "receiver lifecycle guard", c.uid)
	if err != nil || !read.present {
		return Refusal{}, err
	}
	if err := m.syncBeforeActing(c); err != nil {
		return Refusal{}, err
	}
	if read.corrupt != "" {
		return unverifiable("lifecycle guard is corrupt: "+read.corrupt, HumanCorruptGuard), nil
	}
	if stranded := m.stranded.Load(); stranded != nil && *stranded == read.guard {
		return Refusal{}, m.giveBackStranded(stranded)
	}
	state := m.classify(read.guard.Identity, read.guard.legacy(), c.current)
	switch state.Kind {
	case OwnerStale:
		return m.reclaimGuard(c)
	case OwnerRemote, OwnerUnknown:
		return verdictRefusal(state, "lifecycle guard", m.guardPath(), read.guard, c.current), nil
	case OwnerLive:
		return m.waitOrBusy(c, fmt.Sprintf("guard held by live PID %d", read.guard.Identity.PID))
	}
	panic(fmt.Sprintf("lease: ClassifyRecord returned %v", state.Kind))
}

// giveBackStranded releases a guard an earlier call of this Manager
// published and could not give back. No operation runs under it (its call
// returned), so no one can hold it: waiting for it would wait for this
// process to exit. releaseGuardFile's rename-and-verify puts back whatever
// replaced it meanwhile.
func (m *Manager) giveBackStranded(stranded *guardRecord) error {
	if _, err := m.releaseGuardFile(*stranded, true); err != nil {
		return fmt.Errorf("lease: giving back the lifecycle guard an earlier call left: %w", err)
	}
	m.stranded.CompareAndSwap(stranded, nil)
	return nil
}

// reclaimGuard announces an intent, moves the stale guard into quarantine,
// and withdraws the intent. A zero Refusal means the caller may try to
// create the guard again.
func (m *Manager) reclaimGuard(c *call) (Refusal, error) {
	intentPath, err := m.announceIntent(c)
	if err != nil {
		return Refusal{}, err
	}
	refusal, err := m.reclaimGuardAnnounced(c)
	return refusal, statefile.JoinErrors(err, m.withdrawIntent(intentPath))
}

// announceIntent publishes a reclaim intent naming the calling process,
// before it reads a guard it may move: a guard created after that read is
// then held by a process that sees the intent in its post-scan and waits
// (or refuses), never running its operation while the guard may move.
func (m *Manager) announceIntent(c *call) (string, error) {
	intent := m.newGuard(c.current)
	intentPath := fspath.Join(m.reclaimsPath(), intentPrefix+safePathPart(intent.Generation)+intentSuffix)
	if err := statefile.CreateOnly(m.fs, m.ids, intentPath, m.tempTag(c.current), m.encodeGuard(intent)); err != nil {
		// As for the guard: an intent published before a failed fsync
		// would stall every guard holder while this process lives. Its
		// name carries this call's fresh generation, so it is ours.
		removeErr := m.fs.Remove(intentPath)
		if errors.Is(removeErr, fs.ErrNotExist) {
			removeErr = nil
		}
		return "", statefile.JoinErrors(fmt.Errorf("lease: writing a lifecycle reclaim intent: %w", err), removeErr)
	}
	return intentPath, nil
}

// withdrawIntent removes an intent announceIntent published.
func (m *Manager) withdrawIntent(intentPath string) error {
	err := m.fs.Remove(intentPath)
	if err == nil {
		err = statefile.SyncDir(m.fs, m.reclaimsPath())
	}
	return err
}

func (m *Manager) reclaimGuardAnnounced(c *call) (Refusal, error) {
	for {
		if refusal, err := m.nextAttempt(c); err != nil || !refusal.IsZero() {
			return refusal, err
		}
		read, err := m.readGuardFile(m.guardPath(), "receiver lifecycle guard", c.uid)
		if err != nil || !read.present {
			return Refusal{}, err
		}
		if read.corrupt != "" {
			return unverifiable("lifecycle guard is corrupt: "+read.corrupt, HumanCorruptGuard), nil
		}
		state := m.classify(read.guard.Identity, read.guard.legacy(), c.current)
		switch state.Kind {
		case OwnerStale:
			moved, err := m.quarantineGuard(c, read)
			if err != nil || moved {
				return Refusal{}, err
			}
		case OwnerRemote, OwnerUnknown:
			return verdictRefusal(state, "lifecycle guard", m.guardPath(), read.guard, c.current), nil
		case OwnerLive:
			// A live guard replaced the stale one. Withdraw the intent at
			// once and wait for the guard as anyone else would: a holder
			// waits (step 2) for our intent to go, so waiting here with the
			// intent in place would stall both until a deadline.
			return Refusal{}, nil
		}
	}
}

// quarantineGuard moves the stale guard seen in stale into quarantine and
// checks that the moved bytes are those. moved is false when the guard
// changed first (the caller re-reads).
func (m *Manager) quarantineGuard(c *call, stale guardRead) (moved bool, err error) {
	reread, err := m.readGuardFile(m.guardPath(), "receiver lifecycle guard", c.uid)
	if err != nil || !reread.present || !bytes.Equal(reread.data, stale.data) {
		return false, err
	}
	target := m.quarantineEntry("lifecycle", stale.guard.Generation, ".json")
	if err := m.moveToQuarantine(m.guardPath(), target); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("lease: moving the stale lifecycle guard into quarantine: %w", err)
	}
	quarantined, err := statefile.ReadFile(m.fs, target, guardBytesMax)
	if err != nil {
		return false, fmt.Errorf("lease: re-reading the quarantined lifecycle guard: %w", err)
	}
	if bytes.Equal(quarantined, stale.data) {
		return true, nil
	}
	if _, err := m.parseGuardCached(quarantined, "receiver lifecycle guard"); err != nil {
		// Garbage written over the stale guard in between is nobody's
		// guard: giving it back would only block the namespace again (and
		// after the one-shot repair of that garbage was made moot by this
		// very move). It stays in quarantine/ as evidence.
		return true, nil
	}
	// A racing reclaimer replaced the stale guard and a new holder appeared
	// in between: give the new guard back. Its holder is waiting for our
	// intent to go; if the restore fails, it finds its guard gone.
	if err := m.fs.RenameNoReplace(target, m.guardPath()); err == nil {
		err = statefile.SyncDir(m.fs, m.namespace)
		if err != nil {
			return false, err
		}
		return false, statefile.SyncDir(m.fs, m.quarantinePath())
	}
	return false, nil
}

// tempTag is the statefile.WriteTemp tag of guard and intent temp files:
// it names the writer (host, PID namespace, PID, start time) so that a
// leftover temp can be removed once its writer is provably gone. Hosts
// outside [A-Za-z0-9.-] are hex-encoded behind "_". The tag is "lg.anon"
// (never cleaned up) when the name would be too long for a file name.
func (m *Manager) tempTag(current ProcessIdentity) string {
	host := current.Hostname
	if !plainHost(host) {
		host = "_" + fmt.Sprintf("%x", host)
	}
	namespace := current.PIDNamespace
	if namespace == "" {
		namespace = "-"
	}
	tag := tempTagPrefix + namespace + "." + strconv.Itoa(current.PID) + "." + current.StartTime + "." + host
	if len(statefile.TempPrefix)+len(tag)+1+uuidLength > fileNameMax || strings.ContainsRune(current.StartTime, '.') {
		return "lg.anon"
	}
	return tag
}

const (
	tempTagPrefix = "lg."
	uuidLength    = 36
	fileNameMax   = 255
)

func plainHost(host string) bool {
	if host == "" {
		return false
	}
	for _, r := range host {
		if !(r == '.' || r == '-' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')) {
			return false
		}
	}
	return true
}
