package simfs

import "slices"

// Shapes appends to dst the shape of each directory and returns it, sorted
// and without repeats: a hash of the directory's path and of its entries,
// each entry's name folded (runs of hex digits that hold a digit or are
// four or more long, generations, PIDs, UUIDs, become '#'), its type and
// size class (empty, small, large), each distinct folded entry once with
// its count bucketed (1, 2, 3+), and whether the directory's durable
// entries differ from its volatile ones (a crash now would lose or bring
// back names). Per directory, not of the whole tree, so that states of
// different directories do not multiply: a coverage signal for guided
// search (campaign), not a state hash.
//
// The walk covers the whole tree and guided search asks after every
// operation, so the last list is kept while nothing a shape holds can have
// changed (shapeKey): opens, reads, stats and closes, most of a run's
// calls, leave it.
func (f *FS) Shapes(dst []uint64) []uint64 {
	if key := f.shapeKey(); !f.shapesValid || f.shapesAt != key {
		if f.folds == nil || len(f.folds) > foldsMax {
			f.folds = map[string]folded{}
		}
		f.shapes = shapeDir(f.shapes[:0], f.folds, f.root, fnvOffset, 0)
		slices.Sort(f.shapes)
		f.shapes = slices.Compact(f.shapes)
		f.shapesAt, f.shapesValid = key, true
	}
	return append(dst, f.shapes...)
}

// shapeKey moves whenever a shape may change: a shape holds names and
// types (nameGen: creates, removes, renames, crashes), sizes (dataGen:
// writes, truncations) and what is durable (syncGen: fsyncs).
func (f *FS) shapeKey() [3]uint64 { return [3]uint64{f.nameGen, f.dataGen, f.syncGen} }

// shapeDepthMax bounds the walk.
const shapeDepthMax = 8

// folded is a name's foldName and the hash of it alone: every walk folds
// every name again, and folding was half of a walk's time, so each FS keeps
// the names it folded (up to foldsMax, then it starts afresh).
type folded struct {
	name string
	hash fnv64
}

// foldsMax bounds an FS's folded names.
const foldsMax = 4096

// fold returns name's folded form and its hash, from folds if it is there.
func fold(folds map[string]folded, name string) folded {
	if v, ok := folds[name]; ok {
		return v
	}
	v := folded{name: foldName(name), hash: fnvOffset}
	v.hash.str(v.name)
	folds[name] = v
	return v
}

func shapeDir(dst []uint64, folds map[string]folded, n *inode, path fnv64, depth int) []uint64 {
	volatile, durable := shapeEntries(folds, n.entries, false), shapeEntries(folds, n.syncedEntries, true)
	h := path
	for _, e := range volatile {
		h.u64(e)
	}
	if !slices.Equal(volatile, durable) {
		h.byte('|')
	}
	dst = append(dst, uint64(h))
	if depth >= shapeDepthMax {
		return dst
	}
	names := make([]string, 0, len(n.entries))
	for name, child := range n.entries {
		if child.isDir() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		sub := path
		sub.str(fold(folds, name).name)
		dst = shapeDir(dst, folds, n.entries[name], sub, depth+1)
	}
	return dst
}

// shapeEntries hashes each entry (folded name, type, size class), sorted,
// each distinct one once followed by its count bucket.
func shapeEntries(folds map[string]folded, entries map[string]*inode, synced bool) []uint64 {
	list := make([]uint64, 0, len(entries))
	for name, child := range entries {
		h := fold(folds, name).hash
		switch {
		case child.isDir():
			h.byte('/')
		case child.isSymlink():
			h.byte('@')
		case synced:
			h.byte(sizeClass(len(child.synced)))
		default:
			h.byte(sizeClass(len(child.data)))
		}
		list = append(list, uint64(h))
	}
	slices.Sort(list)
	out := list[:0]
	for i := 0; i < len(list); {
		j := i
		for j < len(list) && list[j] == list[i] {
			j++
		}
		out = append(out, list[i], uint64(min(j-i, 3)))
		i = j
	}
	return out
}

func sizeClass(n int) byte {
	switch {
	case n == 0:
		return '0'
	case n < 64:
		return 's'
	}
	return 'L'
}

// FoldName replaces each run of hex digits that holds a digit or is four or
// more long (a generation, PID, nonce, UUID part) with '#': a name's role,
// as the shapes see it (sim's call coverage folds its paths the same way).
func FoldName(name string) string { return foldName(name) }

// foldName is FoldName.
func foldName(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); {
		j, digit := i, false
		for j < len(name) && isHex(name[j]) {
			digit = digit || isDigit(name[j])
			j++
		}
		switch {
		case j > i && (digit || j-i >= 4):
			b = append(b, '#')
		case j > i:
			b = append(b, name[i:j]...)
		default:
			b = append(b, name[i])
			j = i + 1
		}
		i = j
	}
	return string(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') }
