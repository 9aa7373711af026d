package procfs

import (
	"strconv"
	"testing"
)

// newPIDNames slices its names out of one buffer: they are the plain
// concatenations all the same.
func TestPIDNamesAreConcatenations(t *testing.T) {
	for _, root := range []string{"/proc", "", "/x/y/proc"} {
		for _, pid := range []int{1, 9, 10, 12345, 4194304} {
			dir := root + "/" + strconv.Itoa(pid)
			want := pidNames{pid: pid, dir: dir, stat: dir + "/stat", status: dir + "/status", nsPID: dir + "/ns/pid", exe: dir + "/exe"}
			if got := newPIDNames(root, pid); got != want {
				t.Fatalf("newPIDNames(%q, %d) = %+v, want %+v", root, pid, got, want)
			}
		}
	}
}
