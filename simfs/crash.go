package simfs

import (
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// CrashMode selects which post-crash states Crash may produce. Every mode
// but CrashProcess is a power loss; see CRASHMODEL.md.
type CrashMode int

const (
	// CrashProcess: every process dies but the kernel keeps everything; the
	// volatile state becomes the durable state. No choices are drawn.
	CrashProcess CrashMode = iota
	// CrashSyncedOnly: only what fsync made durable survives. No choices.
	CrashSyncedOnly
	// CrashMetadataPrefix: the ext4-ordered journaling profile. Everything
	// up to the last fsync survives (ext4 commits the whole journal), plus a
	// chosen prefix of the later operations; each unsynced file keeps its
	// synced or its volatile data (chosen).
	CrashMetadataPrefix
	// CrashRandomSubset: the strictest POSIX profile. Any subset of the
	// pending directory effects survives (each chosen on its own, applied in
	// log order); each unsynced file keeps its synced or volatile data.
	CrashRandomSubset
	// CrashTornData: metadata as CrashMetadataPrefix; the data of each
	// unsynced file is its synced data overwritten by a chosen prefix of its
	// volatile data in sectors of 512 B or 4 KiB (chosen once per crash),
	// the first unwritten sector possibly zero-filled.
	CrashTornData
	crashModeCount
)

var crashModeNames = [crashModeCount]string{
	"process", "synced-only", "metadata-prefix", "random-subset", "torn-data",
}

// String returns the kebab-case name ("synced-only").
func (m CrashMode) String() string {
	if m < 0 || m >= crashModeCount {
		return "crash-mode(" + strconv.Itoa(int(m)) + ")"
	}
	return crashModeNames[m]
}

// ParseCrashMode is the inverse of CrashMode.String.
func ParseCrashMode(s string) (CrashMode, bool) {
	for m, name := range crashModeNames {
		if name == s {
			return CrashMode(m), true
		}
	}
	return 0, false
}

// Crash is a power loss (or, for CrashProcess, the death of every process):
// it reduces the state to one legal post-crash state, drawing every choice
// from choose in a fixed order. Afterwards every File opened before is
// invalid (EBADF), the pending log is empty, everything is durable, and
// inodes that no durable name reaches are freed.
func (f *FS) Crash(mode CrashMode, choose Chooser) {
	if mode < 0 || mode >= crashModeCount {
		panic("simfs: unknown crash mode")
	}
	f.epoch++ // every File and view open list from before is now stale
	c := crashState{f: f, mode: mode, choose: choose, dirs: map[*inode]map[string]*inode{}}
	if mode == CrashProcess {
		c.keepVolatile()
	} else {
		c.applyLog()
	}
	reach := c.reachable()
	c.rebuild(reach)
}

// crashState is the working set of one Crash.
type crashState struct {
	f      *FS
	mode   CrashMode
	choose Chooser
	// dirs holds, for each directory touched, its post-crash entries
	// (copied on first write from its synced entries).
	dirs  map[*inode]map[string]*inode
	modes map[*inode]fs.FileMode
}

// entriesOf returns d's post-crash entries, read-only.
func (c *crashState) entriesOf(d *inode) map[string]*inode {
	if m, ok := c.dirs[d]; ok {
		return m
	}
	return d.syncedEntries
}

func (c *crashState) writable(d *inode) map[string]*inode {
	if m, ok := c.dirs[d]; ok {
		return m
	}
	m := make(map[string]*inode, len(d.syncedEntries)+1)
	for name, child := range d.syncedEntries {
		m[name] = child
	}
	c.dirs[d] = m
	return m
}

// keepVolatile makes the volatile tree the post-crash state (CrashProcess).
func (c *crashState) keepVolatile() {
	var walk func(d *inode)
	walk = func(d *inode) {
		c.dirs[d] = d.entries
		for _, child := range d.entries {
			if child.isDir() {
				walk(child)
			}
		}
	}
	walk(c.f.root)
}

// apply replays one not-yet-durable effect onto the post-crash state.
func (c *crashState) apply(e *effect) {
	if e.dir == nil {
		if c.modes == nil {
			c.modes = map[*inode]fs.FileMode{}
		}
		c.modes[e.attr] = e.mode
		return
	}
	m := c.writable(e.dir)
	if e.del != "" {
		delete(m, e.del)
	}
	if e.node == nil {
		delete(m, e.name)
	} else {
		m[e.name] = e.node
	}
}

// applyLog chooses which pending effects survive, by mode.
func (c *crashState) applyLog() {
	log := c.f.log
	switch c.mode {
	case CrashSyncedOnly:
		return
	case CrashMetadataPrefix, CrashTornData:
		var pending []*logOp
		for i := range log {
			if !log[i].allDone() {
				pending = append(pending, &log[i])
			}
		}
		committed := 0
		for committed < len(pending) && pending[committed].seq <= c.f.seqCommitted {
			committed++
		}
		keep := committed + c.choose.Intn(len(pending)-committed+1)
		for _, op := range pending[:keep] {
			c.applyOp(op)
		}
	case CrashRandomSubset:
		for i := range log {
			op := &log[i]
			for k := uint8(0); k < op.n; k++ {
				if e := &op.effs[k]; !e.done && c.choose.Intn(2) == 1 {
					c.apply(e)
				}
			}
		}
	}
}

func (c *crashState) applyOp(op *logOp) {
	for k := uint8(0); k < op.n; k++ {
		if e := &op.effs[k]; !e.done {
			c.apply(e)
		}
	}
}

// edge is one surviving name.
type edge struct {
	dir  *inode
	name string
}

// reachable walks the post-crash tree from the root in sorted name order and
// returns, per surviving inode, its names. Two physical rules prune it:
// a directory reached under a second name keeps only the first (fsck's
// choice); and when two inodes share an inode number, the number must have
// been freed before it was reused, so the older inode (earlier birth) loses
// its names. Pruning can change what is reachable, so the walk repeats until
// stable (at most once per inode).
func (c *crashState) reachable() map[*inode][]edge {
	excluded := map[*inode]bool{}
	for rounds := 0; ; rounds++ {
		if rounds > 1<<20 {
			panic("simfs: crash reachability does not converge")
		}
		reach := map[*inode][]edge{c.f.root: nil}
		byIno := map[uint64]*inode{c.f.root.ino: c.f.root}
		collided := false
		queue := []*inode{c.f.root}
		for len(queue) > 0 {
			d := queue[0]
			queue = queue[1:]
			entries := c.entriesOf(d)
			for _, name := range sortedNames(entries) {
				child := entries[name]
				if excluded[child] {
					continue
				}
				if _, seen := reach[child]; seen && child.isDir() {
					continue
				}
				if other, ok := byIno[child.ino]; ok && other != child {
					collided = true
					if other.birth < child.birth {
						excluded[other] = true
					} else {
						excluded[child] = true
					}
					continue
				}
				byIno[child.ino] = child
				_, seen := reach[child]
				reach[child] = append(reach[child], edge{d, name})
				if !seen && child.isDir() {
					queue = append(queue, child)
				}
			}
		}
		if !collided {
			return reach
		}
	}
}

func sortedNames(m map[string]*inode) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// rebuild installs the post-crash state: surviving entries, link counts,
// chosen data, and a fresh inode-number map; everything is durable.
func (c *crashState) rebuild(reach map[*inode][]edge) {
	f := c.f
	inodes := make([]*inode, 0, len(reach))
	for n := range reach {
		inodes = append(inodes, n)
	}
	slices.SortFunc(inodes, func(a, b *inode) int { return compareUint(a.ino, b.ino) })
	sector := 0
	if c.mode == CrashTornData {
		sector = 512
		if c.choose.Intn(2) == 1 {
			sector = 4096
		}
	}
	maxIno := uint64(inoFirst)
	for _, n := range inodes {
		maxIno = max(maxIno, n.ino)
		if n.isDir() {
			n.entries = map[string]*inode{}
			n.subdirs = 0
		}
	}
	f.used = make([]bool, maxIno+1, maxIno+64)
	for _, n := range inodes {
		if f.used[n.ino] {
			panic("simfs: two surviving inodes share an inode number")
		}
		f.used[n.ino] = true
		n.opens, n.freed, n.pendingSeqs = 0, false, nil
		n.links = int32(len(reach[n]))
		if n == f.root {
			n.links, n.parent = 1, n
		}
		for _, e := range reach[n] {
			e.dir.entries[e.name] = n
			if n.isDir() {
				n.parent = e.dir
				e.dir.subdirs++
			}
		}
		if mode, ok := c.modes[n]; ok && c.mode != CrashProcess {
			n.mode = mode
		} else if c.mode != CrashProcess {
			n.mode = n.syncedMode
		}
		n.syncedMode = n.mode
		if n.mode.IsRegular() {
			n.data = c.chooseData(n, sector)
			n.synced, n.shared, n.dirty = n.data[:len(n.data):len(n.data)], true, false
		}
	}
	for _, n := range inodes {
		if n.isDir() {
			synced := make(map[string]*inode, len(n.entries))
			for name, child := range n.entries {
				synced[name] = child
			}
			n.syncedEntries = synced
		}
	}
	f.reserveInodes()
	f.used[inoRoot] = true
	clear(f.log)
	f.log = f.log[:0]
	f.seqCommitted = f.seqNext - 1
	f.dirtyCount = 0
	f.logDone = 0
	f.gcAt = 64
	clear(f.orphans)
}

// chooseData returns n's post-crash data, by mode.
func (c *crashState) chooseData(n *inode, sector int) []byte {
	if c.mode == CrashProcess {
		return n.data
	}
	if !n.dirty {
		return n.synced // synced, or marked clean by a failed fsync
	}
	switch c.mode {
	case CrashMetadataPrefix, CrashRandomSubset:
		if c.choose.Intn(2) == 1 {
			return n.data
		}
		return n.synced
	case CrashTornData:
		return tear(n.synced, n.data, sector, c.choose)
	}
	return n.synced
}

// tear writes a chosen number of whole sectors of volatile over synced; the
// next sector, if any, may instead be zero-filled (a torn sector).
func tear(synced, volatile []byte, sector int, choose Chooser) []byte {
	sectors := (len(volatile) + sector - 1) / sector
	written := choose.Intn(sectors + 1)
	out := slices.Clone(synced)
	end := min(written*sector, len(volatile))
	if written == sectors {
		out = append(out[:0:0], volatile...) // the size update landed too
		return out
	}
	if len(out) < end {
		out = append(out, make([]byte, end-len(out))...)
	}
	copy(out, volatile[:end])
	if choose.Intn(2) == 1 {
		zeroEnd := min(end+sector, len(volatile))
		if len(out) < zeroEnd {
			out = append(out, make([]byte, zeroEnd-len(out))...)
		}
		clear(out[end:zeroEnd])
	}
	return out
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Dump writes a readable tree: one line per name, with inode number, mode,
// nlink, size and a quoted content prefix (files) or target (symlinks).
// With durable, it shows what CrashSyncedOnly would keep.
func (f *FS) Dump(w interface{ Write([]byte) (int, error) }, durable bool) {
	var b strings.Builder
	var walk func(d *inode, prefix string, depth int)
	walk = func(d *inode, prefix string, depth int) {
		entries := d.entries
		if durable {
			entries = d.syncedEntries
		}
		for _, name := range sortedNames(entries) {
			n := entries[name]
			p := prefix + "/" + name
			b.WriteString(p)
			b.WriteString(" ino=" + strconv.FormatUint(n.ino, 10))
			mode := n.mode
			if durable {
				mode = n.syncedMode
			}
			b.WriteString(" mode=" + mode.String())
			if !durable {
				b.WriteString(" nlink=" + strconv.FormatUint(n.nlink(), 10))
			}
			switch {
			case n.isSymlink():
				b.WriteString(" -> " + strconv.Quote(n.target))
			case n.isDir():
			default:
				data := n.data
				if durable {
					data = n.synced
				}
				b.WriteString(" size=" + strconv.Itoa(len(data)))
				b.WriteString(" " + strconv.Quote(string(data[:min(len(data), 32)])))
				if !durable && n.dirty {
					b.WriteString(" dirty")
				}
			}
			b.WriteByte('\n')
			if n.isDir() && depth < 64 {
				walk(n, p, depth+1)
			}
		}
	}
	if durable {
		b.WriteString("# durable\n")
	} else {
		b.WriteString("# volatile pending=" + strconv.Itoa(f.Pending()) + "\n")
	}
	walk(f.root, "", 0)
	w.Write([]byte(b.String()))
}
