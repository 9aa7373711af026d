package simfs

import (
	"syscall"

	"github.com/leasekit/leasekit/env"
)

// Advisory locks with Linux's semantics (fs/locks.c): flock(2) locks and
// OFD record locks owned by an open file description, POSIX record locks
// owned by the process (a view; threads share their process's view).
//
// simfs has no scheduler, so it cannot wait: a waiting request (LOCK_EX or
// LOCK_SH without LOCK_NB, F_SETLKW, F_OFD_SETLKW) that meets a conflict
// registers the wait (for F_SETLKW's deadlock detection) and fails with
// EAGAIN; the simulator turns that into a blocked process that retries
// until the lock is free or its wait budget runs out (CancelWait ends the
// wait). A crash of the FS (a power loss, or the restart of the server of a
// shared volume) loses every lock.

// lockTable is the FS's advisory lock state.
type lockTable struct {
	flocks  map[*inode][]flockHold
	records map[*inode][]recordLock
	// waits holds the POSIX request each waiting process is blocked on.
	waits map[*view]recordWait
	// pids are the processes' PIDs F_GETLK reports (SetPID).
	pids map[*view]int
	// count is the number of locks held, for Hash and LocksHeld.
	count int
}

type flockHold struct {
	desc      *file
	exclusive bool
}

// recordLock is one record lock over [start, end); end < 0 is "to the end
// of the file and beyond". A POSIX lock has proc set, an OFD lock desc.
type recordLock struct {
	proc       *view
	desc       *file
	write      bool
	start, end int64
}

type recordWait struct {
	node *inode
	want recordLock
}

// sameOwner reports whether two record locks have one owner.
func (a recordLock) sameOwner(b recordLock) bool { return a.proc == b.proc && a.desc == b.desc }

// overlaps reports whether the ranges of a and b share a byte.
func (a recordLock) overlaps(b recordLock) bool {
	return (a.end < 0 || b.start < a.end) && (b.end < 0 || a.start < b.end)
}

func (a recordLock) conflicts(b recordLock) bool {
	return !a.sameOwner(b) && (a.write || b.write) && a.overlaps(b)
}

// SetPID records the PID of the process that uses v (a value of View), for
// F_GETLK to report as a POSIX lock's holder.
func (f *FS) SetPID(v env.FS, pid int) {
	vw := f.ownView(v)
	if f.locks.pids == nil {
		f.locks.pids = map[*view]int{}
	}
	f.locks.pids[vw] = pid
}

// CancelWait ends the wait v's process registered with a waiting request
// that failed with EAGAIN: it gave up (its wait budget ran out, or it died).
func (f *FS) CancelWait(v env.FS) { delete(f.locks.waits, f.ownView(v)) }

// LocksHeld is the number of advisory locks held on the FS.
func (f *FS) LocksHeld() int { return f.locks.count }

// DropLocks loses every advisory lock, as the restart of an NFS server
// does for its clients' locks when they do not reclaim them. The holders'
// descriptors stay open and their owners are not told.
func (f *FS) DropLocks() {
	f.changes++
	waits, pids := f.locks.waits, f.locks.pids
	f.locks = lockTable{waits: waits, pids: pids}
}

func (f *FS) ownView(v env.FS) *view {
	vw, ok := v.(*view)
	if !ok || vw.fs != f {
		panic("simfs: a view from another FS")
	}
	return vw
}

// Flock is flock(2) on the open file description.
func (fl *file) Flock(op env.FlockOp) error {
	fl.v.fs.changes++
	if !fl.valid() {
		return pathErr("flock", fl.name, syscall.EBADF)
	}
	if errno := fl.v.inject(OpLock, fl.name, ""); errno != 0 {
		return pathErr("flock", fl.name, errno)
	}
	if errno := fl.v.fs.locks.flock(fl, op); errno != 0 {
		return pathErr("flock", fl.name, errno)
	}
	return nil
}

func (t *lockTable) flock(fl *file, op env.FlockOp) syscall.Errno {
	var exclusive bool
	switch op &^ env.LOCK_NB {
	case env.LOCK_UN:
		t.dropFlock(fl)
		return 0
	case env.LOCK_EX:
		exclusive = true
	case env.LOCK_SH:
	default:
		return syscall.EINVAL
	}
	holds := t.flocks[fl.node]
	for _, h := range holds {
		if h.desc == fl && h.exclusive == exclusive {
			return 0 // already held in that mode
		}
	}
	// A conversion is not atomic: Linux drops the old lock first, and a
	// conversion that then fails (LOCK_NB) leaves none.
	t.dropFlock(fl)
	for _, h := range t.flocks[fl.node] {
		if h.exclusive || exclusive {
			return syscall.EAGAIN
		}
	}
	if t.flocks == nil {
		t.flocks = map[*inode][]flockHold{}
	}
	t.flocks[fl.node] = append(t.flocks[fl.node], flockHold{desc: fl, exclusive: exclusive})
	t.count++
	return 0
}

func (t *lockTable) dropFlock(fl *file) {
	holds := t.flocks[fl.node]
	for i, h := range holds {
		if h.desc == fl {
			holds = append(holds[:i], holds[i+1:]...)
			t.count--
			break
		}
	}
	if len(holds) == 0 {
		delete(t.flocks, fl.node)
	} else {
		t.flocks[fl.node] = holds
	}
}

// FcntlLock is fcntl(2)'s record-lock commands.
func (fl *file) FcntlLock(cmd env.LockCmd, lk *env.RecordLock) error {
	fl.v.fs.changes++
	if !fl.valid() {
		return pathErr("fcntl", fl.name, syscall.EBADF)
	}
	if errno := fl.v.inject(OpLock, fl.name, ""); errno != 0 {
		return pathErr("fcntl", fl.name, errno)
	}
	if errno := fl.v.fs.locks.fcntl(fl, cmd, lk); errno != 0 {
		return pathErr("fcntl", fl.name, errno)
	}
	return nil
}

// deadlockSteps bounds F_SETLKW's walk of the waits-for chain, as Linux's
// MAX_DEADLK_ITERATIONS does.
const deadlockSteps = 10

func (t *lockTable) fcntl(fl *file, cmd env.LockCmd, lk *env.RecordLock) syscall.Errno {
	if cmd < env.F_GETLK || cmd > env.F_OFD_SETLKW {
		return syscall.EINVAL
	}
	req, errno := recordRequest(fl, cmd, lk)
	if errno != 0 {
		return errno
	}
	if cmd.Get() {
		if lk.Type == env.F_UNLCK {
			return syscall.EINVAL
		}
		t.getlk(fl.node, req, lk)
		return 0
	}
	switch {
	case lk.Type == env.F_RDLCK && fl.flag.AccessMode() == env.O_WRONLY:
		return syscall.EBADF
	case lk.Type == env.F_WRLCK && !fl.flag.Writable():
		return syscall.EBADF
	}
	if lk.Type != env.F_UNLCK {
		if blocker, ok := t.conflict(fl.node, req); ok {
			if !cmd.Waits() {
				return syscall.EAGAIN
			}
			if req.proc != nil && t.deadlocks(req.proc, blocker) {
				return syscall.EDEADLK
			}
			if req.proc != nil {
				if t.waits == nil {
					t.waits = map[*view]recordWait{}
				}
				t.waits[req.proc] = recordWait{node: fl.node, want: req}
			}
			return syscall.EAGAIN
		}
	}
	if req.proc != nil {
		delete(t.waits, req.proc)
	}
	t.setRange(fl.node, req, lk.Type != env.F_UNLCK)
	return 0
}

// recordRequest turns lk into a lock of fl's owner for cmd, with Linux's
// range checks.
func recordRequest(fl *file, cmd env.LockCmd, lk *env.RecordLock) (recordLock, syscall.Errno) {
	if lk.Type != env.F_RDLCK && lk.Type != env.F_WRLCK && lk.Type != env.F_UNLCK {
		return recordLock{}, syscall.EINVAL
	}
	req := recordLock{write: lk.Type == env.F_WRLCK, start: lk.Start, end: -1}
	if cmd.OFD() {
		if lk.PID != 0 {
			return recordLock{}, syscall.EINVAL
		}
		req.desc = fl
	} else {
		req.proc = fl.v
	}
	switch {
	case lk.Len > 0:
		req.end = lk.Start + lk.Len
	case lk.Len < 0:
		req.start, req.end = lk.Start+lk.Len, lk.Start
	}
	if req.start < 0 {
		return recordLock{}, syscall.EINVAL
	}
	return req, 0
}

// conflict returns the first lock on node that conflicts with req.
func (t *lockTable) conflict(node *inode, req recordLock) (recordLock, bool) {
	for _, l := range t.records[node] {
		if l.conflicts(req) {
			return l, true
		}
	}
	return recordLock{}, false
}

func (t *lockTable) getlk(node *inode, req recordLock, lk *env.RecordLock) {
	l, ok := t.conflict(node, req)
	if !ok {
		lk.Type = env.F_UNLCK
		return
	}
	*lk = env.RecordLock{Type: env.F_RDLCK, Start: l.start, PID: -1}
	if l.write {
		lk.Type = env.F_WRLCK
	}
	if l.end >= 0 {
		lk.Len = l.end - l.start
	}
	if l.proc != nil {
		lk.PID = t.pids[l.proc]
	}
}

// deadlocks is Linux's posix_locks_deadlock: following from the blocker's
// owner the chain of POSIX waits, does it come back to proc?
func (t *lockTable) deadlocks(proc *view, blocker recordLock) bool {
	for step := 0; step < deadlockSteps; step++ {
		if blocker.proc == nil {
			return false // OFD locks take no part
		}
		if blocker.proc == proc {
			return true
		}
		wait, ok := t.waits[blocker.proc]
		if !ok {
			return false
		}
		next, ok := t.conflict(wait.node, wait.want)
		if !ok {
			return false
		}
		blocker = next
	}
	return false
}

// setRange gives req's owner req's range on node: its locks there are cut
// away, then (unless unlocking) the new lock is added and merged with the
// owner's adjacent or overlapping locks of the same type, as Linux keeps them.
func (t *lockTable) setRange(node *inode, req recordLock, add bool) {
	var kept []recordLock
	for _, l := range t.records[node] {
		if !l.sameOwner(req) || !l.overlaps(req) {
			kept = append(kept, l)
			continue
		}
		if l.start < req.start {
			left := l
			left.end = req.start
			kept = append(kept, left)
		}
		if req.end >= 0 && (l.end < 0 || l.end > req.end) {
			right := l
			right.start = req.end
			kept = append(kept, right)
		}
	}
	if add {
		kept = mergeInto(kept, req)
	}
	t.count += countDelta(t.records[node], kept)
	if len(kept) == 0 {
		delete(t.records, node)
		return
	}
	if t.records == nil {
		t.records = map[*inode][]recordLock{}
	}
	t.records[node] = kept
}

// mergeInto adds l to locks, absorbing the same owner's locks of the same
// type that touch it.
func mergeInto(locks []recordLock, l recordLock) []recordLock {
	out := locks[:0:0]
	for _, o := range locks {
		touches := o.sameOwner(l) && o.write == l.write &&
			(l.end < 0 || o.start <= l.end) && (o.end < 0 || l.start <= o.end)
		if !touches {
			out = append(out, o)
			continue
		}
		l.start = min(l.start, o.start)
		if l.end >= 0 && (o.end < 0 || o.end > l.end) {
			l.end = o.end
		}
	}
	return append(out, l)
}

func countDelta(before, after []recordLock) int { return len(after) - len(before) }

// closed releases what closing fl releases: its flock and OFD locks (simfs
// has no dup, so a description has one descriptor), and every POSIX lock
// its process holds on the file, whichever descriptor took them.
func (t *lockTable) closed(fl *file) {
	if t.count == 0 {
		return
	}
	t.dropFlock(fl)
	records := t.records[fl.node]
	if len(records) == 0 {
		return
	}
	kept := records[:0:0]
	for _, l := range records {
		if l.desc != fl && l.proc != fl.v {
			kept = append(kept, l)
		}
	}
	t.count += countDelta(records, kept)
	if len(kept) == 0 {
		delete(t.records, fl.node)
	} else {
		t.records[fl.node] = kept
	}
}

// hash mixes the lock state into h; with no lock h is unchanged, so the
// hashes of runs that take none do not move. Locks are summed, so the
// maps' visiting order does not matter; Hash numbered every open inode.
func (t *lockTable) hash(h *fnv64) {
	if t.count == 0 {
		return
	}
	var sum uint64
	for node, holds := range t.flocks {
		for _, hold := range holds {
			sum += mix64(uint64(node.hashIndex)<<1 | boolBit(hold.exclusive))
		}
	}
	for node, records := range t.records {
		for _, l := range records {
			key := uint64(node.hashIndex)<<2 | boolBit(l.write)<<1 | boolBit(l.desc != nil)
			sum += mix64(key ^ mix64(uint64(l.start)^mix64(uint64(l.end))))
		}
	}
	h.u64(uint64(t.count))
	h.u64(sum)
}

// mix64 is splitmix64's finalizer, a bijection on uint64.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// FileIdentity is the identity of the inode f (a File of this package) has
// open, read without an fstat: no injector is consulted and nothing
// changes, so a checker may call it between steps.
func FileIdentity(f env.File) (env.FileIdentity, bool) {
	fl, ok := f.(*file)
	if !ok {
		return env.FileIdentity{}, false
	}
	return env.FileIdentity{Dev: fl.v.fs.opts.Dev, Ino: fl.node.ino, BirthNs: fl.node.birth}, true
}
