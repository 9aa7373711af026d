package sim

import (
	"io/fs"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/env"
)

// Modification times, truncation and positioned reads: a process's FS and
// files implement env.AttrFS and env.RandomAccess when its volume's do
// (simfs), each call a scheduling point. simfs stamps the modification
// times a process causes with its host's wall clock, so a clock step on
// that host moves them.

// Probes of the modification-time calls.
const (
	// ProbeChtimes: a process set a file's modification time.
	ProbeChtimes = "chtimes"
	// ProbeMtimeSteppedClock: a process on a host whose wall clock a clock
	// step had moved set or stamped a modification time (Chtimes,
	// Truncate): what a heartbeat lock's contender then compares with
	// its own clock.
	ProbeMtimeSteppedClock = "mtime-stepped-clock"
)

var (
	_ env.AttrFS       = (*procFS)(nil)
	_ env.RandomAccess = (*procFile)(nil)
)

// noteMtimeSet fires the modification-time probes after a successful call.
func (p *Proc) noteMtimeSet(chtimes bool, err error) {
	if err != nil {
		return
	}
	if chtimes {
		p.world.Probe(ProbeChtimes)
	}
	if p.host.wallOffset != 0 {
		p.world.Probe(ProbeMtimeSteppedClock)
	}
}

// unsupported is the error of a call the volume's FS does not implement.
func unsupported(p *Proc, op, name string) error {
	p.result = uint64(syscall.ENOSYS)
	return &fs.PathError{Op: op, Path: name, Err: syscall.ENOSYS}
}

// Chtimes is os.Chtimes.
func (f *procFS) Chtimes(name string, atime, mtime time.Time) error {
	f.p.point(opChtimes, name)
	attrs, ok := f.p.view.(env.AttrFS)
	if !ok {
		return unsupported(f.p, "chtimes", name)
	}
	err := attrs.Chtimes(name, atime, mtime)
	f.p.result = resultCode(err)
	f.p.noteMtimeSet(true, err)
	return err
}

// Truncate is os.Truncate.
func (f *procFS) Truncate(name string, size int64) error {
	f.p.point(opTruncate, name)
	attrs, ok := f.p.view.(env.AttrFS)
	if !ok {
		return unsupported(f.p, "truncate", name)
	}
	err := attrs.Truncate(name, size)
	f.p.result = resultCode(err)
	f.p.noteMtimeSet(false, err)
	return err
}

// Seek is os.File.Seek.
func (f *procFile) Seek(offset int64, whence int) (int64, error) {
	f.p.point(opSeek, f.inner.Name())
	ra, ok := f.inner.(env.RandomAccess)
	if !ok {
		return 0, unsupported(f.p, "seek", f.inner.Name())
	}
	pos, err := ra.Seek(offset, whence)
	f.p.result = resultCode(err)
	f.p.observeValue(uint64(pos))
	return pos, err
}

// ReadAt is os.File.ReadAt.
func (f *procFile) ReadAt(b []byte, off int64) (int, error) {
	f.p.point(opPread, f.inner.Name())
	ra, ok := f.inner.(env.RandomAccess)
	if !ok {
		return 0, unsupported(f.p, "pread", f.inner.Name())
	}
	n, err := ra.ReadAt(b, off)
	f.p.result = resultCode(err)
	f.p.observeBytes(b[:max(n, 0)])
	return n, err
}

// Truncate is os.File.Truncate.
func (f *procFile) Truncate(size int64) error {
	f.p.point(opFtruncate, f.inner.Name())
	ra, ok := f.inner.(env.RandomAccess)
	if !ok {
		return unsupported(f.p, "truncate", f.inner.Name())
	}
	err := ra.Truncate(size)
	f.p.result = resultCode(err)
	f.p.noteMtimeSet(false, err)
	return err
}
