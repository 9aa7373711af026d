package statecas

import (
	"testing"

	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

type zeroChoice struct{}

func (zeroChoice) Intn(int) int { return 0 }

// A caller that crashed, or whose parent fsync failed, between its mkdir and
// the parent's fsync leaves a directory whose entry is still volatile. The
// next EnsurePrivateDir finds it existing; if it did not make it durable, a
// record written and fsynced inside it would vanish with it at a power loss
// (found by the admission workload's durability oracle, issue 16).
func TestEnsurePrivateDirMakesAnExistingDirectoryDurable(t *testing.T) {
	sim := simfs.New(simfs.Options{Dev: 9})
	sim.MkdirAll("/home", 0o700, 1000)
	fsys := sim.View(1000)
	if err := fsys.Mkdir("/home/a", 0o700); err != nil { // a mkdir whose parent fsync never happened
		t.Fatal(err)
	}
	self := leasetest.IdentityOf(7, 1000, "77")
	env := Env{FS: fsys, IDs: leasetest.NewIDsWithPrefix(0xabc), Inspector: leasetest.NewInspector(self), UID: 1000}
	dir, err := EnsurePrivateDir(env, 1000, "/home", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	sim.Crash(simfs.CrashSyncedOnly, zeroChoice{})
	if _, err := sim.View(1000).Lstat(dir); err != nil {
		t.Fatalf("the directory EnsurePrivateDir returned does not survive a power loss: %v", err)
	}
}
