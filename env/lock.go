package env

// Advisory locks: flock(2) and fcntl(2) record locks (POSIX and open file
// description locks), as an optional interface of File. Code that locks
// asks for it with a type assertion, as it would for an optional io
// interface:
//
//	locker, ok := f.(env.Locker)
//
// lease/osenv's files and simfs's files implement it; so do the files the
// simulator hands its processes, where a blocking request is a scheduling
// point and the process waits, not runnable, until the lock is free or its
// wait budget runs out.

// FlockOp is flock(2)'s operation: LOCK_SH, LOCK_EX or LOCK_UN, optionally
// or'ed with LOCK_NB. The values are Linux's.
type FlockOp int

const (
	// LOCK_SH takes a shared lock.
	LOCK_SH FlockOp = 1
	// LOCK_EX takes an exclusive lock.
	LOCK_EX FlockOp = 2
	// LOCK_NB makes LOCK_SH or LOCK_EX fail with EWOULDBLOCK instead of
	// waiting.
	LOCK_NB FlockOp = 4
	// LOCK_UN releases the lock.
	LOCK_UN FlockOp = 8
)

// LockCmd is an fcntl(2) record-lock command.
type LockCmd int

const (
	// F_GETLK reports the first lock that would conflict with the one
	// described (POSIX locks; the reported PID is the holder's).
	F_GETLK LockCmd = iota + 1
	// F_SETLK sets or clears a POSIX lock, failing with EAGAIN on conflict.
	F_SETLK
	// F_SETLKW is F_SETLK that waits; EDEADLK when waiting would deadlock.
	F_SETLKW
	// F_OFD_GETLK, F_OFD_SETLK and F_OFD_SETLKW are the open file
	// description lock commands: owned by the description, not the process.
	F_OFD_GETLK
	F_OFD_SETLK
	F_OFD_SETLKW
)

// Waits reports whether cmd waits for a conflicting lock to go.
func (c LockCmd) Waits() bool { return c == F_SETLKW || c == F_OFD_SETLKW }

// OFD reports whether cmd is an open file description lock command.
func (c LockCmd) OFD() bool { return c == F_OFD_GETLK || c == F_OFD_SETLK || c == F_OFD_SETLKW }

// Get reports whether cmd is a query (F_GETLK, F_OFD_GETLK).
func (c LockCmd) Get() bool { return c == F_GETLK || c == F_OFD_GETLK }

// LockType is a record lock's l_type.
type LockType int16

const (
	// F_RDLCK is a read (shared) lock; the descriptor must be open for reading.
	F_RDLCK LockType = iota + 1
	// F_WRLCK is a write (exclusive) lock; the descriptor must be open for writing.
	F_WRLCK
	// F_UNLCK removes locks (F_SETLK), or says no lock conflicts (F_GETLK).
	F_UNLCK
)

func (t LockType) String() string {
	switch t {
	case F_RDLCK:
		return "rdlck"
	case F_WRLCK:
		return "wrlck"
	case F_UNLCK:
		return "unlck"
	}
	return "LockType(?)"
}

// RecordLock is struct flock with l_whence SEEK_SET: the bytes [Start,
// Start+Len), or from Start to the end of the file and beyond when Len is
// 0. A negative Len covers [Start+Len, Start). F_GETLK overwrites it with
// the conflicting lock (PID -1 for an open file description lock), or sets
// only Type to F_UNLCK. The OFD commands require PID 0 on input.
type RecordLock struct {
	Type  LockType
	Start int64
	Len   int64
	PID   int
}

// Locker is the optional advisory-lock interface of a File. Errors are
// *fs.PathError around the errno Linux returns: Op "flock" or "fcntl",
// EWOULDBLOCK (= EAGAIN) on conflict without waiting, EBADF for a record
// lock the descriptor's access mode does not allow, EINVAL for a bad range
// or command, EDEADLK for a POSIX wait that would deadlock, EINTR when a
// wait is interrupted.
//
// Their lifetimes are Linux's: a flock and an OFD lock belong to the open
// file description (every descriptor dup'ed or inherited from it) and go
// when its last descriptor closes; a POSIX record lock belongs to the
// process, is not inherited across fork, and goes when the process closes
// ANY descriptor of the file. All go when the process dies.
type Locker interface {
	// Flock is flock(2).
	Flock(op FlockOp) error
	// FcntlLock is fcntl(fd, cmd, lk).
	FcntlLock(cmd LockCmd, lk *RecordLock) error
}
