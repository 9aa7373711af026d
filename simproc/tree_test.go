package simproc

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func treeEqual(t *testing.T, want, got any, what string) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func treeNoError(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func isError(t *testing.T, err, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

func treeHost(t *testing.T) *Host {
	t.Helper()
	return NewHost(HostConfig{Name: "h", BootID: "b", PIDMax: 64, SinceBoot: func() time.Duration { return 0 }})
}

func spawnShell(t *testing.T, h *Host) *Proc {
	t.Helper()
	p, err := h.Spawn(SpawnSpec{Exe: "/bin/sh", UID: 1})
	treeNoError(t, err, "err")
	return p
}

func fork(t *testing.T, h *Host, parent *Proc) *Proc {
	t.Helper()
	child, err := h.Fork(parent, ForkSpec{})
	treeNoError(t, err, "err")
	return child
}

// A shell forks a wrapper that leads its own group; the wrapper forks a
// command (parent-death signal SIGKILL), which forks a background job.
// Killing the wrapper kills the command (its parent died) but not the job:
// the job is reparented to init (or to a subreaper) and stays in the
// wrapper's group.
func TestTreeWrapperKilled(t *testing.T) {
	cases := []struct {
		name        string
		subreaper   bool
		wantJobPPID func(shell *Proc) int
	}{
		{name: "job reparented to init", wantJobPPID: func(*Proc) int { return 0 }},
		{name: "job reparented to the subreaper shell", subreaper: true, wantJobPPID: func(shell *Proc) int { return shell.PID }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := treeHost(t)
			shell := spawnShell(t, h)
			h.SetChildSubreaper(shell, tc.subreaper)
			wrapper := fork(t, h, shell)
			treeNoError(t, h.Setpgid(wrapper, 0), "h.Setpgid(wrapper, 0)")
			command := fork(t, h, wrapper)
			h.SetPdeathsig(command, 9)
			job := fork(t, h, command)
			treeEqual(t, []*Proc{wrapper, command, job}, h.GroupMembers(0, wrapper.PID), "[]*Proc{wrapper, command, job}, h.GroupMembers(0, wrapper.PID)")

			h.Kill(wrapper)
			treeEqual(t, Gone, command.State, "the parent-death signal ends the command")
			treeEqual(t, Running, job.State, "the background job outlives both")
			treeEqual(t, tc.wantJobPPID(shell), job.PPID, "tc.wantJobPPID(shell), job.PPID")
			treeEqual(t, []*Proc{job}, h.GroupMembers(0, wrapper.PID), "the group outlives its leader")

			treeEqual(t, 1, h.KillGroup(0, wrapper.PID), "1, h.KillGroup(0, wrapper.PID)")
			treeEqual(t, 0, len(h.GroupMembers(0, wrapper.PID)), "h.GroupMembers(0, wrapper.PID) is empty")
		})
	}
}

// A child subreaper adopts its orphaned grandchildren: the wrapper waits
// for every descendant by waiting until it has no children.
func TestTreeSubreaperAdoptsGrandchildren(t *testing.T) {
	h := treeHost(t)
	wrapper := spawnShell(t, h)
	h.SetChildSubreaper(wrapper, true)
	command := fork(t, h, wrapper)
	job := fork(t, h, command)
	grandjob := fork(t, h, job)
	h.Exit(command)
	treeEqual(t, []*Proc{job}, h.Children(wrapper), "[]*Proc{job}, h.Children(wrapper)")
	h.Exit(job)
	treeEqual(t, []*Proc{grandjob}, h.Children(wrapper), "[]*Proc{grandjob}, h.Children(wrapper)")
	h.Exit(grandjob)
	treeEqual(t, 0, len(h.Children(wrapper)), "h.Children(wrapper) is empty")
	treeEqual(t, 0, wrapper.kids, "wrapper.kids")
}

func TestTreeSetsidAndSetpgidRules(t *testing.T) {
	h := treeHost(t)
	leader := spawnShell(t, h)
	isError(t, h.Setpgid(leader, 0), ErrPermission, "a session leader cannot move")
	child := fork(t, h, leader)
	treeNoError(t, h.Setsid(fork(t, h, leader)), "a child starts its own session")
	treeNoError(t, h.Setpgid(child, 0), "h.Setpgid(child, 0)")
	isError(t, h.Setsid(child), ErrPermission, "a group leader cannot start a session")
	grandchild := fork(t, h, child)
	treeEqual(t, child.PID, grandchild.ProcessGroup(), "child.PID, grandchild.ProcessGroup()")
	treeNoError(t, h.Setsid(grandchild), "h.Setsid(grandchild)")
	treeEqual(t, grandchild.PID, grandchild.Session(), "grandchild.PID, grandchild.Session()")
	treeEqual(t, grandchild.PID, grandchild.ProcessGroup(), "grandchild.PID, grandchild.ProcessGroup()")
	other := spawnShell(t, h)
	otherChild := fork(t, h, other)
	isError(t, h.Setpgid(otherChild, child.PID), ErrPermission, "a group of another session")
}

// A zombie parent orphans its children at exit, before it is reaped.
func TestTreeZombieParentOrphans(t *testing.T) {
	h := treeHost(t)
	parent := spawnShell(t, h)
	child := fork(t, h, parent)
	grandchild := fork(t, h, child)
	h.SetPdeathsig(grandchild, 15)
	h.ExitZombie(child, 1)
	treeEqual(t, Gone, grandchild.State, "Gone, grandchild.State")
	h.Reap(child)
	treeEqual(t, 0, len(h.Children(parent)), "h.Children(parent) is empty")
}

// A killed group leader's PID is not handed out while its group has a
// member (Linux's rule, which makes a group's number name the group): the
// allocator skips it, and a chosen PID equal to it is in use. Once the
// group is empty the PID is free again.
func TestPIDOfALiveGroupIsNotReused(t *testing.T) {
	h := NewHost(HostConfig{Name: "h", BootID: "b", PIDMax: 8, SinceBoot: func() time.Duration { return 0 }})
	leader := spawnShell(t, h)
	job := fork(t, h, leader)
	group := leader.PID
	h.Kill(leader)
	_, err := h.Spawn(SpawnSpec{Exe: "/bin/x", UID: 1, PID: group})
	isError(t, err, ErrPIDInUse, "a chosen PID that numbers a live group")
	var spawned []*Proc
	for {
		p, err := h.Spawn(SpawnSpec{Exe: "/bin/x", UID: 1})
		if err != nil {
			isError(t, err, ErrPIDExhausted, "only the group's number is left")
			break
		}
		treeEqual(t, false, p.PID == group, "a spawn got the live group's number")
		spawned = append(spawned, p)
	}
	treeEqual(t, 5, len(spawned), "free PIDs besides the group's number")
	h.Kill(job)
	p, err := h.Spawn(SpawnSpec{Exe: "/bin/x", UID: 1})
	treeNoError(t, err, "spawn after the group emptied")
	treeEqual(t, group, p.PID, "the emptied group's number")
}
