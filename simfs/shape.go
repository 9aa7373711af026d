package simfs

import "slices"

// Shape returns a hash of the namespace's shape: for the volatile and the
// synced tree, each name (with runs of digits and hex-looking words folded,
// so generations, PIDs and random suffixes do not count), its type, and its
// size class (empty, small, large), plus whether any data is unsynced. Two
// states that differ only in identifiers or contents share a shape: it is a
// coverage signal for guided search (campaign), not a state hash.
func (f *FS) Shape() uint64 {
	h := fnvOffset
	shapeTree(&h, f.root, false, 0)
	h.byte('|')
	shapeTree(&h, f.root, true, 0)
	if f.dirtyCount > 0 {
		h.byte('d')
	}
	return uint64(h)
}

// shapeDepthMax bounds the walk (a directory cycle cannot occur, but a deep
// tree costs time on every operation).
const shapeDepthMax = 8

func shapeTree(h *fnv64, n *inode, synced bool, depth int) {
	entries := n.entries
	if synced {
		entries = n.syncedEntries
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, foldName(name))
	}
	slices.Sort(names)
	h.u64(uint64(len(names)))
	for _, folded := range names {
		h.str(folded)
	}
	if depth >= shapeDepthMax {
		return
	}
	sorted := make([]string, 0, len(entries))
	for name := range entries {
		sorted = append(sorted, name)
	}
	slices.Sort(sorted)
	for _, name := range sorted {
		child := entries[name]
		switch {
		case child.isDir():
			h.byte('/')
			shapeTree(h, child, synced, depth+1)
		case child.isSymlink():
			h.byte('@')
		default:
			data := child.data
			if synced {
				data = child.synced
			}
			h.byte(sizeClass(len(data)))
		}
	}
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

// foldName replaces each run of hex digits that holds a digit or is eight
// or more long (a generation, PID, nonce) with '#'.
func foldName(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); {
		j, digit := i, false
		for j < len(name) && isHex(name[j]) {
			digit = digit || isDigit(name[j])
			j++
		}
		switch {
		case j > i && (digit || j-i >= 8):
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
