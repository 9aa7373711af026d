package procfs

import (
	"strconv"
	"strings"
)

// NewSingleCaller is New for a Table that is never called concurrently
// (the simulator's, one per simulated process): it also keeps the path
// names of the last PIDs it inspected and the last strings it parsed (start
// times, boot id, PID namespace), and hands out the kept string when the
// bytes read are the same again, instead of a copy per read. What it
// returns is exactly what New's Table returns (TestSingleCallerEqualsNew).
func NewSingleCaller(root string, reader Reader) *Table {
	t := New(root, reader)
	t.single = true
	return t
}

// pidNames are the files of one PID that every inspection reads.
type pidNames struct {
	pid                           int
	dir, stat, status, nsPID, exe string
	// startTime is the start time last read from this PID's stat.
	startTime string
}

// newPIDNames writes the five names one after another into one buffer and
// slices them out of it: one allocation instead of six, for every PID an
// inspection meets (a sweep of a crowded directory meets more than the
// memo keeps).
func newPIDNames(root string, pid int) pidNames {
	var number [20]byte
	id := strconv.AppendInt(number[:0], int64(pid), 10)
	dirLen := len(root) + 1 + len(id)
	suffixes := [...]string{"", "/stat", "/status", "/ns/pid", "/exe"}
	var b strings.Builder
	b.Grow(len(suffixes)*dirLen + len("/stat/status/ns/pid/exe"))
	var ends [len(suffixes)]int
	for i, suffix := range suffixes {
		b.WriteString(root)
		b.WriteByte('/')
		b.Write(id)
		b.WriteString(suffix)
		ends[i] = b.Len()
	}
	all := b.String()
	name := func(i int) string { return all[ends[i]-dirLen-len(suffixes[i]) : ends[i]] }
	return pidNames{pid: pid, dir: name(0), stat: name(1), status: name(2), nsPID: name(3), exe: name(4)}
}

// memoPIDs is how many PIDs' names a memo keeps: a process inspects itself
// (Current) and one other PID at a time, mostly.
const memoPIDs = 4

// memo is a single-caller Table's cache; its zero value is empty.
type memo struct {
	pids    [memoPIDs]pidNames
	next    int // the slot the next new PID takes (round robin)
	boot    string
	ino     uint64
	inoText string
}

// namesOf returns pid's file names: kept ones for a single-caller Table.
// It returns a copy, so that a slot reused during an inspection (a caller
// interleaved with itself) cannot change the names under it.
func (t *Table) namesOf(pid int) pidNames {
	if !t.single {
		return newPIDNames(t.root, pid)
	}
	if slot := t.memo.slot(pid); slot != nil {
		return *slot
	}
	slot := &t.memo.pids[t.memo.next]
	t.memo.next = (t.memo.next + 1) % memoPIDs
	*slot = newPIDNames(t.root, pid)
	return *slot
}

// slot is pid's kept names, or nil.
func (m *memo) slot(pid int) *pidNames {
	for i := range m.pids {
		if m.pids[i].pid == pid && m.pids[i].dir != "" {
			return &m.pids[i]
		}
	}
	return nil
}

// startTime returns b as a string: the one kept for pid when equal.
func (t *Table) startTime(pid int, b []byte) string {
	if !t.single {
		return string(b)
	}
	if slot := t.memo.slot(pid); slot != nil {
		return t.keep(&slot.startTime, b)
	}
	return string(b)
}

// keep returns b as a string: for a single-caller Table, the one in slot
// when it is equal (and b, kept in slot, otherwise).
func (t *Table) keep(slot *string, b []byte) string {
	if !t.single {
		return string(b)
	}
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

// namespace formats a namespace inode: the kept text when it is the same.
func (t *Table) namespace(ino uint64) string {
	if !t.single {
		return strconv.FormatUint(ino, 10)
	}
	if t.memo.inoText == "" || t.memo.ino != ino {
		t.memo.ino, t.memo.inoText = ino, strconv.FormatUint(ino, 10)
	}
	return t.memo.inoText
}
