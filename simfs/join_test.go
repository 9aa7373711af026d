package simfs

import (
	"path"
	"strings"
	"testing"
)

// TestJoinNameIsPathJoin holds joinName's fast path to path.Join.
func TestJoinNameIsPathJoin(t *testing.T) {
	dirs := []string{
		"", "/", ".", "..", "a", "/a", "/a/b", "a/b", "../a", "/a/", "a//b", "/a/./b",
		"/a/../b", "/..", "//", "./a", "a/.", "a/..", "...", "/a/...", "/a b/c",
	}
	names := []string{"", ".", "..", "x", "x/y", "/x", "x/", "a\x00b", "...", ".x", "x.", " "}
	for _, dir := range dirs {
		for _, name := range names {
			if got, want := joinName(dir, name), path.Join(dir, name); got != want {
				t.Errorf("joinName(%q, %q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}

// TestValidNameIsStatefileRule holds validName's byte scan to the rule it
// spells out with strings.ContainsAny, on invalid UTF-8 too.
func TestValidNameIsStatefileRule(t *testing.T) {
	for _, name := range []string{
		"", ".", "..", "...", "a", "a/b", "/", "a\x00", "\xff/", "\xe2\x80", "é", "\xc0\xaf", "x\x00y",
	} {
		want := name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}
