package simfs

import (
	"io/fs"
	"slices"
)

// effect is one durable-state change of a pending operation: in directory
// dir, name becomes node (nil: name is removed) and, atomically with it, del
// is removed (a same-directory rename). An attribute effect (dir nil) sets
// attr's mode. An effect becomes durable when its directory (or, for an
// attribute, its inode) is fsynced.
type effect struct {
	dir  *inode
	name string
	node *inode
	del  string
	attr *inode
	mode fs.FileMode
	done bool
}

// target is the inode whose fsync makes the effect durable.
func (e *effect) target() *inode {
	if e.dir != nil {
		return e.dir
	}
	return e.attr
}

// logOp is one pending metadata operation. A cross-directory rename has two
// effects, one per directory, each durable on its own.
type logOp struct {
	seq  uint64
	kind OpKind
	effs [2]effect
	n    uint8
}

// logAppend records an operation with one or two effects.
func (f *FS) logAppend(kind OpKind, e0 effect, e1 *effect) {
	op := logOp{seq: f.seqNext, kind: kind, n: 1}
	f.seqNext++
	op.effs[0] = e0
	t0 := e0.target()
	t0.pendingSeqs = append(t0.pendingSeqs, op.seq)
	if e1 != nil {
		op.effs[1] = *e1
		op.n = 2
		t1 := e1.target()
		if t1 == t0 {
			panic("simfs: two effects of one operation on one inode")
		}
		t1.pendingSeqs = append(t1.pendingSeqs, op.seq)
	}
	f.log = append(f.log, op)
	if len(f.log)-f.logDone > f.gcAt {
		f.collect()
		f.gcAt = max(64, 2*len(f.log))
	}
}

// markDirty notes that n's volatile data now differs from its synced data.
func (f *FS) markDirty(n *inode) {
	f.dataGen++
	if !n.dirty {
		n.dirty = true
		f.dirtyCount++
	}
}

// syncInode is fsync(2) on n: a file's data and mode, or a directory's
// entries and mode, become durable. In the ext4-ordered profile an fsync
// also commits the whole journal, which seqCommitted records.
func (f *FS) syncInode(n *inode) {
	f.syncGen++
	f.seqCommitted = f.seqNext - 1
	if n.isDir() {
		if len(n.pendingSeqs) > 0 || n.syncedEntries == nil {
			n.syncEntries()
		}
	} else if n.dirty {
		n.synced = n.data[:len(n.data):len(n.data)]
		n.shared = true
		n.dirty = false
		f.dirtyCount--
	}
	n.syncedMode = n.mode
	n.syncedMtime = n.mtime
	// Mark n's effects done, finding each operation by binary search on
	// its sequence number, so an fsync costs O(own effects * log log).
	for _, seq := range n.pendingSeqs {
		i, found := slices.BinarySearchFunc(f.log, seq, func(op logOp, seq uint64) int {
			return compareUint(op.seq, seq)
		})
		if !found {
			panic("simfs: pending effect's operation missing from the log")
		}
		op := &f.log[i]
		marked := false
		for k := uint8(0); k < op.n; k++ {
			if e := &op.effs[k]; !e.done && e.target() == n {
				e.done, marked = true, true
			}
		}
		if !marked {
			panic("simfs: pending effect already done")
		}
		if op.allDone() {
			f.logDone++
		}
	}
	n.pendingSeqs = n.pendingSeqs[:0]
	if f.logDone*2 > len(f.log) {
		f.compact()
	}
}

// changedNamesMax bounds a directory's changedNames: past it, the next
// fsync copies every entry instead, so an unsynced directory that keeps
// changing does not grow a list longer than its entries.
const changedNamesMax = 64

// noteEntryChanged records that name's volatile entry in directory d changed.
func (d *inode) noteEntryChanged(name string) {
	if d.changedAll {
		return
	}
	if len(d.changedNames) >= changedNamesMax {
		d.forgetChangedNames()
		d.changedAll = true
		return
	}
	d.changedNames = append(d.changedNames, name)
}

// forgetChangedNames empties changedNames, keeping its array for reuse.
func (d *inode) forgetChangedNames() {
	clear(d.changedNames)
	d.changedNames = d.changedNames[:0]
	d.changedAll = false
}

// syncEntries makes d's synced entries equal to its volatile entries. The
// synced map belongs to d alone (a Crash or Clone builds fresh ones), so it
// is updated in place, and only at the names that changed since the last
// copy: a directory fsync then costs its changes, not its size, and
// allocates nothing.
func (d *inode) syncEntries() {
	switch {
	case d.syncedEntries == nil:
		d.syncedEntries = make(map[string]*inode, len(d.entries))
		fallthrough
	case d.changedAll:
		clear(d.syncedEntries)
		for name, child := range d.entries {
			d.syncedEntries[name] = child
		}
	default:
		for _, name := range d.changedNames {
			if child, ok := d.entries[name]; ok {
				d.syncedEntries[name] = child
			} else {
				delete(d.syncedEntries, name)
			}
		}
	}
	d.forgetChangedNames()
}

// compact drops operations whose effects are all durable. It runs when they
// are half the log, so its cost is amortised over the fsyncs that made them.
func (f *FS) compact() {
	kept := f.log[:0]
	for i := range f.log {
		op := &f.log[i]
		if !op.allDone() {
			kept = append(kept, *op)
		}
	}
	clear(f.log[len(kept):])
	f.log = kept
	f.logDone = 0
}

func (op *logOp) allDone() bool {
	for k := uint8(0); k < op.n; k++ {
		if !op.effs[k].done {
			return false
		}
	}
	return true
}

// collect marks done every effect whose inode no crash outcome can reach:
// reachability from the root over synced entries and every pending entry.
func (f *FS) collect() {
	reach := map[*inode]bool{f.root: true}
	stack := []*inode{f.root}
	pendingTargets := map[*inode][]*inode{}
	for i := range f.log {
		op := &f.log[i]
		for k := uint8(0); k < op.n; k++ {
			e := &op.effs[k]
			if !e.done && e.dir != nil && e.node != nil {
				pendingTargets[e.dir] = append(pendingTargets[e.dir], e.node)
			}
		}
	}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		visit := func(c *inode) {
			if !reach[c] {
				reach[c] = true
				if c.isDir() {
					stack = append(stack, c)
				}
			}
		}
		for _, c := range d.syncedEntries {
			visit(c)
		}
		for _, c := range pendingTargets[d] {
			visit(c)
		}
	}
	for i := range f.log {
		op := &f.log[i]
		for k := uint8(0); k < op.n; k++ {
			e := &op.effs[k]
			if !e.done && !reach[e.target()] {
				e.done = true
				e.target().pendingSeqs = nil
			}
		}
	}
	f.compact()
}
