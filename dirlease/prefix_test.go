package dirlease

import (
	"strings"
	"testing"
)

// TestWalkPrefixesAreJoins: the prefixes physicalIdentity walks are those
// of the original walk, "/" joined with one more component at a time.
func TestWalkPrefixesAreJoins(t *testing.T) {
	for _, name := range []string{"/", "", "/a", "/a/b/c", "a/b", "//a", "/a//b", "/a/", "a", "/w/x.json/"} {
		var want []string
		prefix := ""
		for _, component := range strings.Split(strings.TrimPrefix(name, "/"), "/") {
			prefix += "/" + component
			want = append(want, prefix)
		}
		var got []string
		rooted := rootedName(name)
		for end := 0; end < len(rooted); {
			end = nextPrefixEnd(rooted, end)
			got = append(got, rooted[:end])
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%q: walked %q, want %q", name, got, want)
		}
	}
}
