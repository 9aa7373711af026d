// Package fspath is path.Join, path.Dir and path.Clean, answering at once
// for the paths the engines and the simulator build all the time: a clean
// absolute directory joined with plain entry names, the directory of a clean
// absolute path, an already clean absolute path. Everything else goes to
// package path. path.Clean copies its input through a byte-at-a-time
// buffer, and path.Join and path.Dir call it every time: 4% of a lease
// campaign's CPU.
// The answers are package path's, always (a property test holds them equal).
package fspath

import (
	"path"
	"strings"
)

// Join is path.Join.
func Join(elem ...string) string {
	if len(elem) == 0 || !cleanAbs(elem[0]) {
		return path.Join(elem...)
	}
	if len(elem) == 1 {
		return elem[0]
	}
	size := len(elem[0])
	for _, name := range elem[1:] {
		if !plainName(name) {
			return path.Join(elem...)
		}
		size += 1 + len(name)
	}
	if elem[0] == "/" {
		size--
	}
	var b strings.Builder
	b.Grow(size)
	if elem[0] != "/" {
		b.WriteString(elem[0])
	}
	for _, name := range elem[1:] {
		b.WriteByte('/')
		b.WriteString(name)
	}
	return b.String()
}

// JoinName is Join(dir, name) for the name the parts spell together
// (strings.Join(parts, "")), built in one allocation where building the
// name and then joining it made two: the engines name most files as a
// prefix, an ID and a suffix inside a directory.
func JoinName(dir string, parts ...string) string {
	size := 0
	for _, part := range parts {
		if strings.IndexByte(part, '/') >= 0 {
			return Join(dir, strings.Join(parts, ""))
		}
		size += len(part)
	}
	// A name of two bytes or fewer may be "", "." or "..", which Join
	// resolves rather than appends.
	if size <= 2 || !cleanAbs(dir) {
		return Join(dir, strings.Join(parts, ""))
	}
	if dir != "/" {
		size += len(dir)
	}
	var b strings.Builder
	b.Grow(size + 1)
	if dir != "/" {
		b.WriteString(dir)
	}
	b.WriteByte('/')
	for _, part := range parts {
		b.WriteString(part)
	}
	return b.String()
}

// Dir is path.Dir.
func Dir(p string) string {
	if !cleanAbs(p) {
		return path.Dir(p)
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}

// Clean is path.Clean.
func Clean(p string) string {
	if cleanAbs(p) {
		return p
	}
	return path.Clean(p)
}

// cleanAbs reports whether p is absolute and path.Clean would return it
// unchanged: "/", or slash-separated names, none empty, "." or "..".
func cleanAbs(p string) bool {
	if p == "/" {
		return true
	}
	if len(p) < 2 || p[0] != '/' {
		return false
	}
	for rest := p[1:]; ; {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return plainSegment(rest)
		}
		if !plainSegment(rest[:i]) {
			return false
		}
		rest = rest[i+1:]
	}
}

// plainName reports whether name is one path segment that joins as itself.
func plainName(name string) bool {
	return plainSegment(name) && strings.IndexByte(name, '/') < 0
}

func plainSegment(s string) bool { return s != "" && s != "." && s != ".." }
