package workkit

import (
	"bytes"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// ReadRoot reads a whole small file through a root view. It is called
// between most steps, so it reads into one buffer of the file's size.
func ReadRoot(root lease.FS, name string) ([]byte, error) {
	f, err := root.OpenFile(name, lease.O_RDONLY|lease.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if info, err := f.Stat(); err == nil {
		size = info.Size
	}
	return statefile.ReadOpened(f, name, ReadRootMax, size)
}

// ReadRootMax is the largest file ReadRoot returns.
const ReadRootMax = 64 * 4096

// WriteRoot writes data to name durably through a root view.
func WriteRoot(root lease.FS, name string, flag lease.OpenFlag, data []byte) error {
	f, err := root.OpenFile(name, flag|lease.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// SyncRoot fsyncs directory dir through a root view, ignoring errors (an
// operator's flush: a failure leaves the state as the page cache has it).
func SyncRoot(root lease.FS, dir string) {
	if f, err := root.OpenFile(dir, lease.O_RDONLY|lease.O_DIRECTORY, 0); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
}

// Garble makes a record invalid: a truncation before its closing brace, or
// a non-JSON first byte. Never another valid record.
func Garble(data []byte, d *sim.Decisions) []byte {
	end := bytes.LastIndexByte(data, '}')
	if end > 0 && d.Intn(2) == 0 {
		return append([]byte(nil), data[:d.Intn(end)]...)
	}
	out := append([]byte(nil), data...)
	if len(out) == 0 {
		return []byte("#")
	}
	out[0] = '#'
	return out
}

// RenameOver is the hostile co-tenant saving data over name as an editor
// does: a new file of its own at temp, renamed over name, and name's
// directory synced. It reports whether the rename happened (an injected
// error may stop it; the temp is then removed).
func RenameOver(root lease.FS, temp, name string, data []byte) bool {
	if WriteRoot(root, temp, lease.O_CREATE|lease.O_EXCL, data) != nil {
		return false
	}
	if root.Rename(temp, name) != nil {
		_ = root.Remove(temp)
		return false
	}
	SyncRoot(root, fspath.Dir(name))
	return true
}

// Unmoved remembers a volume's name and data generations at a per-step look
// that passed. While neither moved, no name and no file's bytes on the
// volume changed, so the same look through the root view would read the
// same bytes and pass again: the check may skip it. A root read between
// steps draws no fault, so skipping it changes nothing but the time. Other
// filesystems than simfs keep no generations: there the look always runs.
type Unmoved struct {
	valid       bool
	names, data uint64
}

// Still reports whether v's generations are those of the last Mark.
func (u *Unmoved) Still(v *sim.Volume) bool {
	names, data, ok := v.Generations()
	return ok && u.valid && names == u.names && data == u.data
}

// Mark records v's generations after a look that passed.
func (u *Unmoved) Mark(v *sim.Volume) { u.names, u.data, u.valid = v.Generations() }

// Forget makes the next Still false: what the look compares with changed.
func (u *Unmoved) Forget() { u.valid = false }
