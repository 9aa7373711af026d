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

// attrs announces kind at a scheduling point and returns the volume's
// env.AttrFS, or the ENOSYS error naming op.
func (f *procFS) attrs(kind opKind, op, name string) (env.AttrFS, error) {
	f.p.point(kind, name)
	attrs, ok := f.p.view.(env.AttrFS)
	if !ok {
		return nil, unsupported(f.p, op, name)
	}
	return attrs, nil
}

// Chtimes is os.Chtimes.
func (f *procFS) Chtimes(name string, atime, mtime time.Time) error {
	attrs, err := f.attrs(opChtimes, "chtimes", name)
	if err != nil {
		return err
	}
	err = attrs.Chtimes(name, atime, mtime)
	f.p.result = resultCode(err)
	f.p.noteMtimeSet(true, err)
	return err
}

// Truncate is os.Truncate.
func (f *procFS) Truncate(name string, size int64) error {
	attrs, err := f.attrs(opTruncate, "truncate", name)
	if err != nil {
		return err
	}
	err = attrs.Truncate(name, size)
	f.p.result = resultCode(err)
	f.p.noteMtimeSet(false, err)
	return err
}

// randomAccess announces kind at a scheduling point and returns the inner
// file's env.RandomAccess, or the ENOSYS error naming op.
func (f *procFile) randomAccess(kind opKind, op string) (env.RandomAccess, error) {
	f.p.point(kind, f.inner.Name())
	ra, ok := f.inner.(env.RandomAccess)
	if !ok {
		return nil, unsupported(f.p, op, f.inner.Name())
	}
	return ra, nil
}

// Seek is os.File.Seek.
func (f *procFile) Seek(offset int64, whence int) (int64, error) {
	ra, err := f.randomAccess(opSeek, "seek")
	if err != nil {
		return 0, err
	}
	pos, err := ra.Seek(offset, whence)
	f.p.result = resultCode(err)
	f.p.observeValue(uint64(pos))
	return pos, err
}

// ReadAt is os.File.ReadAt.
func (f *procFile) ReadAt(b []byte, off int64) (int, error) {
	ra, err := f.randomAccess(opPread, "pread")
	if err != nil {
		return 0, err
	}
	n, err := ra.ReadAt(b, off)
	f.p.result = resultCode(err)
	f.p.traceEOF(err)
	f.p.observeBytes(b[:max(n, 0)])
	return n, err
}

// Truncate is os.File.Truncate.
func (f *procFile) Truncate(size int64) error {
	ra, err := f.randomAccess(opFtruncate, "truncate")
	if err != nil {
		return err
	}
	err = ra.Truncate(size)
	f.p.result = resultCode(err)
	f.p.noteMtimeSet(false, err)
	return err
}
