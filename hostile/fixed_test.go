package hostile

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/lease"
)

// Tests of findings that are fixed, moved out of corpus_bug_test.go.

// TestSimfsOpenDirectoryNoFollow: opening a symlink to a directory with
// O_RDONLY|O_DIRECTORY|O_NOFOLLOW (statefile.SyncDir) fails with ENOTDIR on
// Linux, and must in simfs too (it gave ELOOP until fixed; found by
// lease/namespace-symlink). internal/fsconformance's "nofollow-flags"
// scenario checks every flag combination on both.
func TestSimfsOpenDirectoryNoFollow(t *testing.T) {
	var errnos []string
	for _, b := range []*backend{realBackend(t), simBackend()} {
		link := b.abs("link")
		must(t, b.engine.Symlink(b.abs("$OUT"), link))
		must(t, b.mkdirAll(b.abs("$OUT"), 0o700))
		_, err := b.engine.OpenFile(link, lease.O_RDONLY|lease.O_DIRECTORY|lease.O_NOFOLLOW, 0)
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			t.Fatalf("%s: %v is not an errno", b.name, err)
		}
		errnos = append(errnos, b.name+": "+errno.Error())
	}
	if strings.TrimPrefix(errnos[0], "real: ") != strings.TrimPrefix(errnos[1], "simfs: ") {
		t.Errorf("errnos differ: %v", errnos)
	}
}
