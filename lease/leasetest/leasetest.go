// Package leasetest is the one fake environment of the engines' tests: scripted
// fakes of the injected interfaces (Clock, Inspector, IDSource; declared in
// package env, aliased by package lease) and a recording, hookable FS wrapper
// (HookFS). Tests of lease, admission, dirlease, leasecli, internal/statecas
// and internal/statefile, the hostile suite, realstress and the bench run the
// real engine on a real temporary directory (lease/osenv.NewFS) or on simfs
// while deciding exactly what time it is, which processes are alive, which
// identifiers come next and what happens between two FS calls. Every fake is
// safe for concurrent use (tests run under -race) and fully deterministic:
// internal/archtest holds this package to the engines' determinism rules, so a
// fake cannot smuggle in real time, randomness or map order.
package leasetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// Epoch is the wall-clock start of every Clock: a fixed instant, so records
// written in tests have reproducible timestamps.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Clock is a scripted lease.Clock. Time moves only when the test says so or
// when the engine sleeps: Sleep advances both wall and monotonic time by d at
// once and returns immediately, so a bounded wait of one second costs
// microseconds of real time.
type Clock struct {
	mu        sync.Mutex
	wall      time.Time
	monotonic time.Duration
	sleeps    int
	slept     time.Duration
	onSleep   func(sleepIndex int, d time.Duration)
}

var _ lease.Clock = (*Clock)(nil)

// NewClock returns a Clock at wall time Epoch and monotonic time one hour (a
// non-zero origin catches code that treats zero as "unset").
func NewClock() *Clock { return NewClockAt(Epoch) }

// NewClockAt returns a Clock at wall time wall and monotonic time one hour,
// for tests whose records carry deadlines relative to a chosen instant.
func NewClockAt(wall time.Time) *Clock {
	return &Clock{wall: wall, monotonic: time.Hour}
}

// Now returns the scripted wall time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

// Monotonic returns the scripted monotonic time.
func (c *Clock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.monotonic
}

// SinceBoot is the monotonic time: the Clock is also the host's boot clock
// (statecas.BootClock) for every controller that shares it.
func (c *Clock) SinceBoot() time.Duration { return c.Monotonic() }

// Sleep advances both clocks by d (if positive) and returns nil, or returns
// ctx.Err() without advancing when ctx is already done. The OnSleep hook, if
// set, runs after the advance, outside the lock: tests use it to change the
// world while the engine waits (a guard holder dies, a PID is reused).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	if d > 0 {
		c.wall = c.wall.Add(d)
		c.monotonic += d
		c.slept += d
	}
	c.sleeps++
	index := c.sleeps
	hook := c.onSleep
	c.mu.Unlock()
	if hook != nil {
		hook(index, d)
	}
	return nil
}

// OnSleep installs hook, called after every Sleep with its 1-based index.
func (c *Clock) OnSleep(hook func(sleepIndex int, d time.Duration)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onSleep = hook
}

// Advance moves both clocks forward by d.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("leasetest: Advance needs a non-negative duration; use StepWall to step the wall clock back")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
	c.monotonic += d
}

// StepWall steps only the wall clock (an NTP or operator step), forwards or
// backwards. Monotonic time does not move.
func (c *Clock) StepWall(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
}

// Sleeps returns how many times Sleep was called and the total time slept.
func (c *Clock) Sleeps() (count int, total time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sleeps, c.slept
}

// IDs is a sequential lease.IDSource: the n-th ID is the valid version-4 UUID
// "00000000-0000-4000-8000-" followed by n in 12 hex digits. Optional Prefix
// (up to 8 hex digits) replaces the leading zeros, so two sources in one test
// cannot collide.
type IDs struct {
	mu     sync.Mutex
	next   uint64
	prefix uint32
}

var _ lease.IDSource = (*IDs)(nil)

// NewIDs returns a source whose first ID ends in ...000000000001.
func NewIDs() *IDs { return &IDs{} }

// NewIDsWithPrefix returns a source whose IDs start with prefix in 8 hex digits.
func NewIDsWithPrefix(prefix uint32) *IDs { return &IDs{prefix: prefix} }

// NewID returns the next UUID.
func (s *IDs) NewID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", s.prefix, s.next)
}

// Issued returns how many IDs were handed out.
func (s *IDs) Issued() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// Default identity parts, shared by Identity and the tests that build on it.
const (
	Hostname      = "host-a"
	BootID        = "boot-1"
	PIDNamespace  = "4026531836"
	Executable    = "/usr/local/bin/leasekit"
	ExecutableDev = uint64(2049)
	ExecutableIno = uint64(131072)
)

// Identity returns a valid identity for pid on the default host: start time
// 1000+pid, the default boot id, namespace, executable and uid (UID).
func Identity(pid int) lease.ProcessIdentity {
	return IdentityOf(pid, UID, fmt.Sprint(1000+pid))
}

// IdentityOf returns a valid identity for pid on the default host, boot,
// namespace and executable, owned by uid, with start time startTime: tests
// that script several incarnations of one PID, or a foreign uid, say so.
func IdentityOf(pid, uid int, startTime string) lease.ProcessIdentity {
	return lease.ProcessIdentity{
		PID:           pid,
		StartTime:     startTime,
		BootID:        BootID,
		Executable:    Executable,
		ExecutableDev: ExecutableDev,
		ExecutableIno: ExecutableIno,
		Hostname:      Hostname,
		PIDNamespace:  PIDNamespace,
		UID:           uid,
	}
}

// Live is an Inspection of a running process with identity id.
func Live(id lease.ProcessIdentity) lease.Inspection {
	return lease.Inspection{Kind: lease.InspectLive, Identity: id, State: lease.StateRunning, Threads: 1}
}

// Zombie is an Inspection of a zombie with identity id and threads threads.
func Zombie(id lease.ProcessIdentity, threads int) lease.Inspection {
	return lease.Inspection{Kind: lease.InspectLive, Identity: id, State: lease.StateZombie, Threads: threads}
}

// Absent is an Inspection of a PID no process has.
func Absent() lease.Inspection { return lease.Inspection{Kind: lease.InspectAbsent} }

// Unknown is an Inspection that failed (EACCES, malformed /proc data).
func Unknown(diagnostic string) lease.Inspection {
	return lease.Inspection{Kind: lease.InspectUnknown, Diagnostic: diagnostic}
}

// Inspector is a scripted lease.Inspector: a table from PID to Inspection
// plus the identity Current returns. A PID not in the table is absent.
// Inspector is a value shared by several simulated "processes" of a test:
// each gets a View with its own current identity over the same table.
type Inspector struct {
	mu         sync.Mutex
	table      map[int]lease.Inspection
	current    lease.ProcessIdentity
	currentErr error
	inspected  map[int]int
	onInspect  func(pid int)
}

var _ lease.Inspector = (*Inspector)(nil)

// NewInspector returns an Inspector whose current process is current, which
// is also entered in the table as live.
func NewInspector(current lease.ProcessIdentity) *Inspector {
	in := &Inspector{table: make(map[int]lease.Inspection), inspected: make(map[int]int), current: current}
	in.table[current.PID] = Live(current)
	return in
}

// Current returns the scripted current identity, or the scripted error.
func (in *Inspector) Current() (lease.ProcessIdentity, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.current, in.currentErr
}

// Inspect returns the table entry for pid (absent when there is none), after
// running the OnInspect hook outside the lock.
func (in *Inspector) Inspect(pid int) lease.Inspection {
	in.mu.Lock()
	hook := in.onInspect
	in.mu.Unlock()
	if hook != nil {
		hook(pid)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.inspected[pid]++
	inspection, ok := in.table[pid]
	if !ok {
		return Absent()
	}
	return inspection
}

// SetCurrent changes the identity Current returns (the test now acts as
// another process) and enters it in the table as live.
func (in *Inspector) SetCurrent(current lease.ProcessIdentity) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.current = current
	in.currentErr = nil
	in.table[current.PID] = Live(current)
}

// FailCurrent makes Current return err.
func (in *Inspector) FailCurrent(err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.currentErr = err
}

// Set scripts the inspection of pid.
func (in *Inspector) Set(pid int, inspection lease.Inspection) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.table[pid] = inspection
}

// SetLive enters id as a running process.
func (in *Inspector) SetLive(id lease.ProcessIdentity) { in.Set(id.PID, Live(id)) }

// Kill removes pid from the table: it becomes absent.
func (in *Inspector) Kill(pid int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.table, pid)
}

// OnInspect installs hook, run before every Inspect.
func (in *Inspector) OnInspect(hook func(pid int)) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.onInspect = hook
}

// Inspected returns how many times pid was inspected.
func (in *Inspector) Inspected(pid int) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.inspected[pid]
}

// LivePIDs returns the PIDs scripted as live, sorted.
func (in *Inspector) LivePIDs() []int {
	in.mu.Lock()
	defer in.mu.Unlock()
	var pids []int
	for _, pid := range slices.Sorted(maps.Keys(in.table)) {
		if in.table[pid].Kind == lease.InspectLive {
			pids = append(pids, pid)
		}
	}
	return pids
}

// View is a lease.Inspector over a shared Inspector's table with its own
// current identity: one View per simulated process.
type View struct {
	Table   *Inspector
	Process lease.ProcessIdentity
}

var _ lease.Inspector = View{}

// As returns a View of in's table as the process id, which it enters in the
// table as live.
func (in *Inspector) As(id lease.ProcessIdentity) View {
	in.SetLive(id)
	return View{Table: in, Process: id}
}

// Current returns the view's own identity.
func (v View) Current() (lease.ProcessIdentity, error) { return v.Process, nil }

// Inspect reads the shared table.
func (v View) Inspect(pid int) lease.Inspection { return v.Table.Inspect(pid) }
