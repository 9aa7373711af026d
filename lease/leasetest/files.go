package leasetest

import (
	"errors"
	"io/fs"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// TB is the part of testing.TB the file helpers use (this package does not
// import testing: the bench and realstress link it into binaries).
type TB interface {
	Helper()
	Fatal(args ...any)
}

// WriteNew creates name on fsys, create-only and private, holding data: how
// the fuzz tests plant arbitrary bytes where an engine expects a record. It
// fails t when the file exists or a call fails.
func WriteNew(t TB, fsys lease.FS, name string, data []byte) {
	t.Helper()
	file, err := fsys.OpenFile(name, lease.O_WRONLY|lease.O_CREATE|lease.O_EXCL, 0o600)
	if err == nil {
		_, err = file.Write(data)
		err = errors.Join(err, file.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// ReadOrNil returns the bytes at name on fsys (at most 1 MiB), or nil when
// there is no such file: what a test compares to prove an engine kept, or
// removed, what it was given. It fails t on any other error.
func ReadOrNil(t TB, fsys lease.FS, name string) []byte {
	t.Helper()
	data, err := statefile.ReadFile(fsys, name, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}
