package fspath

import (
	"path"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// pathText draws short paths: segments that matter to path.Clean (empty,
// ".", "..", names with dots) between slashes, with or without a leading
// and a trailing slash, and now and then any short string over "/.ab".
func pathText() *rapid.Generator[string] {
	segment := rapid.SampledFrom([]string{"", ".", "..", "a", "b", "a.", "..a", "..."})
	structured := rapid.Custom(func(t *rapid.T) string {
		segments := rapid.SliceOfN(segment, 0, 5).Draw(t, "segments")
		p := strings.Join(segments, "/")
		if rapid.Bool().Draw(t, "absolute") {
			p = "/" + p
		}
		if rapid.Bool().Draw(t, "trailing") {
			p += "/"
		}
		return p
	})
	return rapid.OneOf(structured, rapid.StringOfN(rapid.SampledFrom([]rune{'/', '.', 'a', 'b'}), 0, 12, -1))
}

func TestAnswersArePackagePaths(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		elems := rapid.SliceOfN(pathText(), 0, 4).Draw(t, "elems")
		if got, want := Join(elems...), path.Join(elems...); got != want {
			t.Fatalf("Join(%q) = %q, path.Join says %q", elems, got, want)
		}
		p := pathText().Draw(t, "p")
		if got, want := Dir(p), path.Dir(p); got != want {
			t.Fatalf("Dir(%q) = %q, path.Dir says %q", p, got, want)
		}
		if got, want := Clean(p), path.Clean(p); got != want {
			t.Fatalf("Clean(%q) = %q, path.Clean says %q", p, got, want)
		}
	})
}

func TestJoinNameIsJoin(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dir := pathText().Draw(t, "dir")
		parts := rapid.SliceOfN(pathText(), 0, 3).Draw(t, "parts")
		if got, want := JoinName(dir, parts...), path.Join(dir, strings.Join(parts, "")); got != want {
			t.Fatalf("JoinName(%q, %q) = %q, path.Join says %q", dir, parts, got, want)
		}
	})
	for _, tc := range []struct {
		dir   string
		parts []string
	}{
		{"/", []string{".tmp-", "a"}}, {"/ns", []string{".", "."}}, {"/ns", []string{"..", "."}},
		{"/ns", []string{".", "a", ".json"}}, {"/ns", nil}, {"ns", []string{"abc"}}, {"/ns", []string{"a/", "b"}},
	} {
		if got, want := JoinName(tc.dir, tc.parts...), path.Join(tc.dir, strings.Join(tc.parts, "")); got != want {
			t.Errorf("JoinName(%q, %q) = %q, want %q", tc.dir, tc.parts, got, want)
		}
	}
	allocs := testing.AllocsPerRun(100, func() { _ = JoinName("/ns", ".", "claim", ".json") })
	if allocs != 1 {
		t.Errorf("JoinName made %v allocations, want 1", allocs)
	}
}

func TestFastPathCases(t *testing.T) {
	for _, tc := range []struct {
		elems []string
		want  string
	}{
		{[]string{"/"}, "/"},
		{[]string{"/", "a"}, "/a"},
		{[]string{"/ns", "receiver.lock", "owner.json"}, "/ns/receiver.lock/owner.json"},
		{[]string{"/ns", ".."}, "/"},
		{[]string{"/ns", "a/b"}, "/ns/a/b"},
		{[]string{"/ns/", "a"}, "/ns/a"},
		{[]string{"ns", "a"}, "ns/a"},
		{[]string{"/ns", ""}, "/ns"},
		{[]string{"/ns/./x", "a"}, "/ns/x/a"},
		{[]string{"/..a", "b.."}, "/..a/b.."},
	} {
		if got := Join(tc.elems...); got != tc.want || got != path.Join(tc.elems...) {
			t.Errorf("Join(%q) = %q, want %q", tc.elems, got, tc.want)
		}
	}
	for _, p := range []string{"/", "/a", "/a/b", "/a/b/", "a/b", "/a/../b", "/a//b", "/.", "//", ""} {
		if Dir(p) != path.Dir(p) || Clean(p) != path.Clean(p) {
			t.Errorf("%q: Dir %q vs %q, Clean %q vs %q", p, Dir(p), path.Dir(p), Clean(p), path.Clean(p))
		}
	}
}

func BenchmarkJoin(b *testing.B) {
	dir := "/state/leasekit/ns-00000000-0000-4000-8000-00000000000a"
	b.Run("fspath", func(b *testing.B) {
		for b.Loop() {
			_ = Join(dir, ".tmp-owner-00000000-0000-4000-8000-00000000000d")
		}
	})
	b.Run("path", func(b *testing.B) {
		for b.Loop() {
			_ = path.Join(dir, ".tmp-owner-00000000-0000-4000-8000-00000000000d")
		}
	})
}
