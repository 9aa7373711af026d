package hostile

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/dirlease"
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

// swapFS swaps a directory of a removal walk for a symlink to the outside
// tree, once, at one moment of the handle-based walk: "openat" (after the
// walk's fstatat of the entry, before it opens it) or "readdir" (after it
// opened the directory, before it lists it). A same-uid process racing the
// removal.
type swapFS struct {
	lease.FS
	w       *world
	match   string
	moment  string
	swapped bool
}

func (s *swapFS) swap(name string) {
	if s.swapped || !strings.Contains(name, "/.leasekit-removing-") || !strings.HasSuffix(name, s.match) {
		return
	}
	s.swapped = true
	must(s.w.t, s.w.b.admin.Rename(name, s.w.b.abs("work/nested.original")))
	must(s.w.t, s.w.b.admin.Symlink(s.w.b.abs("$OUT/dir"), name))
}

func (s *swapFS) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	file, err := s.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &swapFile{File: file, s: s}, nil
}

type swapFile struct {
	lease.File
	s *swapFS
}

func (f *swapFile) OpenAt(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	if f.s.moment == "openat" {
		f.s.swap(path.Join(f.Name(), name))
	}
	file, err := f.File.OpenAt(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &swapFile{File: file, s: f.s}, nil
}

func (f *swapFile) ReadDir() ([]lease.DirEntry, error) {
	if f.s.moment == "readdir" {
		f.s.swap(f.Name())
	}
	return f.File.ReadDir()
}

// TestRemoveTreeSubdirectorySwap: a subdirectory of a recovered directory
// swapped for a symlink in the middle of the removal walk. Until the walk
// went through directory handles (gap 2 of docs/THREAT-MODEL.md, once
// TestRemoveTreeSubdirectorySwapBug), a swap between its Lstat and its
// ReadDir made it delete the regular files of the link's target. Now the
// outside tree must stay exactly as it was, at either moment, on the real
// OS and in simfs.
func TestRemoveTreeSubdirectorySwap(t *testing.T) {
	for _, moment := range []string{"openat", "readdir"} {
		for _, b := range []*backend{realBackend(t), simBackend()} {
			w := lifecycleWorld(t, b, "dirlease")
			lifecycles[2].setup(w)
			swap := &swapFS{w: w, match: "/nested", moment: moment}
			w.wrap = func(inner lease.FS) lease.FS {
				swap.FS = inner
				return swap
			}
			before := outsideTree(t, b)
			_, err := dirlease.Recover(context.Background(), w.dirleaseConfig())
			if !swap.swapped {
				t.Fatalf("%s, swap before %s: the walk never reached the nested directory (%v)", b.name, moment, err)
			}
			if err == nil {
				t.Errorf("%s, swap before %s: Recover reported success over a swapped tree", b.name, moment)
			}
			for _, problem := range diffTrees(before, outsideTree(t, b), treeRules{}) {
				t.Errorf("%s, swap before %s: outside tree %s", b.name, moment, problem)
			}
		}
	}
}
