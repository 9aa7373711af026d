package fsconformance

import (
	"strconv"
	"testing"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lease"
)

// The advisory-lock verbs. Files are held under a name of their own, so one
// script can open one file several times (several open file descriptions):
//
//	hold-as NAME path ro|wo|rw      open and hold
//	flock NAME ex|sh|un|ex-nb|sh-nb flock(2)
//	setlk NAME r|w|u START LEN      F_SETLK (ofd-setlk: F_OFD_SETLK)
//	getlk NAME r|w START LEN        F_GETLK (ofd-getlk: F_OFD_GETLK)
//
// A query renders "unlocked" or the conflicting lock, "wrlck 0+10 pid>0"
// (a POSIX lock: its holder's PID, positive) or "... pid=-1" (an OFD lock).
// The script runs in one process, so it reaches the POSIX rules that one
// process can see: its own locks never conflict with each other, closing
// any of its descriptors of a file drops them all, and they conflict with
// its OFD locks.
func (r *runner) lockStep(t *testing.T, verb string, a []string) string {
	if len(a) < 2 {
		t.Fatalf("%s: want a name and an argument", verb)
	}
	if verb == "hold-as" {
		return r.holdAs(t, a)
	}
	f, ok := r.held[a[0]]
	if !ok {
		t.Fatalf("%s %s: not held", verb, a[0])
	}
	locker, ok := f.(env.Locker)
	if !ok {
		return "not-a-locker"
	}
	if verb == "flock" {
		op, ok := flockOps[a[1]]
		if !ok {
			t.Fatalf("flock: bad operation %q", a[1])
		}
		return r.result(locker.Flock(op))
	}
	if len(a) != 4 {
		t.Fatalf("%s: want NAME TYPE START LEN", verb)
	}
	lk := env.RecordLock{Type: lockTypes[a[1]], Start: atoi(t, a[2]), Len: atoi(t, a[3])}
	cmd := lockCmds[verb]
	if err := locker.FcntlLock(cmd, &lk); err != nil || !cmd.Get() {
		return r.result(err)
	}
	return renderLock(lk)
}

func (r *runner) holdAs(t *testing.T, a []string) string {
	flag := map[string]lease.OpenFlag{"ro": lease.O_RDONLY, "wo": lease.O_WRONLY, "rw": lease.O_RDWR}
	mode, ok := flag[a[2%len(a)]]
	if len(a) != 3 || !ok {
		t.Fatalf("hold-as: want NAME path ro|wo|rw, got %q", a)
	}
	f, err := r.fsys.OpenFile(r.path(a[1]), mode, 0)
	if err != nil {
		return r.result(err)
	}
	r.held[a[0]] = f
	return "ok"
}

var flockOps = map[string]env.FlockOp{
	"ex": env.LOCK_EX, "sh": env.LOCK_SH, "un": env.LOCK_UN,
	"ex-nb": env.LOCK_EX | env.LOCK_NB, "sh-nb": env.LOCK_SH | env.LOCK_NB,
}

var lockTypes = map[string]env.LockType{"r": env.F_RDLCK, "w": env.F_WRLCK, "u": env.F_UNLCK}

var lockCmds = map[string]env.LockCmd{
	"setlk": env.F_SETLK, "getlk": env.F_GETLK, "setlkw": env.F_SETLKW,
	"ofd-setlk": env.F_OFD_SETLK, "ofd-getlk": env.F_OFD_GETLK, "ofd-setlkw": env.F_OFD_SETLKW,
}

func atoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}

func renderLock(lk env.RecordLock) string {
	if lk.Type == env.F_UNLCK {
		return "unlocked"
	}
	pid := "pid=" + strconv.Itoa(lk.PID)
	if lk.PID > 0 {
		pid = "pid>0"
	}
	return lk.Type.String() + " " + strconv.FormatInt(lk.Start, 10) + "+" + strconv.FormatInt(lk.Len, 10) + " " + pid
}
