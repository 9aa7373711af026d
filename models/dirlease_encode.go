package models

import (
	"encoding/binary"
)

// The directory lease model's state encoding: porcupine compares states
// by hash and equality, so a state is encoded once into a canonical form.

func dirHash(state any) uint64 {
	h := newHasher()
	h.string(state.(dirState).encoded)
	return h.sum
}

// encodeDirWorld writes w as a string: uvarint-length-prefixed strings and
// varints, field by field, so two worlds are equal iff their encodings are.
func encodeDirWorld(w dirWorld) dirState {
	buffer := binary.AppendVarint(nil, int64(w.phantoms))
	appendString := func(s string) {
		buffer = binary.AppendUvarint(buffer, uint64(len(s)))
		buffer = append(buffer, s...)
	}
	appendInt := func(v int64) { buffer = binary.AppendVarint(buffer, v) }
	for _, c := range w.claims {
		appendString(c.path)
		appendString(c.claimID)
		appendString(c.ownerHost)
		appendInt(int64(c.role))
		appendInt(int64(c.ownerProc))
		appendInt(c.recoverAfterMs)
		appendInt(int64(c.dir))
		flags := int64(0)
		if c.ownerAlive {
			flags |= 1
		}
		if c.maybeGone {
			flags |= 2
		}
		if c.restored {
			flags |= 4
		}
		if c.swappedIn {
			flags |= 8
		}
		appendInt(flags)
		appendInt(int64(len(c.contents)))
		for _, content := range c.contents {
			appendInt(int64(content.phase))
			appendInt(int64(content.childProc))
			appendString(content.childHost)
			appendInt(int64(content.child))
		}
	}
	return dirState{encoded: string(buffer)}
}

// decodeDirState reads what encodeDirWorld wrote. A malformed encoding is a
// bug in this file: it panics.
func decodeDirState(s dirState) dirWorld {
	r := stateReader{data: s.encoded}
	var w dirWorld
	if r.data != "" {
		w.phantoms = int(r.int())
	}
	for r.data != "" {
		c := dirClaim{path: r.string(), claimID: r.string(), ownerHost: r.string()}
		c.role, c.ownerProc = DirRole(r.int()), int(r.int())
		c.recoverAfterMs, c.dir = r.int(), dirAt(r.int())
		flags := r.int()
		c.ownerAlive, c.maybeGone, c.restored = flags&1 != 0, flags&2 != 0, flags&4 != 0
		c.swappedIn = flags&8 != 0
		c.contents = make([]dirContent, r.int())
		for j := range c.contents {
			c.contents[j].phase, c.contents[j].childProc = DirPhase(r.int()), int(r.int())
			c.contents[j].childHost, c.contents[j].child = r.string(), childLife(r.int())
		}
		w.claims = append(w.claims, c)
	}
	return w
}

// stateReader reads varints and length-prefixed strings from a string
// without copying it (substrings share its bytes).
type stateReader struct {
	data string
}

func (r *stateReader) uint() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if r.data == "" {
			panic("models: corrupt dirlease state encoding")
		}
		b := r.data[0]
		r.data = r.data[1:]
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
	panic("models: corrupt dirlease state encoding")
}

// int undoes binary.AppendVarint's zig-zag encoding.
func (r *stateReader) int() int64 {
	u := r.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *stateReader) string() string {
	length := r.uint()
	if uint64(len(r.data)) < length {
		panic("models: corrupt dirlease state encoding")
	}
	text := r.data[:length]
	r.data = r.data[length:]
	return text
}
