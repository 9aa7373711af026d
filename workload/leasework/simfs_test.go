package leasework

import (
	"testing"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
	"github.com/leasekit/leasekit/workload/workkit"
)

// zeroChooser answers 0 to every crash choice: no pending effect applies.
type zeroChooser struct{}

func (zeroChooser) Intn(int) int { return 0 }

// TestSimfsRenameOverReusedInode reproduces what the lease campaign found
// (an epoch granted twice after a power loss): a same-directory rename over
// a durable file frees the old inode; a file created elsewhere reuses its
// number and is made durable; a random-subset crash that does not apply the
// (atomic) rename then drops the old file's name too, so the target name is
// gone altogether, a state neither outcome of an atomic rename allows (the
// reuse proves the free, hence the rename, was committed). simfs now
// forces every removal a reused inode number depends on, so /d/epoch holds
// the new file; simfs's golden case "a rename over a file whose number is
// reused is durable with the reuse" pins every outcome of every mode.
func TestSimfsRenameOverReusedInode(t *testing.T) {
	fsys := simfs.New(simfs.Options{Dev: 1})
	fsys.MkdirAll("/d", 0o755, 0)
	fsys.MkdirAll("/e", 0o755, 0)
	v := fsys.View(0)
	write := func(name, data string) {
		f, err := v.OpenFile(name, lease.O_CREATE|lease.O_EXCL|lease.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	syncDir := func(name string) {
		f, err := v.OpenFile(name, lease.O_RDONLY|lease.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	write("/d/epoch", "1")
	syncDir("/d")
	old, _ := v.Lstat("/d/epoch")
	write("/d/tmp", "2")
	if err := v.Rename("/d/tmp", "/d/epoch"); err != nil { // atomic, not yet durable
		t.Fatal(err)
	}
	write("/e/other", "x") // may reuse the freed inode number
	syncDir("/e")
	other, _ := v.Lstat("/e/other")
	t.Logf("old epoch inode %d, new file in /e inode %d", old.Ino, other.Ino)
	fsys.Crash(simfs.CrashRandomSubset, zeroChooser{})
	data, err := workkit.ReadRoot(fsys.View(0), "/d/epoch")
	if err != nil {
		t.Fatalf("after the crash /d/epoch is gone (%v): an atomic rename over it must leave the old or the new file", err)
	}
	if string(data) != "1" && string(data) != "2" {
		t.Fatalf("after the crash /d/epoch holds %q", data)
	}
}
