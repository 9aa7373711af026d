package simproc

import (
	"testing"
)

// TestCurrentMemoEqualsFreshRead holds Current's kept identity to what a
// fresh inspector (which renders and parses /proc for every call) reads,
// through every change of what Current renders from: an executable
// upgrade, a stop and continue, threads added and exiting, a zombie leader
// with threads left, a hostile comm, and a reboot.
func TestCurrentMemoEqualsFreshRead(t *testing.T) {
	h, now := testHost(t, 64, 1)
	p := spawn(t, h, SpawnSpec{UID: 1000})
	kept := h.Inspector(p)
	steps := []struct {
		name   string
		change func()
	}{
		{"spawned", func() {}},
		{"again", func() {}},
		{"clock moved", func() { *now += 5e9 }},
		{"upgraded", func() { h.UpgradeExe(p.ExePath) }},
		{"stopped", func() { h.Stop(p) }},
		{"continued", func() { h.Continue(p) }},
		{"thread added", func() { h.AddThread(p); h.AddThread(p) }},
		{"thread exited", func() { h.ThreadExit(p) }},
		{"hostile comm", func() { p.Comm = hostileComms[1] }},
		{"uid changed", func() { p.UID = 1001 }},
		{"zombie leader", func() { h.ExitZombie(p, 2) }},
		{"zombie's thread exited", func() { h.ThreadExit(p) }},
		{"rebooted", func() { h.Reboot("boot-2") }},
	}
	for _, step := range steps {
		step.change()
		got, gotErr := kept.Current()
		want, wantErr := h.Inspector(p).Current()
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%s: kept Current %+v (%v), fresh %+v (%v)", step.name, got, gotErr, want, wantErr)
		}
	}
}
