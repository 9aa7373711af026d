package simproc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// testHost returns a host whose clock the test sets through *now.
func testHost(t *testing.T, pidMax, namespaces int) (*Host, *time.Duration) {
	t.Helper()
	now := new(time.Duration)
	h := NewHost(HostConfig{Name: "alpha", PIDMax: pidMax, BootID: "boot-1", Namespaces: namespaces,
		SinceBoot: func() time.Duration { return *now }})
	return h, now
}

func spawn(t *testing.T, h *Host, spec SpawnSpec) *Proc {
	t.Helper()
	if spec.Exe == "" {
		spec.Exe = "/usr/bin/agent"
	}
	p, err := h.Spawn(spec)
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	return p
}

func TestPIDAllocationCyclesAndReuses(t *testing.T) {
	h, _ := testHost(t, 4, 1) // PIDs 1, 2, 3
	a := spawn(t, h, SpawnSpec{})
	b := spawn(t, h, SpawnSpec{})
	c := spawn(t, h, SpawnSpec{})
	if got := []int{a.PID, b.PID, c.PID}; got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("PIDs %v, want [1 2 3]", got)
	}
	if _, err := h.Spawn(SpawnSpec{Exe: "/bin/x"}); !errors.Is(err, ErrPIDExhausted) {
		t.Fatalf("spawn on a full table: %v, want ErrPIDExhausted", err)
	}
	h.Exit(b)
	d := spawn(t, h, SpawnSpec{})
	if d.PID != 2 {
		t.Fatalf("reused PID %d, want 2 (the only free one)", d.PID)
	}
	h.Exit(a)
	h.Exit(c)
	// The cursor is at 2: allocation resumes at 3, then wraps to 1.
	e := spawn(t, h, SpawnSpec{})
	f := spawn(t, h, SpawnSpec{})
	if e.PID != 3 || f.PID != 1 {
		t.Fatalf("PIDs %d, %d, want 3, 1", e.PID, f.PID)
	}
}

func TestZombieKeepsPIDUntilReaped(t *testing.T) {
	h, _ := testHost(t, 3, 1) // PIDs 1, 2
	a := spawn(t, h, SpawnSpec{})
	b := spawn(t, h, SpawnSpec{})
	h.Exit(b)
	h.ExitZombie(a, 1)
	c := spawn(t, h, SpawnSpec{})
	if c.PID != 2 {
		t.Fatalf("PID %d, want 2: the zombie holds 1", c.PID)
	}
	h.Reap(a)
	if a.State != Gone || h.Lookup(0, 1) != nil {
		t.Fatalf("reaped zombie: state %v, lookup %v", a.State, h.Lookup(0, 1))
	}
}

func TestChurnForcesReuse(t *testing.T) {
	h, _ := testHost(t, 10, 1)
	owner := spawn(t, h, SpawnSpec{}) // PID 1
	h.Exit(owner)
	if err := h.Churn(0, 8); err != nil { // PIDs 2..9
		t.Fatalf("churn: %v", err)
	}
	next := spawn(t, h, SpawnSpec{})
	if next.PID != owner.PID {
		t.Fatalf("PID %d after churn, want the dead owner's %d", next.PID, owner.PID)
	}
}

func TestSharedStartTickAndReuseIsStale(t *testing.T) {
	h, now := testHost(t, 2, 1) // one PID
	*now = 1234 * time.Millisecond
	first := spawn(t, h, SpawnSpec{})
	record := mustCurrent(t, h, first)
	h.Exit(first)
	*now += 3 * time.Millisecond // same 10 ms tick
	second := spawn(t, h, SpawnSpec{})
	if second.PID != first.PID || second.StartTicks != first.StartTicks {
		t.Fatalf("pid %d tick %d vs pid %d tick %d: want the same PID in the same tick",
			second.PID, second.StartTicks, first.PID, first.StartTicks)
	}
	if record.StartTime != "123" {
		t.Fatalf("start time %q, want 123 ticks", record.StartTime)
	}
	// Same PID, same tick, same executable: the identity rules cannot tell
	// them apart, which is exactly the hazard the engines must document.
	state := lease.ClassifyRecord(record, mustCurrent(t, h, second), h.Inspector(second))
	if state.Kind != lease.OwnerLive {
		t.Fatalf("classify: %+v, want live (indistinguishable)", state)
	}
}

func TestRebootRestartsPIDsAndChangesBoot(t *testing.T) {
	h, now := testHost(t, 100, 1)
	*now = 5 * time.Second
	a := spawn(t, h, SpawnSpec{})
	spawn(t, h, SpawnSpec{})
	record := mustCurrent(t, h, a)
	h.Reboot("boot-2")
	*now = 0
	if a.State != Gone {
		t.Fatalf("process after reboot is %v", a.State)
	}
	b := spawn(t, h, SpawnSpec{})
	if b.PID != 1 || b.StartTicks != 0 {
		t.Fatalf("first process after reboot: pid %d tick %d, want 1, 0", b.PID, b.StartTicks)
	}
	current := mustCurrent(t, h, b)
	if current.BootID != "boot-2" {
		t.Fatalf("boot id %q", current.BootID)
	}
	state := lease.ClassifyRecord(record, current, h.Inspector(b))
	if state.Kind != lease.OwnerStale || state.Reason != lease.StaleBootChanged {
		t.Fatalf("classify across reboot: %+v", state)
	}
	if _, err := h.Inspector(a).Current(); err == nil {
		t.Fatalf("Current of a process from the previous boot succeeded")
	}
}

func TestInspect(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(h *Host, self, target *Proc)
		wantKind    lease.InspectionKind
		wantState   lease.ProcessState
		wantDiag    string
		wantStale   string // classification reason, "" for live/unknown
		wantVerdict lease.OwnerKind
	}{
		{name: "running", setup: func(h *Host, self, target *Proc) {},
			wantKind: lease.InspectLive, wantVerdict: lease.OwnerLive},
		{name: "absent", setup: func(h *Host, self, target *Proc) { h.Exit(target) },
			wantKind: lease.InspectAbsent, wantVerdict: lease.OwnerStale, wantStale: lease.StalePIDAbsent},
		{name: "zombie one thread", setup: func(h *Host, self, target *Proc) { h.ExitZombie(target, 1) },
			wantKind: lease.InspectLive, wantState: lease.StateZombie, wantVerdict: lease.OwnerStale, wantStale: lease.StaleZombie},
		{name: "zombie leader with threads", setup: func(h *Host, self, target *Proc) { h.ExitZombie(target, 3) },
			wantKind: lease.InspectLive, wantState: lease.StateZombie, wantVerdict: lease.OwnerLive},
		{name: "other uid denied", setup: func(h *Host, self, target *Proc) { h.DenyOtherUIDs = true; target.UID = 0 },
			wantKind: lease.InspectUnknown, wantDiag: "permission denied", wantVerdict: lease.OwnerUnknown},
		{name: "same uid allowed", setup: func(h *Host, self, target *Proc) { h.DenyOtherUIDs = true },
			wantKind: lease.InspectLive, wantVerdict: lease.OwnerLive},
		{name: "injected fault", setup: func(h *Host, self, target *Proc) {
			h.InspectFault = func(pid int) bool { return pid == target.PID }
		}, wantKind: lease.InspectUnknown, wantDiag: "permission denied reading /proc/1/", wantVerdict: lease.OwnerUnknown},
		{name: "upgrade keeps running inode", setup: func(h *Host, self, target *Proc) { h.UpgradeExe(target.ExePath) },
			wantKind: lease.InspectLive, wantVerdict: lease.OwnerLive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := testHost(t, 100, 1)
			target := spawn(t, h, SpawnSpec{UID: 1000, Threads: 2})
			self := spawn(t, h, SpawnSpec{UID: 1000, Exe: "/usr/bin/other"})
			record := mustCurrent(t, h, target)
			tt.setup(h, self, target)
			got := h.Inspector(self).Inspect(target.PID)
			if got.Kind != tt.wantKind {
				t.Fatalf("kind %v, want %v (%+v)", got.Kind, tt.wantKind, got)
			}
			if got.Kind == lease.InspectLive && got.State != tt.wantState {
				t.Fatalf("state %v, want %v", got.State, tt.wantState)
			}
			if !strings.Contains(got.Diagnostic, tt.wantDiag) {
				t.Fatalf("diagnostic %q, want it to contain %q", got.Diagnostic, tt.wantDiag)
			}
			verdict := lease.ClassifyRecord(record, mustCurrent(t, h, self), h.Inspector(self))
			if verdict.Kind != tt.wantVerdict || (tt.wantStale != "" && verdict.Reason != tt.wantStale) {
				t.Fatalf("classify: %+v, want %v %q", verdict, tt.wantVerdict, tt.wantStale)
			}
		})
	}
}

func TestUpgradeExecutable(t *testing.T) {
	h, _ := testHost(t, 100, 1)
	old := spawn(t, h, SpawnSpec{Exe: "/usr/bin/agent"})
	record := mustCurrent(t, h, old)
	h.UpgradeExe("/usr/bin/agent")
	upgraded := spawn(t, h, SpawnSpec{Exe: "/usr/bin/agent"})
	if upgraded.ExeIno == old.ExeIno {
		t.Fatalf("upgrade kept inode %d", old.ExeIno)
	}
	now := mustCurrent(t, h, old)
	if now.ExecutableIno != record.ExecutableIno || now.Executable != "/usr/bin/agent (deleted)" {
		t.Fatalf("running process after upgrade: ino %d exe %q", now.ExecutableIno, now.Executable)
	}
	if got := mustCurrent(t, h, upgraded).Executable; got != "/usr/bin/agent" {
		t.Fatalf("new process exe %q", got)
	}
	// A PID reused by the upgraded binary in the same tick is caught by the inode.
	h2, _ := testHost(t, 2, 1)
	first := spawn(t, h2, SpawnSpec{})
	rec := mustCurrent(t, h2, first)
	h2.Exit(first)
	h2.UpgradeExe(first.ExePath)
	second := spawn(t, h2, SpawnSpec{})
	verdict := lease.ClassifyRecord(rec, mustCurrent(t, h2, second), h2.Inspector(second))
	if verdict.Kind != lease.OwnerStale || verdict.Reason != lease.StaleExecutableChanged {
		t.Fatalf("classify: %+v, want stale by executable", verdict)
	}
}

func TestNamespacesAreSeparate(t *testing.T) {
	h, _ := testHost(t, 100, 2)
	a := spawn(t, h, SpawnSpec{Namespace: 0})
	b := spawn(t, h, SpawnSpec{Namespace: 1})
	if a.PID != 1 || b.PID != 1 {
		t.Fatalf("PIDs %d, %d: each namespace starts at 1", a.PID, b.PID)
	}
	ra := mustCurrent(t, h, a)
	h.Exit(a)
	if got := h.Inspector(b).Inspect(1); got.Kind != lease.InspectLive || got.Identity.PIDNamespace != h.NamespaceID(1) {
		t.Fatalf("inspect in namespace 1: %+v", got)
	}
	rb := mustCurrent(t, h, b)
	if ra.PIDNamespace == rb.PIDNamespace {
		t.Fatalf("namespaces share id %q", ra.PIDNamespace)
	}
	if verdict := lease.ClassifyRecord(ra, rb, h.Inspector(b)); verdict.Kind != lease.OwnerUnknown {
		t.Fatalf("cross-namespace classify: %+v, want unknown", verdict)
	}
}

func TestIdentityValidates(t *testing.T) {
	h, _ := testHost(t, 0, 1)
	p := spawn(t, h, SpawnSpec{UID: 7})
	id := mustCurrent(t, h, p)
	if err := id.Validate(); err != nil {
		t.Fatalf("validate %+v: %v", id, err)
	}
	if id.Hostname != "alpha" || id.BootID != "boot-1" || id.UID != 7 || id.ExecutableDev != ExeDev {
		t.Fatalf("identity %+v", id)
	}
}

func TestHashFollowsState(t *testing.T) {
	h1, _ := testHost(t, 100, 1)
	h2, _ := testHost(t, 100, 1)
	for _, h := range []*Host{h1, h2} {
		spawn(t, h, SpawnSpec{})
		spawn(t, h, SpawnSpec{UID: 3})
	}
	if h1.Hash() != h2.Hash() {
		t.Fatal("equal hosts hash differently")
	}
	h2.ExitZombie(h2.Lookup(0, 2), 1)
	if h1.Hash() == h2.Hash() {
		t.Fatal("a zombie did not change the hash")
	}
}

func mustCurrent(t *testing.T, h *Host, p *Proc) lease.ProcessIdentity {
	t.Helper()
	id, err := h.Inspector(p).Current()
	if err != nil {
		t.Fatalf("current: %v", err)
	}
	return id
}

func TestChurnOnFullTableFailsBounded(t *testing.T) {
	h, _ := testHost(t, 3, 1) // PIDs 1, 2
	spawn(t, h, SpawnSpec{})
	zombie := spawn(t, h, SpawnSpec{})
	h.ExitZombie(zombie, 1)
	if err := h.Churn(0, 5); !errors.Is(err, ErrPIDExhausted) {
		t.Fatalf("churn on a table full of live and zombie processes: %v", err)
	}
	h.Reap(zombie)
	if err := h.Churn(0, 5); err != nil {
		t.Fatalf("churn with one free PID: %v", err)
	}
	if p := spawn(t, h, SpawnSpec{}); p.PID != 2 {
		t.Fatalf("PID %d, want the only free one, 2", p.PID)
	}
}

// TestSpawnAtEarlierTick: a boot-time daemon after a reboot can take a dead
// owner's PID with its start tick and executable; only the boot id then
// tells them apart. A start tick after now is refused with a panic.
func TestSpawnAtEarlierTick(t *testing.T) {
	h, now := testHost(t, 100, 1)
	*now = 70 * time.Millisecond
	owner := spawn(t, h, SpawnSpec{})
	record := mustCurrent(t, h, owner)
	h.Reboot("boot-2")
	*now = 500 * time.Millisecond
	ticks := owner.StartTicks
	daemon := spawn(t, h, SpawnSpec{StartTicks: &ticks, UID: 7})
	if daemon.PID != owner.PID || daemon.StartTicks != 7 || daemon.ExeIno != owner.ExeIno {
		t.Fatalf("daemon pid %d tick %d ino %d, want pid %d tick 7 ino %d", daemon.PID, daemon.StartTicks,
			daemon.ExeIno, owner.PID, owner.ExeIno)
	}
	if h.TicksNow() != 50 {
		t.Fatalf("ticks now %d, want 50", h.TicksNow())
	}
	later := spawn(t, h, SpawnSpec{})
	if later.StartTicks != 50 {
		t.Fatalf("spawn without an explicit tick started at %d, want now (50)", later.StartTicks)
	}
	state := lease.ClassifyRecord(record, mustCurrent(t, h, later), h.Inspector(later))
	if state.Kind != lease.OwnerStale || state.Reason != lease.StaleBootChanged {
		t.Fatalf("classify of the owner with its twin on its PID: %+v, want stale by boot id", state)
	}
	observed := h.Inspector(later).Inspect(owner.PID)
	if observed.Identity.StartTime != record.StartTime || observed.Identity.ExecutableIno != record.ExecutableIno {
		t.Fatalf("twin identity %+v, want the owner's start time and executable", observed.Identity)
	}
	future := uint64(51)
	defer func() {
		if recover() == nil {
			t.Fatalf("spawn at tick 51 with the clock at tick 50 did not panic")
		}
	}()
	_, _ = h.Spawn(SpawnSpec{Exe: "/usr/bin/agent", StartTicks: &future})
}
