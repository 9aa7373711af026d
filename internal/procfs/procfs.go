// Package procfs is the pure part of the Linux process-table inspector: it
// reads /proc/PID/stat, status, ns/pid, exe (and task/TID/exe) and the boot
// id through a small Reader, parses them, and maps their errors to a
// lease.Inspection. It makes no system call of its own, so the same code
// runs over the real /proc (lease/osenv's thin Reader) and over the files a
// simulated host renders (simproc): every simulation campaign runs the real
// parsing and errno mapping.
//
// It is deterministic engine-layer code: no os, syscall or time. Errors are
// told apart with the io/fs sentinels (ENOENT is fs.ErrNotExist, EACCES and
// EPERM are fs.ErrPermission) and ErrNoSuchProcess, which a Reader adds to
// ESRCH (io/fs has no sentinel for it).
package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/leasekit/leasekit/lease"
)

const (
	// InspectAttemptsMax bounds how often Inspect starts over when the PID
	// changed hands between its first and last read of /proc/PID/stat.
	InspectAttemptsMax = 4
	// TaskEntriesMax bounds the /proc/PID/task scan that looks for a live
	// thread's executable when the leader is a zombie.
	TaskEntriesMax = 64
	// statFieldsAfterCommMin is how many fields must follow the comm's
	// closing parenthesis: state (field 3) through starttime (field 22).
	statFieldsAfterCommMin = 20
)

// ErrNoSuchProcess is what a Reader's error must also match (errors.Is)
// when the kernel answered ESRCH: the process exited after its file was
// opened. The Reader keeps the errno too.
var ErrNoSuchProcess = errors.New("procfs: no such process (ESRCH)")

// Reader is how the inspector reads a /proc-like tree. Errors are what the
// os package returns (*fs.PathError around the errno), with ESRCH also
// matching ErrNoSuchProcess.
type Reader interface {
	// ReadFile returns a whole (small) file. The Table is done with the
	// slice when the call that parses it returns, so a Reader may reuse it.
	ReadFile(path string) ([]byte, error)
	// Stat follows symlinks: for /proc/PID/exe it describes the executable's
	// inode, for /proc/PID/ns/pid the namespace's.
	Stat(path string) (lease.FileInfo, error)
	// Readlink returns a symlink's target; /proc/PID/exe may end in
	// " (deleted)".
	Readlink(path string) (string, error)
	// ReadDir lists a directory (/proc/PID/task).
	ReadDir(path string) ([]lease.DirEntry, error)
	// Hostname is the host's name (uname's nodename).
	Hostname() (string, error)
}

// Table inspects the process table under one /proc root through a Reader.
type Table struct {
	root   string
	reader Reader
	// bootIDPath is root/sys/kernel/random/boot_id, read at every inspection.
	bootIDPath string
	// single says the Table serves one caller at a time (NewSingleCaller)
	// and keeps memo.
	single bool
	memo   memo
}

// New returns the Table of the /proc tree at root (an absolute path, or a
// relative one for handcrafted tables).
func New(root string, reader Reader) *Table {
	if root == "" {
		panic("procfs: empty proc root")
	}
	if reader == nil {
		panic("procfs: nil reader")
	}
	// Clean once: every path below is root + "/" + ...; "/" itself becomes "".
	root = strings.TrimSuffix(path.Clean(root), "/")
	return &Table{root: root, reader: reader, bootIDPath: bootIDPath(root)}
}

// bootIDPath is root + "/sys/kernel/random/boot_id", without building it
// for "/proc": the simulator makes a Table for every process it starts.
func bootIDPath(root string) string {
	if root == "/proc" {
		return "/proc/sys/kernel/random/boot_id"
	}
	return root + "/sys/kernel/random/boot_id"
}

// Current inspects pid as the calling process: it must be live and its
// identity complete. A zombie leader with live threads is the caller's own
// process when the main thread has exited (pthread_exit) and another thread
// calls: /proc/PID/stat reads Z with Threads > 1, and its identity (the
// executable through a live thread's task/TID/exe) is the process's, as
// Inspect reads it for anyone else. A caller that reads itself as a
// single-threaded zombie is a broken invariant (a process that runs has
// not exited) and panics.
func (t *Table) Current(pid int) (lease.ProcessIdentity, error) {
	inspection := t.Inspect(pid)
	if inspection.Kind != lease.InspectLive {
		return lease.ProcessIdentity{}, fmt.Errorf(
			"leasekit: cannot inspect the current process (PID %d): %v: %s", pid, inspection.Kind, inspection.Diagnostic)
	}
	if inspection.State == lease.StateZombie && inspection.Threads <= 1 {
		panic(fmt.Sprintf("procfs: the current process (PID %d) reads as a zombie", pid))
	}
	if err := inspection.Identity.Validate(); err != nil {
		return lease.ProcessIdentity{}, fmt.Errorf("leasekit: current process (PID %d): %w", pid, err)
	}
	return inspection.Identity, nil
}

// Inspect reads /proc/PID. It reads stat first and last: if the start time
// changed in between, the PID changed hands mid-inspection and it starts
// over, at most InspectAttemptsMax times.
func (t *Table) Inspect(pid int) lease.Inspection {
	if pid <= 0 {
		return unknown("PID %d is not positive", pid)
	}
	for range InspectAttemptsMax {
		inspection, stable := t.inspectOnce(pid)
		if stable {
			return inspection
		}
	}
	return unknown("PID %d changed start time during each of %d inspections", pid, InspectAttemptsMax)
}

func unknown(format string, args ...any) lease.Inspection {
	return lease.Inspection{Kind: lease.InspectUnknown, Diagnostic: fmt.Sprintf(format, args...)}
}

// Failed maps a read error under /proc/PID to an inspection: the process is
// gone (ENOENT, ESRCH), or it cannot be told (everything else; permission
// errors say so).
func Failed(path string, err error) lease.Inspection {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, ErrNoSuchProcess):
		return lease.Inspection{Kind: lease.InspectAbsent}
	case errors.Is(err, fs.ErrPermission):
		return unknown("permission denied reading %s: %v", path, err)
	}
	return unknown("reading %s: %v", path, err)
}

func (t *Table) inspectOnce(pid int) (inspection lease.Inspection, stable bool) {
	names := t.namesOf(pid)
	first, failure, ok := t.readStat(pid, &names)
	if !ok {
		return failure, true
	}
	identity := lease.ProcessIdentity{PID: pid, StartTime: first.StartTime}
	if failure, ok := t.readIdentity(pid, &names, &identity); !ok {
		return failure, true
	}
	// Read stat again: fields read from a PID that changed hands after the
	// first read describe the wrong process.
	final, failure, ok := t.readStat(pid, &names)
	if !ok {
		return failure, true
	}
	if final.StartTime != first.StartTime {
		return lease.Inspection{}, false
	}
	state := lease.StateRunning
	if final.State == 'Z' {
		state = lease.StateZombie
	}
	return lease.Inspection{Kind: lease.InspectLive, Identity: identity, State: state, Threads: final.Threads}, true
}

// readIdentity fills the fields stat does not hold, in the order the
// files are read: host, status, ns/pid, exe.
func (t *Table) readIdentity(pid int, names *pidNames, identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	if failure, ok := t.readHost(identity); !ok {
		return failure, false
	}
	if failure, ok := t.readUID(names.status, identity); !ok {
		return failure, false
	}
	if failure, ok := t.readNamespace(names.nsPID, identity); !ok {
		return failure, false
	}
	return t.readExecutable(pid, names, identity)
}

func (t *Table) readStat(pid int, names *pidNames) (Stat, lease.Inspection, bool) {
	name := names.stat
	data, err := t.reader.ReadFile(name)
	if err != nil {
		return Stat{}, Failed(name, err), false
	}
	parsed, startTime, err := parseStat(pid, data)
	if err != nil {
		return Stat{}, unknown("malformed %s: %v", name, err), false
	}
	parsed.StartTime = t.startTime(pid, startTime)
	return parsed, lease.Inspection{}, true
}
