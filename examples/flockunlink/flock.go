package flockunlink

import (
	"fmt"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/sim"
)

// flockTable is the simulated kernel's flock state of one run: the holder of
// each inode's lock.
type flockTable struct {
	holders map[env.FileIdentity]*sim.Proc
	locked  map[*sim.Proc]env.FileIdentity
}

func newFlockTable() *flockTable {
	return &flockTable{holders: map[env.FileIdentity]*sim.Proc{}, locked: map[*sim.Proc]env.FileIdentity{}}
}

// split reports whether two holders hold the locks of different inodes.
func (t *flockTable) split(holder, newcomer *sim.Proc) bool {
	a, okA := t.locked[holder]
	b, okB := t.locked[newcomer]
	return okA && okB && a != b
}

// procFlock is one process's flock calls.
type procFlock struct {
	table *flockTable
	p     *sim.Proc
}

func (f *procFlock) TryLock(file env.File) (bool, error) {
	info, err := file.Stat() // fstat: a scheduling point, like the real syscall
	if err != nil {
		return false, err
	}
	id, ok := info.Identity()
	if !ok {
		return false, fmt.Errorf("flock: %s has no birth time", file.Name())
	}
	if holder := f.table.holders[id]; holder != nil && holder != f.p && holder.Alive() {
		return false, nil
	}
	f.table.holders[id] = f.p
	f.table.locked[f.p] = id
	return true, nil
}

func (f *procFlock) Unlock(env.File) {
	if id, ok := f.table.locked[f.p]; ok {
		delete(f.table.holders, id)
		delete(f.table.locked, f.p)
	}
}
