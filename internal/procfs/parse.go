package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/leasekit/leasekit/lease"
)

// Stat is the part of /proc/PID/stat the identity rules use.
type Stat struct {
	// State is field 3: R, S, D, T, Z, ...
	State byte
	// Threads is num_threads, field 20.
	Threads int
	// StartTime is starttime, field 22, in clock ticks since boot.
	StartTime string
}

// ParseStat parses /proc/PID/stat. The comm (field 2) is in parentheses and
// may itself hold spaces and ")" (a process names itself: prctl, or the
// executable's file name), so fields are counted from the LAST ")". It
// works on the bytes (the simulator parses stat at every inspection): only
// the start time is copied out.
func ParseStat(pid int, data []byte) (Stat, error) {
	parsed, startTime, err := parseStat(pid, data)
	if err != nil {
		return Stat{}, err
	}
	parsed.StartTime = string(startTime)
	return parsed, nil
}

// parseStat is ParseStat leaving the start time in data (the Table's memo
// then decides whether it needs a copy).
func parseStat(pid int, data []byte) (Stat, []byte, error) {
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Stat{}, nil, fmt.Errorf("no parenthesised command name")
	}
	var pidText [20]byte
	if field := bytes.TrimSpace(data[:open]); !bytes.Equal(field, strconv.AppendInt(pidText[:0], int64(pid), 10)) {
		return Stat{}, nil, fmt.Errorf("PID field %q, want %d", field, pid)
	}
	fields, count := statFields(data[end+1:])
	if count < statFieldsAfterCommMin {
		return Stat{}, nil, fmt.Errorf("%d fields after the command name, want at least %d",
			count, statFieldsAfterCommMin)
	}
	state := fields[0] // field 3
	if len(state) != 1 {
		return Stat{}, nil, fmt.Errorf("state %q is not one letter", state)
	}
	threads, ok := parseCount(fields[1])
	if !ok {
		return Stat{}, nil, fmt.Errorf("num_threads %q is not a count", fields[1])
	}
	startTime := fields[2]
	if !isDecimalTicks(startTime) {
		return Stat{}, nil, fmt.Errorf("starttime %q is not a decimal tick count", startTime)
	}
	return Stat{State: state[0], Threads: threads}, startTime, nil
}

// isDecimalTicks is strconv.ParseUint(s, 10, 64) succeeding (which takes
// no sign and no underscore in base 10): digits only, one at least, whose
// value is at most 2^64-1 (leading zeros allowed).
func isDecimalTicks(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	return len(b) < len(maxUint64Text) || (len(b) == len(maxUint64Text) && string(b) <= maxUint64Text)
}

// maxUint64Text is 2^64-1 in decimal.
const maxUint64Text = "18446744073709551615"

// countDigitsMax bounds a parsed count: num_threads is far below 10^9.
const countDigitsMax = 9

// parseCount parses a non-negative decimal count of at most countDigitsMax
// digits, without sign.
func parseCount(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > countDigitsMax {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// statFields returns fields 3 (state), 20 (num_threads) and 22
// (starttime) of the text after the comm, and how many whitespace-separated
// fields it has (counting stops at statFieldsAfterCommMin). It is
// bytes.Fields without the allocation, for ASCII whitespace: the kernel
// prints nothing else after the comm.
func statFields(text []byte) (fields [3][]byte, count int) {
	const stateField, threadsField, startTimeField = 3, 20, 22
	for i := 0; i < len(text) && count < statFieldsAfterCommMin; {
		if isSpace(text[i]) {
			i++
			continue
		}
		start := i
		for i < len(text) && !isSpace(text[i]) {
			i++
		}
		// count numbers the fields after the comm from 0, so stat field N
		// (1-based, comm is field 2) is count N-3.
		switch count {
		case stateField - 3:
			fields[0] = text[start:i]
		case threadsField - 3:
			fields[1] = text[start:i]
		case startTimeField - 3:
			fields[2] = text[start:i]
		}
		count++
	}
	return fields, count
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// ParseUID takes the real UID: the first number of the "Uid:" line of
// /proc/PID/status. A plain ASCII count of up to countDigitsMax digits (every
// uid the kernel prints below 10^9) is read in place; anything else takes
// parseUIDField's general path, which also words the error. Both answer as
// bytes.Fields and strconv.ParseUint would (TestParseUIDFastEqualsGeneral).
func ParseUID(data []byte) (int, error) {
	for len(data) > 0 {
		line := data
		if end := bytes.IndexByte(data, '\n'); end >= 0 {
			line, data = data[:end+1], data[end+1:]
		} else {
			data = nil
		}
		rest, found := bytes.CutPrefix(line, uidPrefix)
		if !found {
			continue
		}
		if field, ok := firstField(rest); ok {
			if uid, ok := parseCount(field); ok {
				return uid, nil
			}
		}
		return parseUIDField(rest)
	}
	return 0, errNoUIDLine
}

var (
	uidPrefix    = []byte("Uid:")
	errNoUIDLine = errors.New("no Uid line")
)

// parseUIDField parses the first field of a Uid line's rest in general.
func parseUIDField(rest []byte) (int, error) {
	fields := bytes.Fields(rest)
	if len(fields) == 0 {
		return 0, errNoUIDLine
	}
	uid, err := strconv.ParseUint(string(fields[0]), 10, 31)
	if err != nil {
		return 0, fmt.Errorf("status: Uid %q: %v", fields[0], err)
	}
	return int(uid), nil
}

// firstField is the first field of b split at ASCII spaces, or ok false
// for none. It may differ from bytes.Fields(b)[0] only when b holds a
// non-ASCII byte (bytes.Fields then splits at Unicode spaces too), and then
// the field it returns holds one, which parseCount refuses.
func firstField(b []byte) (field []byte, ok bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	start := i
	for i < len(b) && !isSpace(b[i]) {
		i++
	}
	return b[start:i], i > start
}

// readHost fills the host-wide fields: hostname and boot id. A host without
// a boot_id file leaves BootID empty, which ClassifyRecord treats as unknown.
func (t *Table) readHost(identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	hostname, err := t.reader.Hostname()
	if err != nil {
		return unknown("reading the hostname: %v", err), false
	}
	if hostname == "" {
		return unknown("the hostname is empty"), false
	}
	identity.Hostname = hostname
	name := t.bootIDPath
	data, err := t.reader.ReadFile(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return lease.Inspection{}, true
	case err != nil:
		// Not under /proc/PID: no error here means the process is absent.
		return unknown("reading %s: %v", name, err), false
	}
	identity.BootID = t.keep(&t.memo.boot, bytes.TrimSpace(data))
	return lease.Inspection{}, true
}

func (t *Table) readUID(name string, identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	data, err := t.reader.ReadFile(name)
	if err != nil {
		return Failed(name, err), false
	}
	uid, err := ParseUID(data)
	if err != nil {
		return unknown("malformed %s: %v", name, err), false
	}
	identity.UID = uid
	return lease.Inspection{}, true
}

// readNamespace takes the PID namespace's id: the inode of /proc/PID/ns/pid.
func (t *Table) readNamespace(name string, identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	info, err := t.reader.Stat(name)
	if err != nil {
		return Failed(name, err), false
	}
	identity.PIDNamespace = t.namespace(info.Ino)
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
func (t *Table) readExecutable(pid int, names *pidNames, identity *lease.ProcessIdentity) (lease.Inspection, bool) {
	name := names.exe
	err := t.readExecutableAt(name, identity)
	if err == nil {
		return lease.Inspection{}, true
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Failed(name, err), false
	}
	if t.readTaskExecutable(names.dir, identity) {
		return lease.Inspection{}, true
	}
	// The state now, not at the first read: the process may have exited
	// since (then stat is gone too, and the PID is absent).
	stat, failure, ok := t.readStat(pid, names)
	if !ok {
		return failure, false
	}
	if stat.State == 'Z' && stat.Threads <= 1 {
		return lease.Inspection{}, true
	}
	return unknown("%s is missing while the process (state %c, %d threads) still exists",
		name, stat.State, stat.Threads), false
}

func (t *Table) readExecutableAt(name string, identity *lease.ProcessIdentity) error {
	info, err := t.reader.Stat(name)
	if err != nil {
		return err
	}
	target, err := t.reader.Readlink(name)
	if err != nil {
		return err
	}
	identity.Executable = target
	identity.ExecutableDev = info.Dev
	identity.ExecutableIno = info.Ino
	return nil
}

// readTaskExecutable looks for any thread of the process whose exe link is
// still readable, checking at most TaskEntriesMax threads.
func (t *Table) readTaskExecutable(dir string, identity *lease.ProcessIdentity) bool {
	entries, err := t.reader.ReadDir(dir + "/task")
	if err != nil {
		return false
	}
	if len(entries) > TaskEntriesMax {
		entries = entries[:TaskEntriesMax]
	}
	for _, entry := range entries {
		if t.readExecutableAt(dir+"/task/"+entry.Name+"/exe", identity) == nil {
			return true
		}
	}
	return false
}
