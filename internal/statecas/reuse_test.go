package statecas

import (
	"errors"
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

// TestReadRefusesAFileThatReusedTheInodeNumber: between the compare's Lstat
// and its open, the record is unlinked and a new file created at the name;
// the filesystem hands the new file the freed inode number (simfs reuses
// the lowest free one, as ext4 and tmpfs often do), so device and inode
// match and only the birth time tells them apart. The read must refuse
// (ChangedError), not return the new file's bytes as the one Lstat saw.
func TestReadRefusesAFileThatReusedTheInodeNumber(t *testing.T) {
	sim := simfs.New(simfs.Options{Dev: 9})
	sim.MkdirAll("/home/s", 0o700, 1000)
	target := "/home/s/state.json"
	writeSim(t, sim.View(1000), target, "{\"judged\":1}\n")
	before, err := sim.View(1000).Lstat(target)
	if err != nil {
		t.Fatal(err)
	}
	hooked := leasetest.NewHookFS(sim.View(1000))
	replaced := false
	hooked.Before(func(o leasetest.Op) error {
		if o.Name == "OpenFile" && o.Paths[0] == target && !replaced {
			replaced = true
			if err := sim.View(1000).Remove(target); err != nil {
				t.Fatal(err)
			}
			writeSim(t, sim.View(1000), target, "{\"other\":1}\n")
		}
		return nil
	})
	env := Env{FS: hooked, IDs: leasetest.NewIDsWithPrefix(1), Inspector: leasetest.NewInspector(leasetest.IdentityOf(7, 1000, "77")), UID: 1000}
	content, _, err := readWithIdentity(env, target, 1<<20)
	if !replaced {
		t.Fatal("the hook never ran")
	}
	after, statErr := sim.View(1000).Lstat(target)
	if statErr != nil || after.Ino != before.Ino || after.BirthNs == before.BirthNs {
		t.Fatalf("the setup did not reuse the inode number with a new birth time: before %+v after %+v (%v)", before, after, statErr)
	}
	var changed *statefile.ChangedError
	if !errors.As(err, &changed) {
		t.Fatalf("read %q (err %v) from a file that only reuses the inode number of the one Lstat saw; want a ChangedError", content, err)
	}
}

func writeSim(t *testing.T, fsys lease.FS, name, data string) {
	t.Helper()
	f, err := fsys.OpenFile(name, statefile.O_WRONLY|statefile.O_CREATE|statefile.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
