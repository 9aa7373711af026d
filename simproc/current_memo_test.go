package simproc

import (
	"strings"
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

// TestInspectMemoEqualsFreshRead holds Inspect's kept answer to what a
// fresh inspector reads, probes included, through every change of the
// inspected PID: its process stopped, continued, upgraded, renamed, made a
// zombie leader with threads, reaped, its PID taken by another process,
// another uid under the ptrace access check, and a reboot.
func TestInspectMemoEqualsFreshRead(t *testing.T) {
	h, now := testHost(t, 64, 1)
	var probes []string
	h.Probe = func(name string) { probes = append(probes, name) }
	self := spawn(t, h, SpawnSpec{UID: 1000})
	target := spawn(t, h, SpawnSpec{UID: 1000})
	pid := target.PID
	kept := h.Inspector(self)
	steps := []struct {
		name   string
		change func()
	}{
		{"spawned", func() {}},
		{"again", func() {}},
		{"clock moved", func() { *now += 5e9 }},
		{"stopped", func() { h.Stop(target) }},
		{"continued", func() { h.Continue(target) }},
		{"upgraded", func() { h.UpgradeExe(target.ExePath) }},
		{"hostile comm", func() { target.Comm = hostileComms[2] }},
		{"hostile and deleted again", func() {}},
		{"threads", func() { h.AddThread(target); h.AddThread(target) }},
		{"zombie leader", func() { h.ExitZombie(target, 3) }},
		{"zombie's thread exited", func() { h.ThreadExit(target) }},
		{"reaped", func() { h.Reap(target) }},
		{"PID reused", func() { target = spawn(t, h, SpawnSpec{UID: 1001, PID: pid}) }},
		{"uid checked", func() { h.DenyOtherUIDs = true }},
		{"uid not checked", func() { h.DenyOtherUIDs = false }},
		{"rebooted", func() { h.Reboot("boot-2") }},
	}
	for _, step := range steps {
		step.change()
		probes = nil
		got := kept.Inspect(pid)
		gotProbes := probes
		probes = nil
		want := h.Inspector(self).Inspect(pid)
		if got != want || strings.Join(gotProbes, ",") != strings.Join(probes, ",") {
			t.Fatalf("%s: kept Inspect %+v (probes %v), fresh %+v (probes %v)", step.name, got, gotProbes, want, probes)
		}
	}
}
