package simproc

import (
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"github.com/leasekit/leasekit/internal/procfs"
	"github.com/leasekit/leasekit/lease"
)

// This file renders the /proc files of a host's simulated processes, as one
// process sees them (its own PID namespace), so that inspection runs
// internal/procfs, the real parser and errno mapping, over them: stat with
// the comm in parentheses (hostile comms included), status, ns/pid, exe
// (" (deleted)" after an upgrade, ENOENT for a zombie leader), task/TID/exe
// for a zombie leader's live threads, and the boot id. The hazards a
// campaign draws (see Hazard) are rendered here too.

// procRoot is where the simulated process table is mounted.
const procRoot = "/proc"

// commLenMax is TASK_COMM_LEN - 1: the kernel truncates a comm to 15 bytes.
const commLenMax = 15

// hostileComms are comms a process may give itself (prctl PR_SET_NAME, or
// an executable's file name) that break a parser counting fields from the
// first ")" instead of the last: spaces, parentheses, and fake fields that
// shift state, num_threads and starttime onto other fields; and a fake
// "Uid:" for a status parser that looks for it anywhere in a line (the
// kernel escapes a newline in the Name line, never a space).
var hostileComms = []string{
	"(sd-pam)",
	"a b) c",
	") S 1 1 1 1 1 1",
	"x) Z 1 1 1 1 1",
	"Uid: 0 (x)",
}

// Hazard is a /proc hazard a Host's ProcHazard hook draws.
type Hazard int

const (
	// HazardHostileComm: a spawned process names itself with a hostile comm.
	HazardHostileComm Hazard = iota + 1
	// HazardVanish: an inspected zombie is reaped by its parent between the
	// inspector's first read and its next one.
	HazardVanish
)

// Probes the rendering fires (through Host.Probe) for an Inspect that met
// the hazard.
const (
	ProbeCommWithParen = "proc-comm-with-paren"
	ProbeZombieSingle  = "proc-zombie-single-thread"
	ProbeZombieMulti   = "proc-zombie-multithread"
	// ProbeStopped: an inspection of a stopped process (state T) that it
	// read as live.
	ProbeStopped    = "proc-stopped-live"
	ProbeExeDeleted = "proc-exe-deleted"
	ProbeEACCES     = "proc-eacces"
	ProbeVanished   = "proc-vanished-between-reads"
	ProbeESRCH      = "proc-esrch"
)

// What one inspection met, as bits of procView.seen.
const (
	seenHostileComm = 1 << iota
	seenDeleted
	seenTaskExe
	seenEACCES
	seenVanished
	seenESRCH
)

// eaccesFiles are the per-PID files an injected EACCES may hit (hidepid
// denies stat and status, ptrace access denies ns/pid and exe).
var eaccesFiles = [...]string{"stat", "status", "ns/pid", "exe"}

// commOf is the comm a process spawned with exe gets: the executable's base
// name, truncated as the kernel truncates it, unless it named itself.
func commOf(exe string) string {
	comm := exe[strings.LastIndexByte(exe, '/')+1:]
	if len(comm) > commLenMax {
		comm = comm[:commLenMax]
	}
	return comm
}

// procView is procfs.Reader over the host's table as one process sees it,
// for one inspection at a time (reset clears the hazards).
type procView struct {
	host *Host
	self *Proc
	// eacces is the file ("stat", "status", "ns/pid", "exe") whose read
	// fails with an injected EACCES during this inspection, or "".
	eacces string
	// vanish is the zombie reaped after the inspection's first read.
	vanish *Proc
	reads  int
	// gonePID is the PID whose next read fails with ESRCH (its file was
	// open when it was reaped), or 0.
	gonePID int
	seen    int
	buf     []byte
}

func (v *procView) reset() {
	v.eacces, v.vanish, v.reads, v.gonePID, v.seen = "", nil, 0, 0, 0
}

// split parses /proc/PID/rest; ok is false for any other path.
func split(path string) (pid int, rest string, ok bool) {
	tail, found := strings.CutPrefix(path, procRoot+"/")
	if !found {
		return 0, "", false
	}
	number, rest, _ := strings.Cut(tail, "/")
	pid, err := strconv.Atoi(number)
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, rest, true
}

func pathError(op, path string, errno syscall.Errno) error {
	return &fs.PathError{Op: op, Path: path, Err: errno}
}

// goneError is ESRCH as lease/osenv reports it: the errno, also matching
// procfs.ErrNoSuchProcess.
type goneError struct{ err error }

func (e goneError) Error() string        { return e.err.Error() }
func (e goneError) Unwrap() error        { return e.err }
func (e goneError) Is(target error) bool { return target == procfs.ErrNoSuchProcess }

// lookup finds the process a per-PID read names, applying the vanish and
// EACCES hazards first; file is the path below /proc/PID.
func (v *procView) lookup(op, path string, pid int, file string) (*Proc, error) {
	v.reads++
	if v.vanish != nil && v.reads == 2 {
		v.host.vanish(v.vanish)
		v.seen |= seenVanished
		if v.vanish.PID%2 == 1 {
			v.gonePID = v.vanish.PID // an odd PID had its file open: ESRCH
		}
		v.vanish = nil
	}
	p := v.host.namespaces[v.self.NS].procs[pid]
	if p == nil {
		if v.gonePID == pid {
			v.gonePID = 0
			v.seen |= seenESRCH
			return nil, goneError{pathError("read", path, syscall.ESRCH)}
		}
		return nil, pathError(op, path, syscall.ENOENT)
	}
	if v.eacces != "" && v.eacces == file {
		v.seen |= seenEACCES
		return nil, pathError(op, path, syscall.EACCES)
	}
	if (file == "exe" || file == "ns/pid" || strings.HasPrefix(file, "task/")) &&
		v.host.DenyOtherUIDs && p.UID != v.self.UID {
		v.seen |= seenEACCES // ptrace access mode check
		return nil, pathError(op, path, syscall.EACCES)
	}
	return p, nil
}

// ReadFile renders stat, status and the boot id.
func (v *procView) ReadFile(path string) ([]byte, error) {
	if path == procRoot+"/sys/kernel/random/boot_id" {
		if v.host.bootID == "" {
			return nil, pathError("open", path, syscall.ENOENT)
		}
		return append(append(v.buf[:0], v.host.bootID...), '\n'), nil
	}
	pid, file, ok := split(path)
	if !ok || (file != "stat" && file != "status") {
		return nil, pathError("open", path, syscall.ENOENT)
	}
	p, err := v.lookup("open", path, pid, file)
	if err != nil {
		return nil, err
	}
	if file == "stat" {
		v.buf = v.host.renderStat(v.buf[:0], p)
		if p.Comm != commOf(p.ExePath) {
			v.seen |= seenHostileComm
		}
	} else {
		v.buf = renderStatus(v.buf[:0], p)
	}
	return v.buf, nil
}

// Stat follows ns/pid (the namespace's inode) and exe (the executable's).
func (v *procView) Stat(path string) (lease.FileInfo, error) {
	pid, file, ok := split(path)
	if !ok {
		return lease.FileInfo{}, pathError("stat", path, syscall.ENOENT)
	}
	p, err := v.lookup("stat", path, pid, file)
	if err != nil {
		return lease.FileInfo{}, err
	}
	switch {
	case file == "ns/pid":
		ino, _ := strconv.ParseUint(v.host.NamespaceID(p.NS), 10, 64)
		return lease.FileInfo{Name: "pid", Mode: 0o444, Ino: ino, Nlink: 1}, nil
	case v.hasExe(p, file):
		return lease.FileInfo{Name: commOf(p.ExePath), Mode: 0o755, Dev: ExeDev, Ino: p.ExeIno, Nlink: 1}, nil
	}
	return lease.FileInfo{}, pathError("stat", path, syscall.ENOENT)
}

// Readlink reads exe links.
func (v *procView) Readlink(path string) (string, error) {
	pid, file, ok := split(path)
	if !ok {
		return "", pathError("readlink", path, syscall.ENOENT)
	}
	p, err := v.lookup("readlink", path, pid, file)
	if err != nil {
		return "", err
	}
	if !v.hasExe(p, file) {
		return "", pathError("readlink", path, syscall.ENOENT)
	}
	if file != "exe" {
		v.seen |= seenTaskExe
	}
	if v.host.exes[p.ExePath] != p.ExeIno {
		v.seen |= seenDeleted
		return p.ExePath + deletedSuffix, nil
	}
	return p.ExePath, nil
}

// hasExe reports whether file (exe, or task/TID/exe) is a readable exe link
// of p: a zombie leader has released its memory, its other threads have not.
func (v *procView) hasExe(p *Proc, file string) bool {
	if file == "exe" {
		return p.State == Running
	}
	tid, ok := taskExeTID(file)
	if !ok {
		return false
	}
	thread := tid - p.PID
	if thread < 0 || thread >= p.Threads {
		return false
	}
	return p.State == Running || thread > 0
}

// taskExeTID parses task/TID/exe.
func taskExeTID(file string) (int, bool) {
	rest, found := strings.CutPrefix(file, "task/")
	if !found {
		return 0, false
	}
	number, found := strings.CutSuffix(rest, "/exe")
	if !found {
		return 0, false
	}
	tid, err := strconv.Atoi(number)
	return tid, err == nil
}

// ReadDir lists task/: the leader's TID is the PID; the other threads'
// TIDs are synthetic, PID+1 on.
func (v *procView) ReadDir(path string) ([]lease.DirEntry, error) {
	pid, file, ok := split(path)
	if !ok || file != "task" {
		return nil, pathError("open", path, syscall.ENOENT)
	}
	p, err := v.lookup("open", path, pid, file)
	if err != nil {
		return nil, err
	}
	entries := make([]lease.DirEntry, p.Threads)
	for i := range entries {
		entries[i] = lease.DirEntry{Name: strconv.Itoa(p.PID + i), Type: fs.ModeDir}
	}
	return entries, nil
}

// Hostname is the host's name.
func (v *procView) Hostname() (string, error) { return v.host.name, nil }

// renderStat renders /proc/PID/stat: fields 1 to 52. utime and stime grow
// with the process's age, as CPU time does.
func (h *Host) renderStat(b []byte, p *Proc) []byte {
	state := byte('S')
	switch {
	case p.State == Zombie:
		state = 'Z'
	case p.Stopped:
		state = 'T'
	}
	age := h.TicksNow() - min(p.StartTicks, h.TicksNow())
	b = strconv.AppendInt(b, int64(p.PID), 10)
	b = append(b, " ("...)
	b = append(b, p.Comm...)
	b = append(b, ") "...)
	b = append(b, state)
	// 4 ppid, 5 pgrp, 6 session, 7 tty_nr, 8 tpgid, 9 flags, 10-13 faults.
	b = append(b, " 1 "...)
	b = strconv.AppendInt(b, int64(p.PID), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(p.PID), 10)
	b = append(b, " 0 -1 4194560 0 0 0 0 "...)
	b = strconv.AppendUint(b, age/3, 10) // 14 utime
	b = append(b, ' ')
	b = strconv.AppendUint(b, age/7, 10)           // 15 stime
	b = append(b, " 0 0 20 0 "...)                 // 16 cutime, 17 cstime, 18 priority, 19 nice
	b = strconv.AppendInt(b, int64(p.Threads), 10) // 20 num_threads
	b = append(b, " 0 "...)                        // 21 itrealvalue
	b = strconv.AppendUint(b, p.StartTicks, 10)    // 22 starttime
	return append(b, statTail...)
}

// statTail is fields 23 (vsize), 24 (rss), 25 (rsslim) and 26 to 52 of
// every rendered stat line, and its newline.
var statTail = " 12345678 321 18446744073709551615" + strings.Repeat(" 0", 52-25) + "\n"

// renderStatus renders the head of /proc/PID/status.
func renderStatus(b []byte, p *Proc) []byte {
	state := "S (sleeping)"
	switch {
	case p.State == Zombie:
		state = "Z (zombie)"
	case p.Stopped:
		state = "T (stopped)"
	}
	b = append(b, "Name:\t"...)
	b = append(b, p.Comm...)
	b = append(b, "\nUmask:\t0022\nState:\t"...)
	b = append(b, state...)
	b = append(b, "\nTgid:\t"...)
	b = strconv.AppendInt(b, int64(p.PID), 10)
	b = append(b, "\nNgid:\t0\nPid:\t"...)
	b = strconv.AppendInt(b, int64(p.PID), 10)
	b = append(b, "\nPPid:\t1\nTracerPid:\t0\nUid:"...)
	for range 4 { // real, effective, saved, filesystem
		b = append(b, '\t')
		b = strconv.AppendUint(b, uint64(p.UID), 10)
	}
	b = append(b, "\nGid:\t0\t0\t0\t0\nThreads:\t"...)
	b = strconv.AppendInt(b, int64(p.Threads), 10)
	return append(b, '\n')
}
