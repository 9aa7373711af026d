// Package simproc simulates the process tables of hosts for the leasekit
// simulator: cyclic PID allocation with reuse, start times in clock ticks since
// boot (so two processes can share a tick), boot ids that change at reboot,
// PID namespaces, executables that an upgrade replaces, zombies with and
// without live threads, process trees with groups and sessions (tree.go,
// Host.Groups), and inspection that fails with EACCES for another user's
// processes. A Host's Inspector implements lease.Inspector by running
// internal/procfs, the real inspector's parser, over /proc files the host
// renders (with hostile comms, zombies, deleted executables, EACCES and
// processes reaped between two reads), so the engines' identity rules and
// the real parsing and errno mapping run unchanged against it.
//
// A Host is not safe for concurrent use; the simulator runs one simulated
// process at a time.
package simproc

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// TicksPerSecond is USER_HZ: /proc/PID/stat reports start times in 10 ms ticks.
const TicksPerSecond = 100

// tickDuration is the length of one start-time tick.
const tickDuration = time.Second / TicksPerSecond

// namespaceIDBase is the inode number Linux gives the initial PID namespace
// (/proc/1/ns/pid -> pid:[4026531836]). Namespace i of a host gets base+i, so
// the initial namespace of every host has the same id, as on real machines;
// hosts are told apart by hostname.
const namespaceIDBase = 4026531836

// exeInodeBase is the first inode number a host gives an executable.
const exeInodeBase = 1000

// ExeDev is the device number of every host's executables (st_dev of the
// root filesystem, an arbitrary but fixed value).
const ExeDev = 0x803

// PIDMaxDefault is Linux's default /proc/sys/kernel/pid_max.
const PIDMaxDefault = 32768

// ErrPIDExhausted is returned by Spawn and Churn when every PID of the
// namespace is in use (running or zombie), as fork(2) fails with EAGAIN.
var ErrPIDExhausted = errors.New("simproc: no free PID in namespace")

// State is a simulated process's lifecycle state.
type State int

const (
	// Running covers every live scheduler state but zombie.
	Running State = iota + 1
	// Zombie is an exited process not yet reaped: its PID stays in use.
	Zombie
	// Gone is a reaped (or rebooted-away) process: its PID is free.
	Gone
)

func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Zombie:
		return "zombie"
	case Gone:
		return "gone"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// HostConfig describes a simulated host.
type HostConfig struct {
	// Name is the hostname.
	Name string
	// PIDMax is the exclusive upper bound of PIDs (/proc/sys/kernel/pid_max):
	// PIDs run 1..PIDMax-1. Small values force reuse. Zero means PIDMaxDefault.
	PIDMax int
	// BootID is the boot id of the first boot.
	BootID string
	// Namespaces is the number of PID namespaces (containers) on the host;
	// zero means one.
	Namespaces int
	// SinceBoot reports the host's monotonic time since boot; start times
	// are taken from it. The simulator derives it from its virtual clock and
	// restarts it at reboot.
	SinceBoot func() time.Duration
}

// SpawnSpec describes a process to start.
type SpawnSpec struct {
	// Exe is the absolute path of the executable; the process runs the
	// inode the path names at spawn time.
	Exe string
	// UID is the process's real user id.
	UID uint32
	// Namespace is the index (0-based) of the PID namespace to start in.
	Namespace int
	// Threads is the thread count; zero means one.
	Threads int
	// StartTicks, when set, is the start time (ticks since the current
	// boot) instead of now. It models a process that started earlier in
	// this boot, such as a boot-time daemon, which starts at the same tick
	// and often gets the same PID every boot. It must not exceed the
	// host's current tick: a process cannot start in the future.
	StartTicks *uint64
	// PID, when not zero, is the PID to take instead of the next free one:
	// a process that lands on a chosen dead process's PID (a PID-reuse
	// impostor). It must be free; the allocation cursor does not move.
	PID int
}

// ErrPIDInUse says SpawnSpec.PID names a PID that is in use.
var ErrPIDInUse = errors.New("simproc: the chosen PID is in use")

// Proc is one process incarnation. Its fields are read-only for callers; the
// Host changes State and Threads.
type Proc struct {
	PID int
	// StartTicks is the start time in ticks since boot (/proc/PID/stat
	// field 22).
	StartTicks uint64
	ExePath    string
	ExeIno     uint64
	// Comm is the command name /proc shows (stat field 2, status Name):
	// the executable's base name, or a hostile name the process gave itself.
	Comm    string
	UID     uint32
	State   State
	Threads int
	// Stopped is true while a Running process is stopped (SIGSTOP, state T
	// in /proc): it is alive, it only does not run (Host.Stop, Continue).
	Stopped bool
	// NS is the index of the process's PID namespace.
	NS int
	// Boot is the host's boot count when the process started: a process of
	// an earlier boot is gone.
	Boot int
	// threaded: the simulator runs its threads (thread.go).
	threaded bool

	// PPID, PGID and SID place a forked process in the process tree
	// (tree.go); all three are 0 for a process outside any tree.
	PPID, PGID, SID int
	// Subreaper is PR_SET_CHILD_SUBREAPER; Pdeathsig is PR_SET_PDEATHSIG
	// (0: none).
	Subreaper bool
	Pdeathsig int
	// kids counts the children not yet reaped; inTree says a tree call
	// touched the process (its hash then covers the tree fields).
	kids   int
	inTree bool
}

// namespace is one PID namespace's process table.
type namespace struct {
	// procs holds every process whose PID is in use (running or zombie).
	procs map[int]*Proc
	// cursor is the last PID handed out; allocation resumes after it.
	cursor int
}

// Host is a simulated host's process table.
type Host struct {
	name       string
	pidMax     int
	bootID     string
	boot       int
	sinceBoot  func() time.Duration
	namespaces []namespace
	// exes maps an executable path to the inode it currently names.
	exes     map[string]uint64
	inodeMax uint64

	// DenyOtherUIDs makes Inspect of another user's process fail with
	// EACCES, as reading /proc/PID/exe does without ptrace access.
	DenyOtherUIDs bool
	// InspectFault, when set, is asked on every Inspect of a PID in use;
	// true makes one of the inspection's reads fail with an injected EACCES.
	InspectFault func(pid int) bool
	// ProcHazard, when set, draws the /proc hazards (see Hazard): asked at
	// every Spawn (a hostile comm) and every Inspect of a zombie (reaped
	// between two reads) that InspectFault left alone.
	ProcHazard func(kind Hazard) bool
	// OnVanish, when set, is called after the vanish hazard reaped a zombie
	// in the middle of an inspection, for the simulator's reap hooks.
	OnVanish func(p *Proc)
	// Probe, when set, fires the rendering's coverage probes (ProbeEACCES
	// and the others).
	Probe func(name string)

	// eaccesInjected counts the injected EACCES faults: it rotates the
	// file that fails.
	eaccesInjected int
}

// NewHost returns a host with an empty process table.
func NewHost(cfg HostConfig) *Host {
	if cfg.Name == "" {
		panic("simproc: host needs a name")
	}
	if cfg.SinceBoot == nil {
		panic("simproc: host needs a SinceBoot clock")
	}
	if cfg.PIDMax == 0 {
		cfg.PIDMax = PIDMaxDefault
	}
	if cfg.PIDMax < 2 {
		panic(fmt.Sprintf("simproc: pid_max %d leaves no PID", cfg.PIDMax))
	}
	if cfg.Namespaces == 0 {
		cfg.Namespaces = 1
	}
	if cfg.Namespaces < 0 {
		panic(fmt.Sprintf("simproc: %d namespaces", cfg.Namespaces))
	}
	h := &Host{
		name:       cfg.Name,
		pidMax:     cfg.PIDMax,
		bootID:     cfg.BootID,
		sinceBoot:  cfg.SinceBoot,
		namespaces: make([]namespace, cfg.Namespaces),
		exes:       make(map[string]uint64),
		inodeMax:   exeInodeBase,
	}
	for i := range h.namespaces {
		h.namespaces[i].procs = make(map[int]*Proc)
	}
	return h
}

// Name returns the hostname.
func (h *Host) Name() string { return h.name }

// BootID returns the current boot id.
func (h *Host) BootID() string { return h.bootID }

// Boot returns how many times the host has rebooted.
func (h *Host) Boot() int { return h.boot }

// PIDMax returns the host's pid_max.
func (h *Host) PIDMax() int { return h.pidMax }

// NamespaceCount returns the number of PID namespaces.
func (h *Host) NamespaceCount() int { return len(h.namespaces) }

// NamespaceID returns the id (as /proc/PID/ns/pid shows it) of namespace ns.
func (h *Host) NamespaceID(ns int) string {
	h.checkNamespace(ns)
	if ns < len(namespaceIDs) {
		return namespaceIDs[ns]
	}
	return strconv.Itoa(namespaceIDBase + ns)
}

// namespaceIDs are the first namespaces' ids, formatted once: every
// Inspect and Current asks for one.
var namespaceIDs = func() []string {
	ids := make([]string, 8)
	for ns := range ids {
		ids[ns] = strconv.Itoa(namespaceIDBase + ns)
	}
	return ids
}()

// ExeInode returns the inode the executable path currently names, assigning
// one on first use.
func (h *Host) ExeInode(path string) uint64 {
	ino, ok := h.exes[path]
	if !ok {
		h.inodeMax++
		ino = h.inodeMax
		h.exes[path] = ino
	}
	return ino
}

// UpgradeExe replaces the executable at path with a new inode, as a package
// upgrade does (write a new file, rename it over the old). Running processes
// keep the old inode; later spawns get the new one.
func (h *Host) UpgradeExe(path string) {
	h.inodeMax++
	h.exes[path] = h.inodeMax
}

// Spawn starts a process, allocating the next free PID of its namespace.
func (h *Host) Spawn(spec SpawnSpec) (*Proc, error) {
	h.checkNamespace(spec.Namespace)
	if len(spec.Exe) == 0 || spec.Exe[0] != '/' {
		panic(fmt.Sprintf("simproc: executable %q is not absolute", spec.Exe))
	}
	if spec.Threads == 0 {
		spec.Threads = 1
	}
	if spec.Threads < 0 {
		panic(fmt.Sprintf("simproc: %d threads", spec.Threads))
	}
	startTicks := h.TicksNow()
	if spec.StartTicks != nil {
		if *spec.StartTicks > startTicks {
			panic(fmt.Sprintf("simproc: host %s: start tick %d is after the current tick %d",
				h.name, *spec.StartTicks, startTicks))
		}
		startTicks = *spec.StartTicks
	}
	ns := &h.namespaces[spec.Namespace]
	pid, err := h.pidFor(ns, spec.PID)
	if err != nil {
		return nil, err
	}
	p := &Proc{
		PID:        pid,
		StartTicks: startTicks,
		ExePath:    spec.Exe,
		ExeIno:     h.ExeInode(spec.Exe),
		Comm:       commOf(spec.Exe),
		UID:        spec.UID,
		State:      Running,
		Threads:    spec.Threads,
		NS:         spec.Namespace,
		Boot:       h.boot,
	}
	if h.ProcHazard != nil && h.ProcHazard(HazardHostileComm) {
		p.Comm = hostileComms[pid%len(hostileComms)]
	}
	ns.procs[pid] = p
	return p, nil
}

// pidFor returns chosen if it is a free PID, or the next free one when
// chosen is zero.
func (h *Host) pidFor(ns *namespace, chosen int) (int, error) {
	if chosen == 0 {
		return h.allocate(ns)
	}
	if chosen < 1 || chosen >= h.pidMax {
		panic(fmt.Sprintf("simproc: host %s: PID %d is outside 1..%d", h.name, chosen, h.pidMax-1))
	}
	if _, used := ns.procs[chosen]; used || ns.namesGroup(chosen) {
		return 0, ErrPIDInUse
	}
	return chosen, nil
}

// allocate returns the next free PID after the cursor, wrapping from
// pidMax-1 to 1, and moves the cursor to it. It probes at most pidMax-1 PIDs.
func (h *Host) allocate(ns *namespace) (int, error) {
	if len(ns.procs) >= h.pidMax-1 {
		return 0, ErrPIDExhausted
	}
	pid := ns.cursor
	groupNumbers := 0
	for probe := 1; probe < h.pidMax; probe++ {
		pid++
		if pid >= h.pidMax {
			pid = 1
		}
		if _, used := ns.procs[pid]; used {
			continue
		}
		if ns.namesGroup(pid) {
			groupNumbers++
			continue
		}
		ns.cursor = pid
		return pid, nil
	}
	if groupNumbers > 0 {
		return 0, ErrPIDExhausted // every free PID still numbers a group or session
	}
	panic(fmt.Sprintf("simproc: %d PIDs in use of %d yet none free", len(ns.procs), h.pidMax-1))
}

// namesGroup reports whether pid is still the number of a process group or
// session with a member in ns: Linux hands out no such PID (a group's
// number names it for as long as it has a member). Only forked processes
// and those that called setpgid or setsid can carry another's number.
func (ns *namespace) namesGroup(pid int) bool {
	for _, q := range ns.procs {
		if q.inTree && (q.PGID == pid || q.SID == pid) {
			return true
		}
	}
	return false
}

// TicksNow is the current time since boot in start-time ticks: the start
// time a process spawned now gets.
func (h *Host) TicksNow() uint64 {
	since := h.sinceBoot()
	if since < 0 {
		panic(fmt.Sprintf("simproc: host %s: time since boot %v is negative", h.name, since))
	}
	return uint64(since / tickDuration)
}

// Exit ends a running process; its parent reaps it at once, so its PID is
// free.
func (h *Host) Exit(p *Proc) {
	h.checkLive(p)
	p.State = Gone
	p.Threads = 0
	p.Stopped = false // SIGKILL ends a stopped process too
	delete(h.namespaces[p.NS].procs, p.PID)
	if p.inTree {
		h.leaveTree(p, true)
	}
}

// Stop stops a running process (SIGSTOP): /proc shows it in state T. It is
// alive (its PID, start time and identity unchanged) and must never be
// judged stale; it only does not run until Continue.
func (h *Host) Stop(p *Proc) {
	h.checkLive(p)
	if p.State != Running || p.Stopped {
		panic(fmt.Sprintf("simproc: stop of a %v process (stopped %v)", p.State, p.Stopped))
	}
	p.Stopped = true
}

// Continue resumes a stopped process (SIGCONT).
func (h *Host) Continue(p *Proc) {
	h.checkLive(p)
	if p.State != Running || !p.Stopped {
		panic(fmt.Sprintf("simproc: continue of a %v process (stopped %v)", p.State, p.Stopped))
	}
	p.Stopped = false
}

// ExitZombie ends p's thread-group leader without reaping it. threadsLeft is
// the number of threads /proc still counts: 1 for a plain zombie (dead), more
// for a leader whose other threads still run (alive).
func (h *Host) ExitZombie(p *Proc, threadsLeft int) {
	h.checkLive(p)
	if p.State != Running {
		panic(fmt.Sprintf("simproc: zombie of a %v process", p.State))
	}
	if threadsLeft < 1 {
		panic(fmt.Sprintf("simproc: zombie with %d threads", threadsLeft))
	}
	p.State = Zombie
	p.Threads = threadsLeft
	p.Stopped = false
	if p.inTree && p.kids > 0 {
		h.orphan(p)
	}
}

// Reap removes a zombie, freeing its PID.
func (h *Host) Reap(p *Proc) {
	h.checkLive(p)
	if p.State != Zombie {
		panic(fmt.Sprintf("simproc: reap of a %v process", p.State))
	}
	p.State = Gone
	p.Threads = 0
	delete(h.namespaces[p.NS].procs, p.PID)
	if p.inTree {
		h.leaveTree(p, true)
	}
}

// vanish reaps zombie p during an inspection (HazardVanish).
func (h *Host) vanish(p *Proc) {
	h.Reap(p)
	if h.OnVanish != nil {
		h.OnVanish(p)
	}
}

// Reboot ends every process, installs a new boot id and restarts PID
// allocation at 1. The caller restarts SinceBoot.
func (h *Host) Reboot(newBootID string) {
	if newBootID == h.bootID && newBootID != "" {
		panic(fmt.Sprintf("simproc: reboot of %s keeps boot id %q", h.name, newBootID))
	}
	for i := range h.namespaces {
		ns := &h.namespaces[i]
		for pid, p := range ns.procs {
			p.State = Gone
			p.Threads = 0
			delete(ns.procs, pid)
		}
		ns.cursor = 0
	}
	h.bootID = newBootID
	h.boot++
}

// Churn spawns and reaps n short-lived processes in namespace ns, moving the
// PID cursor forward so that the next spawns reuse PIDs sooner.
func (h *Host) Churn(ns, n int) error {
	h.checkNamespace(ns)
	if n < 0 {
		panic(fmt.Sprintf("simproc: churn of %d processes", n))
	}
	table := &h.namespaces[ns]
	for i := 0; i < n; i++ {
		if _, err := h.allocate(table); err != nil {
			return err
		}
	}
	return nil
}

// Lookup returns the process using pid in namespace ns, or nil.
func (h *Host) Lookup(ns, pid int) *Proc {
	h.checkNamespace(ns)
	return h.namespaces[ns].procs[pid]
}

// Procs returns the number of PIDs in use in namespace ns.
func (h *Host) Procs(ns int) int {
	h.checkNamespace(ns)
	return len(h.namespaces[ns].procs)
}

func (h *Host) checkNamespace(ns int) {
	if ns < 0 || ns >= len(h.namespaces) {
		panic(fmt.Sprintf("simproc: host %s has no namespace %d", h.name, ns))
	}
}

// checkLive asserts that p is in this host's table under its PID.
func (h *Host) checkLive(p *Proc) {
	if p.State == Gone {
		panic(fmt.Sprintf("simproc: process %d is gone", p.PID))
	}
	if h.namespaces[p.NS].procs[p.PID] != p {
		panic(fmt.Sprintf("simproc: process %d is not in host %s's table", p.PID, h.name))
	}
}

// Hash summarises the host's state for the simulator's determinism check. It
// is independent of map iteration order: per-process hashes are summed.
func (h *Host) Hash() uint64 {
	sum := mix(hashString(h.bootID) ^ uint64(h.boot))
	for i := range h.namespaces {
		ns := &h.namespaces[i]
		sum = mix(sum ^ uint64(ns.cursor)<<8 ^ uint64(i))
		var procs uint64
		for _, p := range ns.procs {
			procs += p.hash()
		}
		sum = mix(sum ^ procs)
	}
	return sum
}

func (p *Proc) hash() uint64 {
	x := mix(uint64(p.PID) ^ uint64(p.NS)<<32)
	x = mix(x ^ p.StartTicks)
	x = mix(x ^ p.ExeIno ^ uint64(p.UID)<<40)
	x = mix(x ^ uint64(p.State)<<56 ^ uint64(p.Threads))
	if p.Stopped {
		x = mix(x ^ 'T')
	}
	return p.treeHash(x)
}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hashString is FNV-1a.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
