package simfs_test

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
)

// zeroChoice answers every crash choice with 0; the synced-only mode draws
// none, but Crash takes a Chooser so that every mode replays the same way.
type zeroChoice struct{}

func (zeroChoice) Intn(int) int { return 0 }

// A power loss keeps only what fsync made durable. The file whose data and
// directory entry were synced survives whole; a file created before the last
// directory fsync keeps its name but not its unsynced data; a file created
// after it is gone, and a rename that was never synced is undone (the file
// is back under its old name).
func ExampleFS_Crash() {
	fsys := simfs.New(simfs.Options{Dev: 1})
	fsys.MkdirAll("/d", 0o755, 0)
	view := fsys.View(0)

	exampleWrite(view, "/d/durable", "committed", true)
	exampleWrite(view, "/d/name-only", "unsynced data", false)
	exampleWrite(view, "/d/old", "renamed", true) // its directory fsync covers /d/name-only
	exampleWrite(view, "/d/volatile", "lost", false)
	exampleMust(view.Rename("/d/old", "/d/new"))
	fmt.Println("pending before crash:", fsys.Pending()) // two data, two metadata

	fsys.Crash(simfs.CrashSyncedOnly, zeroChoice{})
	fmt.Println("pending after crash:", fsys.Pending())
	after := fsys.View(0)
	for _, name := range []string{"/d/durable", "/d/name-only", "/d/volatile", "/d/old", "/d/new"} {
		fmt.Printf("%s: %s\n", name, exampleRead(after, name))
	}
	// Output:
	// pending before crash: 4
	// pending after crash: 0
	// /d/durable: "committed"
	// /d/name-only: ""
	// /d/volatile: ENOENT
	// /d/old: "renamed"
	// /d/new: ENOENT
}

// exampleWrite creates name with data; with sync it fsyncs the file and then its
// directory, which is what makes both the data and the name durable.
func exampleWrite(view lease.FS, name, data string, sync bool) {
	f, err := view.OpenFile(name, lease.O_WRONLY|lease.O_CREATE|lease.O_TRUNC, 0o600)
	exampleMust(err)
	_, err = f.Write([]byte(data))
	exampleMust(err)
	if sync {
		exampleMust(f.Sync())
		dir, err := view.OpenFile("/d", lease.O_RDONLY, 0)
		exampleMust(err)
		exampleMust(dir.Sync())
		exampleMust(dir.Close())
	}
	exampleMust(f.Close())
}

// exampleRead returns the quoted contents of name, or the errno's name if it fails.
func exampleRead(view lease.FS, name string) string {
	f, err := view.OpenFile(name, lease.O_RDONLY, 0)
	if err != nil {
		return exampleErrno(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	exampleMust(err)
	return fmt.Sprintf("%q", data)
}

// exampleErrno names the errno inside err, as simfs errors always carry one.
func exampleErrno(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return simfs.ErrnoName(errno)
	}
	return err.Error()
}

func exampleMust(err error) {
	if err != nil {
		panic(err)
	}
}
