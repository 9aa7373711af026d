package simproc

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/procfs"
	"github.com/leasekit/leasekit/lease"
)

// The layer rules keep internal/require out of simproc's tests: these few helpers
// stand in for require.
func equal(t *testing.T, want, got any, context ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s: got %#v, want %#v", fmt.Sprint(context...), got, want)
	}
}

func noError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func errorIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v is not %v", err, target)
	}
}

func contains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}

// probeCounter collects a host's probes.
func probeCounter(h *Host) map[string]int {
	probes := map[string]int{}
	h.Probe = func(name string) { probes[name]++ }
	return probes
}

// TestRenderedStatIsGolden pins the rendered stat and status of one
// process: fields where the kernel puts them, CPU time growing with age.
func TestRenderedStatIsGolden(t *testing.T) {
	h, now := testHost(t, 100, 1)
	*now = 2 * time.Second
	p := spawn(t, h, SpawnSpec{UID: 1000, Threads: 3})
	*now = 23 * time.Second
	want := "1 (agent) S 1 1 1 0 -1 4194560 0 0 0 0 700 300 0 0 20 0 3 0 200 12345678 321 18446744073709551615" +
		" 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	equal(t, want, string(h.renderStat(nil, p)))
	equal(t, "Name:\tagent\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t1\nNgid:\t0\nPid:\t1\nPPid:\t1\n"+
		"TracerPid:\t0\nUid:\t1000\t1000\t1000\t1000\nGid:\t0\t0\t0\t0\nThreads:\t3\n", string(renderStatus(nil, p)))
	parsed, err := procfs.ParseStat(1, h.renderStat(nil, p))
	noError(t, err)
	equal(t, procfs.Stat{State: 'S', Threads: 3, StartTime: "200"}, parsed)
}

// TestHostileCommsParse: every hostile comm fits the kernel's 15 bytes and
// parses to the process's real fields; the probe fires for each.
func TestHostileCommsParse(t *testing.T) {
	for i, comm := range hostileComms {
		equal(t, true, len(comm) <= commLenMax, comm)
		h, now := testHost(t, 100, 1)
		h.ProcHazard = func(kind Hazard) bool { return kind == HazardHostileComm }
		probes := probeCounter(h)
		for range i { // PIDs 1..i: the comm is chosen by PID
			spawn(t, h, SpawnSpec{})
		}
		self := spawn(t, h, SpawnSpec{})
		target := spawn(t, h, SpawnSpec{Threads: 2})
		equal(t, hostileComms[target.PID%len(hostileComms)], target.Comm)
		*now = time.Minute // stime far from starttime
		got := h.Inspector(self).Inspect(target.PID)
		equal(t, lease.InspectLive, got.Kind, "comm ", target.Comm, ": ", got.Diagnostic)
		equal(t, lease.StateRunning, got.State, "comm ", target.Comm)
		equal(t, 2, got.Threads, "comm ", target.Comm)
		equal(t, "0", got.Identity.StartTime, "comm ", target.Comm)
		equal(t, 1, probes[ProbeCommWithParen])
	}
}

func TestZombieInspection(t *testing.T) {
	for _, threads := range []int{1, 3} {
		h, _ := testHost(t, 100, 1)
		probes := probeCounter(h)
		self := spawn(t, h, SpawnSpec{})
		target := spawn(t, h, SpawnSpec{Threads: threads})
		record := mustCurrent(t, h, target)
		h.ExitZombie(target, threads)
		got := h.Inspector(self).Inspect(target.PID)
		equal(t, lease.InspectLive, got.Kind, got.Diagnostic)
		equal(t, lease.StateZombie, got.State)
		equal(t, threads, got.Threads)
		if threads == 1 {
			equal(t, "", got.Identity.Executable, "a single-threaded zombie has released its memory")
			equal(t, map[string]int{ProbeZombieSingle: 1}, probes)
		} else {
			equal(t, record, got.Identity, "a live thread's exe names the executable")
			equal(t, map[string]int{ProbeZombieMulti: 1}, probes)
		}
	}
}

func TestDeletedExecutableProbe(t *testing.T) {
	h, _ := testHost(t, 100, 1)
	probes := probeCounter(h)
	self := spawn(t, h, SpawnSpec{})
	target := spawn(t, h, SpawnSpec{})
	h.UpgradeExe(target.ExePath)
	got := h.Inspector(self).Inspect(target.PID)
	equal(t, "/usr/bin/agent (deleted)", got.Identity.Executable)
	equal(t, target.ExeIno, got.Identity.ExecutableIno)
	equal(t, 1, probes[ProbeExeDeleted])
}

// TestVanishBetweenReads: the zombie is reaped after the first read of
// stat; the next read fails (ENOENT, or ESRCH for an odd PID whose file was
// open), the inspection says absent and the simulator hears of the reap.
func TestVanishBetweenReads(t *testing.T) {
	for _, wantESRCH := range []bool{false, true} {
		h, _ := testHost(t, 100, 1)
		probes := probeCounter(h)
		h.ProcHazard = func(kind Hazard) bool { return kind == HazardVanish }
		var vanished []*Proc
		h.OnVanish = func(p *Proc) { vanished = append(vanished, p) }
		self := spawn(t, h, SpawnSpec{}) // PID 1
		if wantESRCH {
			spawn(t, h, SpawnSpec{}) // the target gets PID 3
		}
		target := spawn(t, h, SpawnSpec{Threads: 2})
		equal(t, wantESRCH, target.PID%2 == 1)
		running := h.Inspector(self).Inspect(target.PID)
		equal(t, lease.InspectLive, running.Kind, "only zombies vanish")
		h.ExitZombie(target, 2)
		got := h.Inspector(self).Inspect(target.PID)
		equal(t, lease.Inspection{Kind: lease.InspectAbsent}, got)
		equal(t, []*Proc{target}, vanished)
		equal(t, Gone, target.State)
		equal(t, true, h.Lookup(0, target.PID) == nil, "reaped")
		equal(t, 1, probes[ProbeVanished])
		if wantESRCH {
			equal(t, 1, probes[ProbeESRCH])
		} else {
			equal(t, 0, probes[ProbeESRCH])
		}
	}
}

// TestInjectedEACCESRotates: each injected fault hits the next of stat,
// status, ns/pid and exe, and every one is unknown, never absent.
func TestInjectedEACCESRotates(t *testing.T) {
	h, _ := testHost(t, 100, 1)
	probes := probeCounter(h)
	self := spawn(t, h, SpawnSpec{})
	target := spawn(t, h, SpawnSpec{})
	h.InspectFault = func(int) bool { return true }
	for i := range 2 * len(eaccesFiles) {
		file := eaccesFiles[(target.PID+i)%len(eaccesFiles)]
		got := h.Inspector(self).Inspect(target.PID)
		equal(t, lease.InspectUnknown, got.Kind)
		contains(t, got.Diagnostic, "permission denied reading /proc/2/"+file)
	}
	equal(t, 2*len(eaccesFiles), probes[ProbeEACCES])
	h.InspectFault = nil
	equal(t, lease.InspectAbsent, h.Inspector(self).Inspect(50).Kind, "a free PID is absent")
}

func TestViewErrorsArePathErrors(t *testing.T) {
	h, _ := testHost(t, 100, 1)
	self := spawn(t, h, SpawnSpec{})
	view := &procView{host: h, self: self}
	_, err := view.ReadFile("/proc/9/stat")
	var pathErr *fs.PathError
	equal(t, true, errors.As(err, &pathErr), "a *fs.PathError")
	errorIs(t, err, syscall.ENOENT)
	_, err = view.Readlink("/proc/1/cwd")
	errorIs(t, err, syscall.ENOENT)
	gone := goneError{&fs.PathError{Op: "read", Path: "/proc/1/stat", Err: syscall.ESRCH}}
	errorIs(t, gone, syscall.ESRCH)
	errorIs(t, gone, procfs.ErrNoSuchProcess)
}
