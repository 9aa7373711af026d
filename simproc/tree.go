package simproc

import (
	"errors"
	"fmt"
	"slices"
)

// The process tree, as Linux has it: a process forked by another has a
// parent (PPID), a process group (PGID) and a session (SID), inherited at
// fork and changed by setpgid(2) and setsid(2). When a process dies its
// children are reparented to the nearest living ancestor that is a child
// subreaper (PR_SET_CHILD_SUBREAPER), or else to the namespace's init
// (PPID 0 here: init is outside the model); then every child that asked
// for a parent-death signal (PR_SET_PDEATHSIG) gets it. A group's number
// is its leader's PID, and Linux never hands out a PID that is still some
// process's PGID or SID, so a group's number names that group for as long
// as it has a member.
//
// Processes started by Spawn are outside any tree: their parent is outside
// the model (PPID 0) and each leads its own session. Exit and ExitZombie
// reparent the children of a process that forked; a process that never
// forked pays nothing for the tree.

// ErrPermission is setpgid's and setsid's EPERM: the change Linux refuses
// (a session leader moving group, a group leader starting a session, a
// group of another session).
var ErrPermission = errors.New("simproc: operation not permitted (EPERM)")

// ForkSpec describes a child to fork.
type ForkSpec struct {
	// Exe is the executable the child runs (after exec); empty keeps the
	// parent's.
	Exe string
}

// Fork starts a child of parent: same user and PID namespace, the parent's
// process group and session, no parent-death signal and no subreaper flag
// (fork clears both, as Linux does).
func (h *Host) Fork(parent *Proc, spec ForkSpec) (*Proc, error) {
	h.checkLive(parent)
	if parent.State != Running {
		panic(fmt.Sprintf("simproc: fork by a %v process", parent.State))
	}
	exe := spec.Exe
	if exe == "" {
		exe = parent.ExePath
	}
	child, err := h.Spawn(SpawnSpec{Exe: exe, UID: parent.UID, Namespace: parent.NS})
	if err != nil {
		return nil, err
	}
	h.adopt(parent, child)
	return child, nil
}

// adopt makes child a forked child of parent, in parent's group and session.
func (h *Host) adopt(parent, child *Proc) {
	child.PPID, child.PGID, child.SID = parent.PID, parent.pgid(), parent.sid()
	child.inTree = true
	parent.inTree = true
	parent.kids++
}

// pgid is p's process group: its own PID for a process outside any tree.
func (p *Proc) pgid() int {
	if p.PGID == 0 {
		return p.PID
	}
	return p.PGID
}

// sid is p's session: its own PID for a process outside any tree.
func (p *Proc) sid() int {
	if p.SID == 0 {
		return p.PID
	}
	return p.SID
}

// ProcessGroup returns p's process group ID (getpgid).
func (p *Proc) ProcessGroup() int { return p.pgid() }

// Session returns p's session ID (getsid).
func (p *Proc) Session() int { return p.sid() }

// Setpgid moves p into process group pgid (0: a new group led by p), as
// setpgid(2): a session leader cannot move, and the target group must
// exist in p's session unless p creates it.
func (h *Host) Setpgid(p *Proc, pgid int) error {
	h.checkLive(p)
	if pgid == 0 {
		pgid = p.PID
	}
	if p.sid() == p.PID {
		return ErrPermission
	}
	if pgid != p.PID && !h.groupInSession(p.NS, pgid, p.sid()) {
		return ErrPermission
	}
	p.PGID = pgid
	p.inTree = true
	return nil
}

// groupInSession reports whether group pgid has a live member in session sid.
func (h *Host) groupInSession(ns, pgid, sid int) bool {
	for _, q := range h.namespaces[ns].procs {
		if q.State == Running && q.pgid() == pgid && q.sid() == sid {
			return true
		}
	}
	return false
}

// Setsid makes p the leader of a new session and a new group, as
// setsid(2): a group leader cannot (EPERM).
func (h *Host) Setsid(p *Proc) error {
	h.checkLive(p)
	if p.pgid() == p.PID {
		return ErrPermission
	}
	p.PGID, p.SID = p.PID, p.PID
	p.inTree = true
	return nil
}

// SetChildSubreaper sets or clears p's PR_SET_CHILD_SUBREAPER flag: an
// orphaned descendant of p is reparented to p rather than to init.
func (h *Host) SetChildSubreaper(p *Proc, on bool) {
	h.checkLive(p)
	p.Subreaper = on
	p.inTree = true
}

// SetPdeathsig sets p's PR_SET_PDEATHSIG: when p's parent dies, p gets
// the signal, which the model delivers with its default action (it ends
// p). 0 clears it.
func (h *Host) SetPdeathsig(p *Proc, sig int) {
	h.checkLive(p)
	p.Pdeathsig = sig
	p.inTree = true
}

// Kill ends p as SIGKILL does and reaps it (its parent reaps at once),
// reparenting its children and delivering their parent-death signals.
// Killing a zombie only reaps it.
func (h *Host) Kill(p *Proc) {
	if p.State == Zombie {
		h.Reap(p)
		return
	}
	h.Exit(p)
}

// KillGroup sends SIGKILL to every member of process group pgid in
// namespace ns (kill(-pgid, SIGKILL)) and returns how many it ended.
func (h *Host) KillGroup(ns, pgid int) int {
	members := h.GroupMembers(ns, pgid)
	for _, p := range members {
		if p.State != Gone {
			h.Kill(p)
		}
	}
	return len(members)
}

// GroupMembers returns the running members of process group pgid in
// namespace ns, by PID.
func (h *Host) GroupMembers(ns, pgid int) []*Proc {
	h.checkNamespace(ns)
	return h.sortedProcs(ns, func(q *Proc) bool { return q.State == Running && q.pgid() == pgid })
}

// Children returns p's running and zombie children, by PID.
func (h *Host) Children(p *Proc) []*Proc {
	if p.kids == 0 {
		return nil
	}
	return h.sortedProcs(p.NS, func(q *Proc) bool { return q.PPID == p.PID && q != p })
}

// sortedProcs returns the processes of ns that keep says to, ordered by
// PID: the table is a map, and the model must not depend on its order.
func (h *Host) sortedProcs(ns int, keep func(*Proc) bool) []*Proc {
	var out []*Proc
	for _, q := range h.namespaces[ns].procs {
		if keep(q) {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *Proc) int { return a.PID - b.PID })
	return out
}

// orphan runs when dead (which forked) stops running: its children get the
// nearest living subreaper ancestor, or init, as parent, and then each that
// asked for a parent-death signal gets it (and ends).
func (h *Host) orphan(dead *Proc) {
	children := h.sortedProcs(dead.NS, func(q *Proc) bool { return q.PPID == dead.PID && q != dead })
	reaper := h.reaperFor(dead)
	for _, child := range children {
		child.PPID = 0
		if reaper != nil {
			child.PPID = reaper.PID
			reaper.kids++
		}
	}
	dead.kids = 0
	for _, child := range children {
		if child.Pdeathsig != 0 && child.State == Running {
			h.Exit(child)
		}
	}
}

// reaperFor returns the nearest running ancestor of dead that is a child
// subreaper, or nil for init. The walk is bounded by the table's size.
func (h *Host) reaperFor(dead *Proc) *Proc {
	table := h.namespaces[dead.NS].procs
	pid := dead.PPID
	for range len(table) + 1 {
		if pid == 0 {
			return nil
		}
		ancestor := table[pid]
		if ancestor == nil || ancestor.State != Running {
			return nil
		}
		if ancestor.Subreaper {
			return ancestor
		}
		pid = ancestor.PPID
	}
	panic(fmt.Sprintf("simproc: host %s: the parent chain of PID %d has a cycle", h.name, dead.PID))
}

// leaveTree is Exit's and ExitZombie's tree bookkeeping: the parent counts
// one child fewer once the child is reaped, and the children of a process
// that forked are orphaned.
func (h *Host) leaveTree(p *Proc, reaped bool) {
	if reaped && p.PPID != 0 {
		if parent := h.namespaces[p.NS].procs[p.PPID]; parent != nil && parent.kids > 0 {
			parent.kids--
		}
	}
	if p.kids > 0 {
		h.orphan(p)
	}
}

// treeHash folds the tree fields into a process's hash, for processes in
// a tree only: the hashes of runs without trees stay as they were.
func (p *Proc) treeHash(x uint64) uint64 {
	if !p.inTree {
		return x
	}
	x = mix(x ^ uint64(p.PPID)<<1 ^ uint64(p.PGID)<<21 ^ uint64(p.SID)<<41)
	if p.Subreaper {
		x = mix(x ^ 'S')
	}
	return mix(x ^ uint64(p.Pdeathsig))
}

// Groups is the view of the process groups of self's PID namespace, as
// leasecli.Groups reads them.
func (h *Host) Groups(self *Proc) GroupView { return GroupView{host: h, ns: self.NS} }

// GroupView reads one PID namespace's process groups.
type GroupView struct {
	host *Host
	ns   int
}

// GroupRuns reports whether process group pgid has a running member.
func (v GroupView) GroupRuns(pgid int) (bool, error) {
	return len(v.host.GroupMembers(v.ns, pgid)) > 0, nil
}
