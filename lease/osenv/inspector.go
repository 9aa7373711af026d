package osenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/leasekit/leasekit/lease"
)

const (
	// inspectAttemptsMax bounds how often Inspect starts over when the PID
	// changed hands between its first and last read of /proc/PID/stat.
	inspectAttemptsMax = 4
	// procFileBytesMax bounds one /proc file read: stat is under 1 KiB and
	// status under 2 KiB; anything larger is not the file we expect.
	procFileBytesMax = 1 << 16
	// taskEntriesMax bounds the /proc/PID/task scan that looks for a live
	// thread's executable when the leader is a zombie.
	taskEntriesMax = 64
	// statFieldsAfterCommMin is how many fields must follow the comm's
	// closing parenthesis: state (field 3) through starttime (field 22).
	statFieldsAfterCommMin = 20
)

// procAccess is how the inspector reads the process table. Tests replace a
// call to inject an error the kernel would not give them (EACCES when the
// tests run as root, who reads anything).
type procAccess struct {
	readFile func(path string) ([]byte, error)
	stat     func(path string) (lease.FileInfo, error)
	readlink func(path string) (string, error)
	readDir  func(path string) ([]lease.DirEntry, error)
}

// realProcAccess reads through FS, so every read is EINTR-safe and every
// error is a *fs.PathError around the errno.
func realProcAccess() procAccess {
	fsys := FS{}
	return procAccess{
		readFile: func(path string) ([]byte, error) { return readFileBounded(fsys, path) },
		stat:     fsys.Stat,
		readlink: fsys.Readlink,
		readDir:  fsys.ReadDir,
	}
}

// readFileBounded reads a whole small file. A file longer than
// procFileBytesMax fails with EFBIG.
func readFileBounded(fsys FS, path string) ([]byte, error) {
	file, err := fsys.OpenFile(path, lease.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data := make([]byte, 0, 4096)
	buffer := make([]byte, 4096)
	for len(data) <= procFileBytesMax {
		n, err := file.Read(buffer)
		data = append(data, buffer[:n]...)
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EFBIG}
}

// procInspector is lease.Inspector over a /proc-like directory.
type procInspector struct {
	root     string
	hostname func() (string, error)
	access   procAccess
}

// NewInspectorAt returns an Inspector that reads the process table under
// procRoot instead of /proc, and asks hostname for the host's name (nil
// means os.Hostname). It works on every platform, for handcrafted tables.
func NewInspectorAt(procRoot string, hostname func() (string, error)) lease.Inspector {
	return newProcInspector(procRoot, hostname, realProcAccess())
}

func newProcInspector(procRoot string, hostname func() (string, error), access procAccess) *procInspector {
	if procRoot == "" {
		panic("osenv: empty proc root")
	}
	if hostname == nil {
		hostname = os.Hostname
	}
	return &procInspector{root: procRoot, hostname: hostname, access: access}
}

// Current inspects the calling process, which must be live and complete.
func (i *procInspector) Current() (lease.ProcessIdentity, error) {
	pid := os.Getpid()
	inspection := i.Inspect(pid)
	if inspection.Kind != lease.InspectLive {
		return lease.ProcessIdentity{}, fmt.Errorf(
			"leasekit: cannot inspect the current process (PID %d): %v: %s", pid, inspection.Kind, inspection.Diagnostic)
	}
	if inspection.State == lease.StateZombie {
		panic(fmt.Sprintf("osenv: the current process (PID %d) reads as a zombie", pid))
	}
	if err := inspection.Identity.Validate(); err != nil {
		return lease.ProcessIdentity{}, fmt.Errorf("leasekit: current process (PID %d): %w", pid, err)
	}
	return inspection.Identity, nil
}

// CallerUID is the caller's real uid (lease.CallerUIDReporter): Inspect
// needs it, and it is known even when /proc/self cannot be read.
func (i *procInspector) CallerUID() (uint32, error) { return uint32(os.Getuid()), nil }

// Inspect reads /proc/PID. It reads stat first and last: if the start time
// changed in between, the PID changed hands mid-inspection and it starts
// over, at most inspectAttemptsMax times.
func (i *procInspector) Inspect(pid int) lease.Inspection {
	if pid <= 0 {
		return unknown("PID %d is not positive", pid)
	}
	for range inspectAttemptsMax {
		inspection, stable := i.inspectOnce(pid)
		if stable {
			return inspection
		}
	}
	return unknown("PID %d changed start time during each of %d inspections", pid, inspectAttemptsMax)
}

func unknown(format string, args ...any) lease.Inspection {
	return lease.Inspection{Kind: lease.InspectUnknown, Diagnostic: fmt.Sprintf(format, args...)}
}

// failed maps a read error under /proc to an inspection: the process is
// gone (ENOENT, ESRCH), or it cannot be told (everything else).
func failed(path string, err error) lease.Inspection {
	switch {
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ESRCH):
		return lease.Inspection{Kind: lease.InspectAbsent}
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return unknown("permission denied reading %s: %v", path, err)
	}
	return unknown("reading %s: %v", path, err)
}

// procStat is the part of /proc/PID/stat the identity rules use.
type procStat struct {
	state     byte
	threads   int
	startTime string
}

func (i *procInspector) inspectOnce(pid int) (inspection lease.Inspection, stable bool) {
	dir := filepath.Join(i.root, strconv.Itoa(pid))
	first, failure, ok := i.readStat(pid, dir)
	if !ok {
		return failure, true
	}
	identity := lease.ProcessIdentity{PID: pid, StartTime: first.startTime}
	for _, read := range []func(int, string, *lease.ProcessIdentity) (lease.Inspection, bool){
		i.readHost, i.readUID, i.readNamespace,
	} {
		if failure, ok := read(pid, dir, &identity); !ok {
			return failure, true
		}
	}
	if failure, ok := i.readExecutable(pid, dir, &identity); !ok {
		return failure, true
	}
	// Read stat again: fields read from a PID that changed hands after the
	// first read describe the wrong process.
	final, failure, ok := i.readStat(pid, dir)
	if !ok {
		return failure, true
	}
	if final.startTime != first.startTime {
		return lease.Inspection{}, false
	}
	state := lease.StateRunning
	if final.state == 'Z' {
		state = lease.StateZombie
	}
	return lease.Inspection{Kind: lease.InspectLive, Identity: identity, State: state, Threads: final.threads}, true
}

func (i *procInspector) readStat(pid int, dir string) (procStat, lease.Inspection, bool) {
	path := filepath.Join(dir, "stat")
	data, err := i.access.readFile(path)
	if err != nil {
		return procStat{}, failed(path, err), false
	}
	parsed, err := parseStat(pid, data)
	if err != nil {
		return procStat{}, unknown("malformed %s: %v", path, err), false
	}
	return parsed, lease.Inspection{}, true
}

// parseStat parses /proc/PID/stat. The comm (field 2) is in parentheses and
// may itself hold spaces and ")", so fields are counted from the LAST ")".
func parseStat(pid int, data []byte) (procStat, error) {
	text := string(data)
	open := strings.IndexByte(text, '(')
	end := strings.LastIndexByte(text, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("no parenthesised command name")
	}
	if field := strings.TrimSpace(text[:open]); field != strconv.Itoa(pid) {
		return procStat{}, fmt.Errorf("PID field %q, want %d", field, pid)
	}
	fields := strings.Fields(text[end+1:])
	if len(fields) < statFieldsAfterCommMin {
		return procStat{}, fmt.Errorf("%d fields after the command name, want at least %d",
			len(fields), statFieldsAfterCommMin)
	}
	state := fields[0] // field 3
	if len(state) != 1 {
		return procStat{}, fmt.Errorf("state %q is not one letter", state)
	}
	threads, err := strconv.Atoi(fields[20-3])
	if err != nil || threads < 0 {
		return procStat{}, fmt.Errorf("num_threads %q is not a count", fields[20-3])
	}
	startTime := fields[22-3]
	if _, err := strconv.ParseUint(startTime, 10, 64); err != nil || strings.HasPrefix(startTime, "+") {
		return procStat{}, fmt.Errorf("starttime %q is not a decimal tick count", startTime)
	}
	return procStat{state: state[0], threads: threads, startTime: startTime}, nil
}

// readHost fills the host-wide fields: hostname and boot id. A host without
// a boot_id file leaves BootID empty, which ClassifyRecord treats as unknown.
func (i *procInspector) readHost(_ int, _ string, identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	hostname, err := i.hostname()
	if err != nil {
		return unknown("reading the hostname: %v", err), false
	}
	if hostname == "" {
		return unknown("the hostname is empty"), false
	}
	identity.Hostname = hostname
	path := filepath.Join(i.root, "sys", "kernel", "random", "boot_id")
	data, err := i.access.readFile(path)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return lease.Inspection{}, true
	case err != nil:
		// Not under /proc/PID: no error here means the process is absent.
		return unknown("reading %s: %v", path, err), false
	}
	identity.BootID = strings.TrimSpace(string(data))
	return lease.Inspection{}, true
}

// readUID takes the real UID: the first number of the "Uid:" line of
// /proc/PID/status.
func (i *procInspector) readUID(_ int, dir string, identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	path := filepath.Join(dir, "status")
	data, err := i.access.readFile(path)
	if err != nil {
		return failed(path, err), false
	}
	for line := range strings.Lines(string(data)) {
		rest, found := strings.CutPrefix(line, "Uid:")
		if !found {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			break
		}
		uid, err := strconv.ParseUint(fields[0], 10, 31)
		if err != nil {
			return unknown("malformed %s: Uid %q: %v", path, fields[0], err), false
		}
		identity.UID = int(uid)
		return lease.Inspection{}, true
	}
	return unknown("malformed %s: no Uid line", path), false
}

// readNamespace takes the PID namespace's id: the inode of /proc/PID/ns/pid.
func (i *procInspector) readNamespace(_ int, dir string, identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	path := filepath.Join(dir, "ns", "pid")
	info, err := i.access.stat(path)
	if err != nil {
		return failed(path, err), false
	}
	identity.PIDNamespace = strconv.FormatUint(info.Ino, 10)
	return lease.Inspection{}, true
}

// readExecutable takes the executable's dev+ino (stat, following
// /proc/PID/exe) and its path (readlink; it may end in " (deleted)").
//
// A process whose leader has released its memory (a zombie, or a leader on
// its way out) has no exe link: ENOENT. Its live threads, if any, still
// have one under /proc/PID/task/TID/exe, so those are tried. A single
// threaded zombie keeps empty executable fields (ClassifyRecord calls it
// stale before looking at them); any other process whose executable cannot
// be read is unknown, never "changed".
func (i *procInspector) readExecutable(pid int, dir string, identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	path := filepath.Join(dir, "exe")
	err := i.readExecutableAt(path, identity)
	if err == nil {
		return lease.Inspection{}, true
	}
	if !errors.Is(err, syscall.ENOENT) {
		return failed(path, err), false
	}
	if i.readTaskExecutable(dir, identity) {
		return lease.Inspection{}, true
	}
	// The state now, not at the first read: the process may have exited
	// since (then stat is gone too, and the PID is absent).
	stat, failure, ok := i.readStat(pid, dir)
	if !ok {
		return failure, false
	}
	if stat.state == 'Z' && stat.threads <= 1 {
		return lease.Inspection{}, true
	}
	return unknown("%s is missing while the process (state %c, %d threads) still exists",
		path, stat.state, stat.threads), false
}

func (i *procInspector) readExecutableAt(path string, identity *lease.ProcessIdentity) error {
	info, err := i.access.stat(path)
	if err != nil {
		return err
	}
	target, err := i.access.readlink(path)
	if err != nil {
		return err
	}
	identity.Executable = target
	identity.ExecutableDev = info.Dev
	identity.ExecutableIno = info.Ino
	return nil
}

// readTaskExecutable looks for any thread of the process whose exe link is
// still readable, checking at most taskEntriesMax threads.
func (i *procInspector) readTaskExecutable(dir string, identity *lease.ProcessIdentity) bool {
	entries, err := i.access.readDir(filepath.Join(dir, "task"))
	if err != nil {
		return false
	}
	if len(entries) > taskEntriesMax {
		entries = entries[:taskEntriesMax]
	}
	for _, entry := range entries {
		if i.readExecutableAt(filepath.Join(dir, "task", entry.Name, "exe"), identity) == nil {
			return true
		}
	}
	return false
}
