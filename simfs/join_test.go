package simfs

import (
	"path"
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
