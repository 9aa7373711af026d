package sim

import (
	"strings"

	"github.com/leasekit/leasekit/simfs"
)

// Coverage (Config.Coverage) is what guided search (campaign's guided
// campaigns) scores a run by, beyond the probes and the history: where in
// the decision list each operation returned and each probe first fired (so
// a mutation can aim at the decisions around a novel event), and the shape
// of the volumes' namespaces after each operation and at the end (simfs
// Shapes: names with identifiers folded, types, size classes). It costs a
// namespace walk per operation, so it is off in plain campaigns.

// shaper is what coverage needs of a volume's filesystem: simfs's Shapes.
type shaper interface{ Shapes(dst []uint64) []uint64 }

// noteCoverage stamps a returned (or recorded) operation.
func (w *World) noteCoverage(op *Operation) {
	if !w.config.Coverage {
		return
	}
	op.Decision = w.decisions.Len()
	op.Shapes = w.shapes()
}

// shapes lists the directory shapes of every simfs volume (each volume's
// mixed with its index).
func (w *World) shapes() []uint64 {
	var list []uint64
	for i, v := range w.volumes {
		s, ok := v.fs.(*SimfsVolume)
		if !ok {
			continue
		}
		var fs shaper = s.FS
		start := len(list)
		list = fs.Shapes(list)
		for k := start; k < len(list); k++ {
			list[k] = (list[k] ^ uint64(i)) * 0x100000001b3
		}
	}
	return list
}

// finishCoverage fills the result's coverage fields.
func (w *World) finishCoverage(result *Result) {
	if !w.config.Coverage {
		return
	}
	for i := range w.history {
		if op := &w.history[i]; op.Unknown && op.Decision == 0 {
			op.Decision = w.decisions.Len()
		}
	}
	result.ProbeAt = w.probeAt
	result.Shapes = w.shapes()
	result.Calls = w.calls.hits
}

// Call coverage: the syscall trace of each process, as AFL's edge coverage
// is of a program's branches. Operations and shapes are taken at operation
// boundaries, so the events inside one operation (a reclaimer's re-read
// that found the guard changed, a rename into quarantine that found its
// source gone, a recovery's inspection of a rival) made no point of their
// own and guided search had no stepping stone towards a bug that needs
// several of them. Here every step of a process is a point: its innermost
// open operation's name, the call's kind, its path folded to its role
// (simfs.FoldName on each component: generations, PIDs, UUIDs become '#')
// and its result (errno, inspection kind; "killed" when a crash took the
// process before the call), and each pair of a process's consecutive
// points is an edge. A point or edge's hits are counted; campaign buckets
// them (1, 2, 3, 4-7, ...). It is recorded only under Config.Coverage and
// draws nothing, so runs and their hashes are the same with it on or off.

// CallHit is one distinct call point or edge of a run: its hash, its hit
// count, the decision count when it was first hit (At) and when its count
// last reached a power of two (BucketAt: where its count bucket was
// reached).
type CallHit struct {
	Hash     uint64
	Hits     int
	At       int
	BucketAt int
}

// callCoverage is a run's call coverage.
type callCoverage struct {
	index map[uint64]int
	hits  []CallHit
	// last is each process's previous point, by process ID.
	last []uint64
	// folded caches each path's folded hash.
	folded map[string]uint64
}

func newCallCoverage() *callCoverage {
	return &callCoverage{index: map[uint64]int{}, folded: map[string]uint64{}}
}

// Salts of the point kinds.
const (
	callPointSalt = 0x63616c6c706f696e
	callEdgeSalt  = 0x63616c6c65646765
	callKilled    = 1 << 40
)

// note records p's step: its point and the edge from p's previous one.
func (c *callCoverage) note(w *World, p *Proc, ev event) {
	op := ""
	if n := len(p.openOps); n > 0 {
		op = w.history[p.openOps[n-1]].Op
	}
	result := p.result
	if p.status != procLive {
		result = callKilled
	}
	h := (hashPath(op) ^ callPointSalt) * hashMultiplier
	h = (h ^ uint64(ev.kind)) * hashMultiplier
	h = (h ^ c.fold(ev.path)) * hashMultiplier
	point := mix64(h ^ result)
	for p.id >= len(c.last) {
		c.last = append(c.last, 0)
	}
	edge := mix64((c.last[p.id]^callEdgeSalt)*hashMultiplier ^ point)
	c.last[p.id] = point
	at := w.decisions.Len()
	c.hit(point, at)
	c.hit(edge, at)
}

func (c *callCoverage) hit(hash uint64, at int) {
	i, ok := c.index[hash]
	if !ok {
		c.index[hash] = len(c.hits)
		c.hits = append(c.hits, CallHit{Hash: hash, Hits: 1, At: at, BucketAt: at})
		return
	}
	e := &c.hits[i]
	e.Hits++
	if e.Hits&(e.Hits-1) == 0 {
		e.BucketAt = at
	}
}

// fold hashes a path with each component folded to its role.
func (c *callCoverage) fold(path string) uint64 {
	if h, ok := c.folded[path]; ok {
		return h
	}
	parts := strings.Split(path, "/")
	for i, part := range parts {
		parts[i] = simfs.FoldName(part)
	}
	h := hashPath(strings.Join(parts, "/"))
	c.folded[path] = h
	return h
}
