package simfs

import (
	"encoding/binary"
	"maps"
	"slices"
)

// fnv64 is FNV-1a, written out so hashing allocates nothing.
type fnv64 uint64

const (
	fnvOffset fnv64 = 14695981039346656037
	fnvPrime  fnv64 = 1099511628211
)

func (h *fnv64) byte(b byte) { *h = (*h ^ fnv64(b)) * fnvPrime }

func (h *fnv64) u64(v uint64) { *h = (*h ^ fnv64(v)) * fnvPrime }

// strBytes hashes p as str hashes string(p), without the conversion.
func (h *fnv64) strBytes(p []byte) {
	h.u64(uint64(len(p)))
	for _, b := range p {
		h.byte(b)
	}
}

func (h *fnv64) str(s string) {
	h.u64(uint64(len(s)))
	for i := 0; i < len(s); i++ {
		h.byte(s[i])
	}
}

// bytes hashes p eight bytes at a time (FNV-1a over words: not FNV, but as
// deterministic and much faster on file data).
func (h *fnv64) bytes(p []byte) {
	h.u64(uint64(len(p)))
	for len(p) >= 8 {
		*h = (*h ^ fnv64(binary.LittleEndian.Uint64(p))) * fnvPrime
		p = p[8:]
	}
	for _, b := range p {
		h.byte(b)
	}
}

// Hash returns a deterministic hash of the whole state: the volatile tree,
// the synced tree, every inode's data and synced data, the pending log and
// the inode-number map. Two runs that made the same calls with the same
// choices hash equal; the simulator's determinism self-check compares them.
func (f *FS) Hash() uint64 {
	h := fnvOffset
	f.hashGen++
	gen := f.hashGen
	order := f.hashOrder[:0]
	names := f.hashNames[:0]
	// Number every inode the volatile tree, the synced tree, the log or an
	// open handle can reach, in a deterministic order.
	visit := func(n *inode) {
		if n.hashGen != gen {
			n.hashGen = gen
			n.hashIndex = uint32(len(order))
			order = append(order, n)
		}
	}
	sorted := func(m map[string]*inode) []string {
		names = names[:0]
		for name := range m {
			names = append(names, name)
		}
		slices.Sort(names)
		return names
	}
	next := 0
	walk := func() {
		for ; next < len(order); next++ {
			n := order[next]
			if !n.isDir() {
				continue
			}
			for _, name := range sorted(n.entries) {
				visit(n.entries[name])
			}
			for _, name := range sorted(n.syncedEntries) {
				visit(n.syncedEntries[name])
			}
		}
	}
	visit(f.root)
	walk()
	f.hashVisitExtra(visit)
	walk()
	for _, n := range order {
		h.u64(n.ino)
		h.u64(uint64(n.mode))
		h.u64(uint64(n.syncedMode))
		h.u64(uint64(n.uid))
		h.u64(uint64(n.birth))
		h.u64(uint64(n.links)<<32 | uint64(uint32(n.opens)))
		data, target := n.data, []byte(nil)
		if n.isSymlink() {
			data, target = nil, n.data // hashed as when the target was a field of its own
		}
		h.bytes(data)
		if n.shared {
			h.byte(3) // synced is data
		} else {
			h.bytes(n.synced)
		}
		h.strBytes(target)
		if f.mtimesHashed {
			h.u64(uint64(n.mtime))
			h.u64(uint64(n.syncedMtime))
		}
		if n.dirty {
			h.byte(1)
		}
		if n.freed {
			h.byte(2)
		}
		if !n.isDir() {
			continue
		}
		for _, name := range sorted(n.entries) {
			h.str(name)
			h.u64(uint64(n.entries[name].hashIndex))
		}
		h.byte('|')
		for _, name := range sorted(n.syncedEntries) {
			h.str(name)
			h.u64(uint64(n.syncedEntries[name].hashIndex))
		}
	}
	for i := range f.log {
		op := &f.log[i]
		h.u64(op.seq)
		h.u64(uint64(op.kind))
		for k := uint8(0); k < op.n; k++ {
			e := &op.effs[k]
			h.u64(uint64(e.target().hashIndex))
			h.str(e.name)
			h.str(e.del)
			if e.node != nil {
				h.u64(uint64(e.node.hashIndex) + 1)
			}
			h.u64(uint64(e.mode))
			if e.done {
				h.byte(1)
			}
		}
	}
	for i, used := range f.used {
		if used {
			h.u64(uint64(i))
		}
	}
	h.u64(f.seqNext)
	h.u64(f.seqCommitted)
	h.u64(uint64(f.birthLast))
	h.u64(f.epoch)
	h.u64(uint64(f.tempSeq))
	clear(order)
	f.hashOrder, f.hashNames = order[:0], names[:0]
	f.locks.hash(&h)
	return uint64(h)
}

// StateHash is Hash, reused while no call that may change the state has
// run since the last one (every call but the pure reads: Read, Stat,
// Lstat, ReadDir, Readlink and the handle's Stat, ReadDir, StatAt). A
// state-caching explorer keys every step by it, and most steps only read,
// or touch another volume. checkStateHash (model_test.go, crashprop_test.go)
// checks it against Hash after every call of the random sequences.
func (f *FS) StateHash() uint64 {
	if !f.memoValid || f.memoAt != f.changes {
		f.memo, f.memoAt, f.memoValid = f.Hash(), f.changes, true
	}
	return f.memo
}

// hashVisitExtra numbers the inodes only the log or an open handle reaches
// (after the tree walk; the walk then continues below them).
func (f *FS) hashVisitExtra(visit func(*inode)) {
	for i := range f.log {
		op := &f.log[i]
		for k := uint8(0); k < op.n; k++ {
			e := &op.effs[k]
			visit(e.target())
			if e.node != nil {
				visit(e.node)
			}
		}
	}
	if len(f.orphans) == 0 {
		return
	}
	orphans := slices.SortedFunc(maps.Keys(f.orphans), func(a, b *inode) int {
		return compareUint(a.ino, b.ino)
	})
	for _, n := range orphans {
		visit(n)
	}
}

// Clone returns a deep copy of the state. Options (Now, Rand, Injector) are
// shared, not copied. Files open on f stay bound to f: the clone keeps their
// inodes' open counts (so an unlinked open inode stays allocated) until its
// next Crash, but has no views and no File handles of its own.
func (f *FS) Clone() *FS {
	g := &FS{
		opts: f.opts, umask: f.umask, used: slices.Clone(f.used), freeLowest: f.freeLowest,
		birthLast: f.birthLast, tempSeq: f.tempSeq, seqNext: f.seqNext,
		seqCommitted: f.seqCommitted, gcAt: f.gcAt, dirtyCount: f.dirtyCount, logDone: f.logDone,
		orphans: map[*inode]struct{}{}, epoch: f.epoch, mtimesHashed: f.mtimesHashed, hashGen: f.hashGen, treeGen: f.treeGen, nameGen: f.nameGen, dataGen: f.dataGen,
	}
	copies := map[*inode]*inode{}
	var cp func(n *inode) *inode
	cp = func(n *inode) *inode {
		if n == nil {
			return nil
		}
		if c, ok := copies[n]; ok {
			return c
		}
		c := &inode{}
		*c = *n
		c.pendingSeqs = slices.Clone(n.pendingSeqs)
		c.changedNames = slices.Clone(n.changedNames)
		copies[n] = c
		// Synced data is never written in place, and data shared with it is
		// copied before a write; only unshared volatile data needs a copy.
		if !n.shared {
			c.data = slices.Clone(n.data)
		}
		if n.isDir() {
			c.entries = make(map[string]*inode, len(n.entries))
			for name, child := range n.entries {
				c.entries[name] = cp(child)
			}
			if n.syncedEntries != nil {
				c.syncedEntries = make(map[string]*inode, len(n.syncedEntries))
				for name, child := range n.syncedEntries {
					c.syncedEntries[name] = cp(child)
				}
			}
			c.parent = cp(n.parent)
		}
		return c
	}
	g.root = cp(f.root)
	g.log = make([]logOp, len(f.log))
	for i := range f.log {
		g.log[i] = f.log[i]
		for k := uint8(0); k < g.log[i].n; k++ {
			e := &g.log[i].effs[k]
			e.dir, e.node, e.attr = cp(e.dir), cp(e.node), cp(e.attr)
		}
	}
	for n := range f.orphans {
		g.orphans[cp(n)] = struct{}{}
	}
	return g
}
