package simproc

import (
	"errors"
	"testing"
)

// TestSpawnAtChosenPID: SpawnSpec.PID takes exactly that free PID (a
// PID-reuse impostor on a dead process's PID), refuses a PID in use, and
// leaves the allocation cursor where it was.
func TestSpawnAtChosenPID(t *testing.T) {
	h, _ := testHost(t, 16, 1)
	first, err := h.Spawn(SpawnSpec{Exe: "/usr/bin/a"})
	if err != nil {
		t.Fatal(err)
	}
	h.Exit(first)
	second, err := h.Spawn(SpawnSpec{Exe: "/usr/bin/b"})
	if err != nil {
		t.Fatal(err)
	}
	impostor, err := h.Spawn(SpawnSpec{Exe: "/usr/bin/a", PID: first.PID})
	if err != nil {
		t.Fatal(err)
	}
	if impostor.PID != first.PID || h.Lookup(0, first.PID) != impostor {
		t.Fatalf("impostor got PID %d, want the dead process's %d", impostor.PID, first.PID)
	}
	if _, err := h.Spawn(SpawnSpec{Exe: "/usr/bin/c", PID: second.PID}); !errors.Is(err, ErrPIDInUse) {
		t.Fatalf("spawn on a PID in use: %v, want ErrPIDInUse", err)
	}
	next, err := h.Spawn(SpawnSpec{Exe: "/usr/bin/d"})
	if err != nil {
		t.Fatal(err)
	}
	if next.PID != second.PID+1 {
		t.Fatalf("the next allocation got PID %d, want %d (the cursor must not move)", next.PID, second.PID+1)
	}
}
