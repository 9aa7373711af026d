package lease_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
)

// modelOwner is the sequential model's view of the lease.
type modelOwner struct {
	generation string
	process    lease.ProcessIdentity
	epoch      uint64
}

// machine drives a real Manager per simulated process, on a real
// directory, against a small sequential model of the lease:
//
//   - acquire: no owner → acquired; owner's process alive → held; owner's
//     process gone (absent, or its PID reused) → acquired after exactly one
//     reclaim, whose record is kept in quarantine;
//   - release(g): g current → released (by any process: the capability);
//     otherwise not-owner;
//   - withCurrentLease(g): runs iff g is current and the caller is the
//     owning process; otherwise a fence error;
//   - epochs strictly increase over every acquire.
type machine struct {
	ns     string
	fs     lease.FS
	clock  *leasetest.Clock
	table  *leasetest.Inspector
	ids    *leasetest.IDs
	slots  []lease.ProcessIdentity
	alive  []bool
	starts int

	owner       *modelOwner
	generations []string
	lastEpoch   uint64
	reclaims    int
	leftovers   int
}

const slotCount = 3

func newMachine(t *rapid.T, dir string) *machine {
	m := &machine{
		ns: filepath.Join(dir, "ns"), fs: osenv.NewFS(), clock: leasetest.NewClock(),
		table: leasetest.NewInspector(leasetest.Identity(100)), ids: leasetest.NewIDs(),
	}
	for slot := range slotCount {
		id := leasetest.Identity(slot + 1)
		m.slots = append(m.slots, id)
		m.alive = append(m.alive, true)
		m.table.SetLive(id)
	}
	return m
}

func (m *machine) manager(t *rapid.T, slot int) *lease.Manager {
	mgr, err := lease.NewManager(lease.Config{Namespace: m.ns, RootID: rootID, FS: m.fs, Clock: m.clock,
		Inspector: leasetest.View{Table: m.table, Process: m.slots[slot]}, IDs: m.ids})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	return mgr
}

func (m *machine) liveSlot(t *rapid.T) int {
	slot := rapid.IntRange(0, slotCount-1).Draw(t, "slot")
	if !m.alive[slot] {
		t.Skip("slot is dead")
	}
	return slot
}

// ownerAlive is the model's liveness rule: the owner's PID runs the same
// process (same start time).
func (m *machine) ownerAlive() (alive bool, reason string) {
	for slot, id := range m.slots {
		if id.PID != m.owner.process.PID {
			continue
		}
		switch {
		case !m.alive[slot]:
			return false, lease.StalePIDAbsent
		case id.StartTime != m.owner.process.StartTime:
			return false, lease.StaleStartChanged
		}
		return true, ""
	}
	panic("owner PID outside the slots")
}

func (m *machine) Acquire(t *rapid.T) {
	slot := m.liveSlot(t)
	result, err := m.manager(t, slot).Acquire(context.Background(), request)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	m.leftovers = 0 // every guarded acquire cleans them, whatever it decides
	wantReclaims := 0
	if m.owner != nil {
		alive, reason := m.ownerAlive()
		if alive {
			if result.Kind != lease.Held || result.Owner.Generation != m.owner.generation {
				t.Fatalf("acquire: want held by %s, got %+v", m.owner.generation, result)
			}
			return
		}
		wantReclaims = 1
		if len(result.Reclaimed) != 1 || result.Reclaimed[0].Reason != reason ||
			result.Reclaimed[0].Owner.Generation != m.owner.generation {
			t.Fatalf("acquire: want one reclaim of %s (%s), got %+v", m.owner.generation, reason, result.Reclaimed)
		}
	}
	if result.Kind != lease.Acquired || len(result.Reclaimed) != wantReclaims {
		t.Fatalf("acquire: want acquired with %d reclaims, got %+v", wantReclaims, result)
	}
	if result.Owner.Epoch <= m.lastEpoch {
		t.Fatalf("acquire: epoch %d does not exceed %d", result.Owner.Epoch, m.lastEpoch)
	}
	if result.Owner.Identity() != m.slots[slot] {
		t.Fatalf("acquire: owner identity %+v, want %+v", result.Owner.Identity(), m.slots[slot])
	}
	m.reclaims += wantReclaims
	m.lastEpoch = result.Owner.Epoch
	m.owner = &modelOwner{generation: result.Owner.Generation, process: m.slots[slot], epoch: result.Owner.Epoch}
	m.generations = append(m.generations, result.Owner.Generation)
}

func (m *machine) drawGeneration(t *rapid.T) string {
	if len(m.generations) == 0 || rapid.IntRange(0, 4).Draw(t, "forged") == 0 {
		return "00000000-0000-4000-8000-ffffffffffff"
	}
	return rapid.SampledFrom(m.generations).Draw(t, "generation")
}

func (m *machine) Release(t *rapid.T) {
	slot := m.liveSlot(t)
	generation := m.drawGeneration(t)
	result, err := m.manager(t, slot).Release(context.Background(), generation)
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	m.leftovers = 0
	if m.owner != nil && m.owner.generation == generation {
		if result.Kind != lease.Released {
			t.Fatalf("release of the current generation: got %+v", result)
		}
		m.owner = nil
		return
	}
	if result.Kind != lease.NotOwner || (m.owner == nil) != (result.Owner == nil) {
		t.Fatalf("release of a stale generation: got %+v", result)
	}
}

func (m *machine) WithCurrentLease(t *rapid.T) {
	slot := m.liveSlot(t)
	generation := m.drawGeneration(t)
	ran := false
	err := m.manager(t, slot).WithCurrentLease(context.Background(), generation,
		func(_ context.Context, owner lease.Owner) error {
			ran = true
			if owner.Generation != generation {
				return fmt.Errorf("fn got generation %s, want %s", owner.Generation, generation)
			}
			return nil
		})
	want := m.owner != nil && m.owner.generation == generation && m.owner.process == m.slots[slot]
	var fence *lease.FenceError
	switch {
	case want && (err != nil || !ran):
		t.Fatalf("withCurrentLease by the owner: ran=%v err=%v", ran, err)
	case !want && (ran || !errors.As(err, &fence)):
		t.Fatalf("withCurrentLease by a non-owner: ran=%v err=%v", ran, err)
	}
}

func (m *machine) Kill(t *rapid.T) {
	slot := m.liveSlot(t)
	m.alive[slot] = false
	m.table.Kill(m.slots[slot].PID)
}

// Restart starts a new process on a slot's PID: PID reuse, new start time.
func (m *machine) Restart(t *rapid.T) {
	slot := rapid.IntRange(0, slotCount-1).Draw(t, "slot")
	m.starts++
	m.slots[slot].StartTime = fmt.Sprint(5000 + m.starts)
	m.alive[slot] = true
	m.table.SetLive(m.slots[slot])
}

// CrashLeftover plants what a crash mid-acquire or mid-release leaves.
func (m *machine) CrashLeftover(t *rapid.T) {
	m.leftovers++
	dir := filepath.Join(m.ns, fmt.Sprintf(".receiver.prepare-crash%d", m.leftovers))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Check compares the disk with the model after every action.
func (m *machine) Check(t *rapid.T) {
	projection, err := m.manager(t, 0).Inspect(context.Background())
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	if m.owner == nil {
		if projection.Kind != lease.Empty {
			t.Fatalf("inspect: want empty, got %+v", projection)
		}
	} else if projection.Kind != lease.Owned || projection.Owner.Generation != m.owner.generation ||
		projection.Owner.Epoch != m.owner.epoch {
		t.Fatalf("inspect: want owner %s, got %+v", m.owner.generation, projection)
	}
	quarantined, err := os.ReadDir(filepath.Join(m.ns, "quarantine"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if len(quarantined) != m.reclaims {
		t.Fatalf("quarantine holds %d entries, want one per reclaim (%d): nothing is deleted", len(quarantined), m.reclaims)
	}
	entries, err := os.ReadDir(m.ns)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	prepares := 0
	for _, entry := range entries {
		switch name := entry.Name(); {
		case name == "receiver.lifecycle.guard.json":
			t.Fatalf("the guard outlived its call")
		case strings.HasPrefix(name, ".receiver.prepare-"):
			prepares++
		}
	}
	if prepares != m.leftovers {
		t.Fatalf("%d prepare leftovers on disk, model says %d", prepares, m.leftovers)
	}
}

func TestManagerAgainstSequentialModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp(fastTempRoot(), "lease-rapid-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		m := newMachine(t, dir)
		t.Repeat(rapid.StateMachineActions(m))
	})
}

// fastTempRoot prefers a tmpfs for the many fsyncs of the state machine
// (the engine's fsync order is checked by TestDurabilityOrder instead).
func fastTempRoot() string {
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
		return "/dev/shm"
	}
	return ""
}
