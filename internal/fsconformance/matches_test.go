package fsconformance

import "testing"

func TestMatches(t *testing.T) {
	cases := []struct {
		got, want string
		match     bool
	}{
		{"ok", "ok", true},
		{"EEXIST", "ENOTEMPTY", false},
		{"EEXIST", "ENOTEMPTY | EEXIST", true},
		{"ENOTEMPTY", "ENOTEMPTY | EEXIST", true},
		{"ENOENT", "ENOTEMPTY | EEXIST", false},
		// btrfs: a directory's nlink is always 1.
		{"dir nlink=1 perm=700 id=A", "dir nlink=3 perm=700 id=A", true},
		{"dir nlink=1 perm=700 id=B", "dir nlink=3 perm=700 id=A", false},
		{"dir nlink=1 perm=755 id=A", "dir nlink=2 perm=700 id=A", false},
		{"dir nlink=2 perm=700 id=A", "dir nlink=3 perm=700 id=A", false},
		// Only directories: a file's link count is always exact.
		{"file nlink=1 size=1 perm=600 id=A", "file nlink=2 size=1 perm=600 id=A", false},
		{"dir nlink=1 perm=700 id=A", "file nlink=1 perm=700 id=A", false},
	}
	for _, c := range cases {
		if got := Matches(c.got, c.want); got != c.match {
			t.Errorf("Matches(%q, %q) = %t, want %t", c.got, c.want, got, c.match)
		}
	}
}
