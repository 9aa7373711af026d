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
	// CrashSyncedOnly: only what fsync made durable survives, with what it
	// depends on (the dependency rule in CRASHMODEL.md). No choices.
	CrashSyncedOnly
	// CrashMetadataPrefix: the ext4-ordered journaling profile. Everything
	// up to the last fsync survives (ext4 commits the whole journal), plus a
	// chosen prefix of the later operations; each unsynced file keeps its
	// synced or its volatile data (chosen).
	CrashMetadataPrefix
	// CrashRandomSubset: the strictest POSIX profile. Any subset of the
	// pending directory effects survives (each chosen on its own, closed
	// under the dependency rule of CRASHMODEL.md, applied in log order);
	// each unsynced file keeps its synced or volatile data.
	CrashRandomSubset
	// CrashTornData: metadata as CrashMetadataPrefix; the data of each
	// unsynced file is its synced data overwritten by a chosen prefix of its
	// volatile data in sectors of 512 B or 4 KiB (chosen once per crash),
	// then a chosen tear: nothing more, the next sector zero-filled, or the
	// new size with the next sector cut at a chosen byte (CRASHMODEL.md,
	// "Torn data", with its sources). An fsynced file is never torn.
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
	f.changes++
	if mode < 0 || mode >= crashModeCount {
		panic("simfs: unknown crash mode")
	}
	f.epoch++ // every File and view open list from before is now stale
	f.DropLocks()
	f.nameGen++
	f.dataGen++
	f.treeGen++
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
	// applied marks, per log operation and effect, the pending effects the
	// post-crash state applies: the chosen ones plus those a durable later
	// state depends on (forceRemovals).
	applied [][2]bool
	// removals lists, per inode, the pending effects that removed one of
	// its names (built on the first inode-number collision).
	removals map[*inode][]effectRef
}

// effectRef names one effect: f.log[op].effs[k].
type effectRef struct {
	op int
	k  uint8
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

// applyLog chooses which pending effects survive, by mode, and replays them.
// Every metadata choice is drawn here, in log order, before any effect is
// forced (forceRemovals), so forcing never changes what is drawn.
func (c *crashState) applyLog() {
	log := c.f.log
	c.applied = make([][2]bool, len(log))
	switch c.mode {
	case CrashSyncedOnly:
	case CrashMetadataPrefix, CrashTornData:
		pending, committed := 0, 0
		for i := range log {
			if !log[i].allDone() {
				pending++
				if log[i].seq <= c.f.seqCommitted {
					committed = pending
				}
			}
		}
		keep := committed + c.choose.Intn(pending-committed+1)
		for i := 0; i < len(log) && keep > 0; i++ {
			if !log[i].allDone() {
				keep--
				if keep == 0 {
					c.applyThrough(i)
				}
			}
		}
	case CrashRandomSubset:
		for i := range log {
			op := &log[i]
			for k := uint8(0); k < op.n; k++ {
				if !op.effs[k].done && c.choose.Intn(2) == 1 {
					c.applied[i][k] = true
				}
			}
		}
	}
	c.replay()
}

// applyThrough marks applied every pending effect of log operations 0..i:
// a prefix of the journal, as the ordered modes keep it.
func (c *crashState) applyThrough(i int) {
	for j := 0; j <= i; j++ {
		op := &c.f.log[j]
		for k := uint8(0); k < op.n; k++ {
			if !op.effs[k].done {
				c.applied[j][k] = true
			}
		}
	}
}

// replay rebuilds the post-crash entries and modes from the synced state and
// the applied effects, in log order.
func (c *crashState) replay() {
	clear(c.dirs)
	c.modes = nil
	log := c.f.log
	for i := range log {
		op := &log[i]
		for k := uint8(0); k < op.n; k++ {
			if !c.applied[i][k] {
				continue
			}
			if op.effs[k].done {
				panic("simfs: crash applies an effect that is already durable")
			}
			c.apply(&op.effs[k])
		}
	}
}

// indexRemovals lists, per inode, the pending effects that removed one of
// its names in the volatile history: replaying each directory's pending
// effects in log order over its synced entries (all of a directory's
// durable effects precede its pending ones), an effect removes the inode
// its name held before (unless it names the same inode again) and, for a
// same-directory rename, the inode its old name held.
func (c *crashState) indexRemovals() {
	c.removals = map[*inode][]effectRef{}
	shadows := map[*inode]map[string]*inode{}
	log := c.f.log
	for i := range log {
		op := &log[i]
		for k := uint8(0); k < op.n; k++ {
			e := &op.effs[k]
			if e.done || e.dir == nil {
				continue
			}
			m, ok := shadows[e.dir]
			if !ok {
				m = make(map[string]*inode, len(e.dir.syncedEntries)+1)
				for name, child := range e.dir.syncedEntries {
					m[name] = child
				}
				shadows[e.dir] = m
			}
			ref := effectRef{op: i, k: k}
			if e.del != "" {
				if moved := m[e.del]; moved != nil {
					c.removals[moved] = append(c.removals[moved], ref)
				}
				delete(m, e.del)
			}
			if old := m[e.name]; old != nil && old != e.node {
				c.removals[old] = append(c.removals[old], ref)
			}
			if e.node == nil {
				delete(m, e.name)
			} else {
				m[e.name] = e.node
			}
		}
	}
}

// forceRemovals applies every pending effect that removed a name of freed:
// a surviving inode carries freed's number, so freed's number was freed on
// disk first, so its link count reached zero on disk, so every removal of
// its names is durable too (with, in the ordered modes, the journal before
// it). It reports whether anything new was applied.
func (c *crashState) forceRemovals(freed *inode) bool {
	if c.removals == nil {
		c.indexRemovals()
	}
	forced := false
	for _, ref := range c.removals[freed] {
		if c.applied[ref.op][ref.k] {
			continue
		}
		forced = true
		switch c.mode {
		case CrashMetadataPrefix, CrashTornData:
			c.applyThrough(ref.op)
		default:
			c.applied[ref.op][ref.k] = true
		}
	}
	return forced
}

// edge is one surviving name.
type edge struct {
	dir  *inode
	name string
}

// reachable walks the post-crash tree from the root in sorted name order and
// returns, per surviving inode, its names. A directory reached under a
// second name keeps only the first (fsck's choice). When two reached inodes
// share an inode number, the number must have been freed before it was
// reused: the older inode (earlier birth) was freed, and every effect that
// removed its names is forced (forceRemovals). Forcing changes the tree, so
// the walk starts again after each collision until no number is shared;
// each round forces at least one more effect, so it ends.
func (c *crashState) reachable() map[*inode][]edge {
	for rounds := 0; ; rounds++ {
		if rounds > 2*len(c.f.log)+1 {
			panic("simfs: crash reachability does not converge")
		}
		reach := map[*inode][]edge{c.f.root: nil}
		byIno := map[uint64]*inode{c.f.root.ino: c.f.root}
		collided := false
		queue := []*inode{c.f.root}
	walk:
		for len(queue) > 0 {
			d := queue[0]
			queue = queue[1:]
			entries := c.entriesOf(d)
			for _, name := range sortedNames(entries) {
				child := entries[name]
				if _, seen := reach[child]; seen && child.isDir() {
					continue
				}
				if other, ok := byIno[child.ino]; ok && other != child {
					collided = true
					c.forceOlder(other, child)
					break walk // replay with the forced effects, walk again
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
		c.replay()
	}
}

// forceOlder forces the removals of the older of two inodes that share a
// number. The volatile tree never shares a number, and the older inode was
// freed only after its last name was removed by a logged effect, so a
// collision with nothing left to force is a broken invariant.
func (c *crashState) forceOlder(a, b *inode) {
	if c.mode == CrashProcess {
		panic("simfs: two live inodes share an inode number")
	}
	older := a
	if b.birth < a.birth {
		older = b
	}
	if !c.forceRemovals(older) {
		panic("simfs: a reused inode number's old owner has no pending removal to force")
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
		if c.mode != CrashProcess {
			n.mtime = n.syncedMtime
		}
		n.syncedMtime = n.mtime
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
			n.forgetChangedNames()
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

// The rest of a torn write: what happened past the whole sectors that
// landed (one choice per torn file; CRASHMODEL.md, "Torn data", gives the
// sources).
const (
	// tearPrefix: nothing more landed, and the size is the prefix's
	// (ext4 data=ordered: the on-disk size follows the written data).
	tearPrefix = iota
	// tearZeroSector: the next sector's size landed but not its data, so
	// it reads as zeros (XFS and ext4 unwritten extents).
	tearZeroSector
	// tearLinear: the new size landed whole before the data (ext4
	// data=writeback, XFS's NUL-filled files, SQLite's assumption that a
	// file grows before its content is written), and the next sector was
	// cut mid-write after a chosen number of bytes (SQLite's "linear"
	// sector writes; the shorn writes of SSDs under power fault); past the
	// cut the file reads as its synced bytes, or zeros beyond them.
	tearLinear
	tearKinds
)

// tear returns the data a torn-data power loss leaves of one unsynced file:
// a chosen number of whole sectors of volatile over synced; if not all of
// them landed, the rest is a tear kind (chosen), tearLinear's cut chosen
// too. It never returns bytes that neither version had at their offset,
// except zeros.
func tear(synced, volatile []byte, sector int, choose Chooser) []byte {
	sectors := (len(volatile) + sector - 1) / sector
	written := choose.Intn(sectors + 1)
	if written == sectors {
		return append([]byte(nil), volatile...) // the size update landed too
	}
	end := written * sector
	next := min(end+sector, len(volatile))
	switch choose.Intn(tearKinds) {
	case tearPrefix:
		return overlay(synced, volatile[:end], end, false)
	case tearZeroSector:
		return overlay(synced, volatile[:end], next, true)
	}
	cut := end + choose.Intn(next-end) // tearLinear
	out := overlay(synced, volatile[:cut], len(volatile), false)
	return out[:len(volatile)] // the new size landed, a truncation too
}

// overlay returns synced with landed written over its start, at least size
// bytes long (past synced's end zeros: a hole), the bytes from len(landed)
// to size zeroed when zeroed is set.
func overlay(synced, landed []byte, size int, zeroed bool) []byte {
	if len(landed) > size {
		panic("simfs: a torn write landed past the size it leaves")
	}
	out := make([]byte, max(len(synced), size))
	copy(out, synced)
	copy(out, landed)
	if zeroed {
		clear(out[len(landed):size])
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
				b.WriteString(" -> " + strconv.Quote(n.linkTarget()))
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
