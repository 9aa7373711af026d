// Package statecastest holds small deterministic fakes of the lease
// interfaces for the admission, dirlease and statecas tests: a scripted
// Inspector, a settable Clock and a sequential IDSource. (lease/leasetest,
// when it lands, offers the shared versions.)
package statecastest

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// Host, Namespace and Boot are the defaults of Identity.
const (
	Host      = "host-a"
	Namespace = "4026531836"
	Boot      = "6f1c2b9e-0d7a-4a53-9a53-3d1f3c0b2a11"
)

// Identity is a valid process identity on the default host, namespace and
// boot; start distinguishes incarnations of one PID.
func Identity(pid, uid int, start string) lease.ProcessIdentity {
	return lease.ProcessIdentity{
		PID: pid, StartTime: start, BootID: Boot, Executable: "/usr/bin/exporter",
		ExecutableDev: 2049, ExecutableIno: 131, Hostname: Host, PIDNamespace: Namespace, UID: uid,
	}
}

// Inspector is a scripted lease.Inspector: Self is the current process,
// Table answers Inspect; a PID not in Table is absent.
type Inspector struct {
	mu    sync.Mutex
	Self  lease.ProcessIdentity
	table *processTable
}

type processTable struct {
	mu      sync.Mutex
	entries map[int]lease.Inspection
}

// NewInspector scripts self as current and live.
func NewInspector(self lease.ProcessIdentity) *Inspector {
	inspector := &Inspector{Self: self, table: &processTable{entries: make(map[int]lease.Inspection)}}
	inspector.SetLive(self)
	return inspector
}

// As returns an Inspector for another process on the same scripted process
// table, and scripts self as live.
func (i *Inspector) As(self lease.ProcessIdentity) *Inspector {
	other := &Inspector{Self: self, table: i.table}
	other.SetLive(self)
	return other
}

// Current returns Self.
func (i *Inspector) Current() (lease.ProcessIdentity, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.Self, nil
}

// SetSelf changes the current process (another controller, a reboot).
func (i *Inspector) SetSelf(self lease.ProcessIdentity) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.Self = self
}

// Inspect answers from the script.
func (i *Inspector) Inspect(pid int) lease.Inspection {
	i.table.mu.Lock()
	defer i.table.mu.Unlock()
	if inspection, ok := i.table.entries[pid]; ok {
		return inspection
	}
	return lease.Inspection{Kind: lease.InspectAbsent}
}

// SetLive scripts id's PID as live with identity id.
func (i *Inspector) SetLive(id lease.ProcessIdentity) {
	i.set(id.PID, lease.Inspection{Kind: lease.InspectLive, Identity: id, State: lease.StateRunning, Threads: 1})
}

// SetZombie scripts id's PID as a zombie with the given thread count.
func (i *Inspector) SetZombie(id lease.ProcessIdentity, threads int) {
	i.set(id.PID, lease.Inspection{Kind: lease.InspectLive, Identity: id, State: lease.StateZombie, Threads: threads})
}

// SetAbsent scripts pid as absent.
func (i *Inspector) SetAbsent(pid int) {
	i.table.mu.Lock()
	defer i.table.mu.Unlock()
	delete(i.table.entries, pid)
}

// SetUnknown scripts pid as uninspectable (EACCES).
func (i *Inspector) SetUnknown(pid int) {
	i.set(pid, lease.Inspection{Kind: lease.InspectUnknown, Diagnostic: "EACCES (scripted)"})
}

func (i *Inspector) set(pid int, inspection lease.Inspection) {
	i.table.mu.Lock()
	defer i.table.mu.Unlock()
	i.table.entries[pid] = inspection
}

// Clock is a settable lease.Clock. Sleep advances it instead of waiting.
type Clock struct {
	mu        sync.Mutex
	now       time.Time
	monotonic time.Duration
}

// NewClock starts at wall time now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the scripted wall time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Monotonic returns the scripted monotonic time.
func (c *Clock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.monotonic
}

// Sleep advances both clocks by d.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

// SinceBoot is the monotonic time: the Clock is also the host's boot clock
// (statecas.BootClock) for every controller that shares it.
func (c *Clock) SinceBoot() time.Duration { return c.Monotonic() }

// StepWall steps the wall clock alone by d (either sign), as an NTP step
// or an operator does; the monotonic and boot clocks do not move.
func (c *Clock) StepWall(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Advance moves both clocks forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.monotonic += d
}

// IDs is a sequential lease.IDSource of valid version-4 UUIDs; Prefix keeps
// the IDs of several sources in one test distinct.
type IDs struct {
	mu     sync.Mutex
	Prefix uint32
	next   uint64
}

// NewID returns the next UUID.
func (s *IDs) NewID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", s.Prefix, s.next)
}

// HookFS wraps a lease.FS and calls Before(op, path) before every
// OpenFile, RenameNoReplace, Rename and Remove (op names the method, path is
// the destination for renames), so a test can interleave another
// controller's steps at an exact point. Before may be nil.
type HookFS struct {
	lease.FS
	Before func(op, path string)
}

func (h *HookFS) hook(op, path string) {
	if h.Before != nil {
		h.Before(op, path)
	}
}

// RenameNoReplace hooks, then renames.
func (h *HookFS) RenameNoReplace(oldpath, newpath string) error {
	h.hook("RenameNoReplace", newpath)
	return h.FS.RenameNoReplace(oldpath, newpath)
}

// Rename hooks, then renames.
func (h *HookFS) Rename(oldpath, newpath string) error {
	h.hook("Rename", newpath)
	return h.FS.Rename(oldpath, newpath)
}

// Remove hooks, then removes.
func (h *HookFS) Remove(name string) error {
	h.hook("Remove", name)
	return h.FS.Remove(name)
}

// OpenFile hooks, then opens; the directory-handle calls of the returned
// File hook too ("OpenAt", "RemoveAt" with the joined path).
func (h *HookFS) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	h.hook("OpenFile", name)
	file, err := h.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: file, h: h}, nil
}

// hookFile hooks the directory-handle calls that change or open entries.
type hookFile struct {
	lease.File
	h *HookFS
}

// OpenAt hooks, then opens relative to the directory.
func (f *hookFile) OpenAt(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	f.h.hook("OpenAt", path.Join(f.Name(), name))
	file, err := f.File.OpenAt(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: file, h: f.h}, nil
}

// RemoveAt hooks, then removes relative to the directory.
func (f *hookFile) RemoveAt(name string, dir bool) error {
	f.h.hook("RemoveAt", path.Join(f.Name(), name))
	return f.File.RemoveAt(name, dir)
}
