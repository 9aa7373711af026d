package sim

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// opKind names the operation at a scheduling point.
type opKind uint8

const (
	opStart opKind = iota
	opOpenFile
	opMkdir
	opMkdirTemp
	opRename
	opRenameNoReplace
	opLink
	opSymlink
	opRemove
	opReadDir
	opLstat
	opStat
	opReadlink
	opChmod
	opFileRead
	opFileWrite
	opFileSync
	opFileStat
	opFileClose
	opNow
	opMonotonic
	opSleep
	opWake
	opCurrent
	opInspect
	opNewID
	opFileReadDir
	opFileOpenAt
	opFileStatAt
	opFileRemoveAt
	opFlock
	opFcntlLock
	opChtimes
	opTruncate
	opSeek
	opPread
	opFtruncate
	opKindCount
)

var opKindNames = [opKindCount]string{
	"start", "openfile", "mkdir", "mkdirtemp", "rename", "renamenoreplace", "link", "symlink", "remove",
	"readdir", "lstat", "stat", "readlink", "chmod", "read", "write", "fsync", "fstat", "close",
	"now", "monotonic", "sleep", "wake", "current", "inspect", "newid",
	"readdirent", "openat", "fstatat", "unlinkat", "flock", "fcntl-lock",
	"chtimes", "truncate", "seek", "pread", "ftruncate",
}

func (k opKind) String() string { return opKindNames[k] }

// event is what a process announces at a scheduling point.
type event struct {
	kind opKind
	path string
}

// resultCode is the hash/trace form of an operation's error: 0 for success,
// the errno for an errno, 1 for anything else.
func resultCode(err error) uint64 {
	if err == nil {
		return 0
	}
	// What simfs returns, without errors.As's allocations: an errno, alone
	// or in a *fs.PathError or *os.LinkError, or io.EOF (which wraps
	// nothing). Anything else takes errors.As below.
	inner := err
	switch e := err.(type) {
	case *fs.PathError:
		inner = e.Err
	case *os.LinkError:
		inner = e.Err
	}
	if errno, ok := inner.(syscall.Errno); ok {
		return uint64(errno)
	}
	if err == io.EOF {
		return 1
	}
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	var errno syscall.Errno
	switch {
	case errors.As(err, &pathErr):
		err = pathErr.Err
	case errors.As(err, &linkErr):
		err = linkErr.Err
	}
	if errors.As(err, &errno) {
		return uint64(errno)
	}
	return 1
}

// procFS wraps the process's view of its volume.
type procFS struct{ p *Proc }

func (f *procFS) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	f.p.point(opOpenFile, name)
	inner, err := f.p.view.OpenFile(name, flag, perm)
	f.p.result = resultCode(err)
	if flag&lease.O_CREATE != 0 {
		f.p.calls.noteCreated(name, err)
	}
	if err != nil {
		return nil, err
	}
	file := f.p.world.newProcFile(f.p, inner)
	file.fresh = createsFile(flag)
	return file, nil
}

func (f *procFS) Mkdir(name string, perm fs.FileMode) error {
	f.p.point(opMkdir, name)
	err := f.p.view.Mkdir(name, perm)
	f.p.result = resultCode(err)
	f.p.calls.noteCreated(name, err)
	return err
}

func (f *procFS) MkdirTemp(dir, pattern string) (string, error) {
	f.p.point(opMkdirTemp, dir)
	name, err := f.p.view.MkdirTemp(dir, pattern)
	f.p.result = resultCode(err)
	f.p.observeString(name)
	f.p.calls.noteCreated(name, err)
	return name, err
}

func (f *procFS) Rename(oldpath, newpath string) error {
	f.p.point(opRename, oldpath)
	err := f.p.view.Rename(oldpath, newpath)
	f.p.result = resultCode(err)
	f.p.traceSecondPath("to", newpath)
	f.p.calls.noteCreated(newpath, err)
	f.p.noteRename(oldpath, newpath, err)
	return err
}

func (f *procFS) RenameNoReplace(oldpath, newpath string) error {
	f.p.point(opRenameNoReplace, oldpath)
	err := f.p.view.RenameNoReplace(oldpath, newpath)
	f.p.result = resultCode(err)
	f.p.traceSecondPath("to", newpath)
	f.p.calls.noteCreated(newpath, err)
	f.p.noteRename(oldpath, newpath, err)
	return err
}

func (f *procFS) Link(oldname, newname string) error {
	f.p.point(opLink, oldname)
	err := f.p.view.Link(oldname, newname)
	f.p.result = resultCode(err)
	f.p.traceSecondPath("to", newname)
	f.p.calls.noteCreated(newname, err)
	return err
}

func (f *procFS) Symlink(oldname, newname string) error {
	f.p.point(opSymlink, newname)
	err := f.p.view.Symlink(oldname, newname)
	f.p.result = resultCode(err)
	f.p.traceSecondPath("target", oldname)
	f.p.calls.noteCreated(newname, err)
	return err
}

func (f *procFS) Remove(name string) error {
	f.p.point(opRemove, name)
	err := f.p.view.Remove(name)
	f.p.result = resultCode(err)
	return err
}

func (f *procFS) ReadDir(name string) ([]lease.DirEntry, error) {
	f.p.point(opReadDir, name)
	entries, err := f.p.view.ReadDir(name)
	f.p.result = resultCode(err)
	f.p.observeEntries(entries)
	return entries, err
}

func (f *procFS) Lstat(name string) (lease.FileInfo, error) {
	f.p.point(opLstat, name)
	info, err := f.p.view.Lstat(name)
	f.p.result = resultCode(err)
	f.p.observeInfo(info)
	return info, err
}

func (f *procFS) Stat(name string) (lease.FileInfo, error) {
	f.p.point(opStat, name)
	info, err := f.p.view.Stat(name)
	f.p.result = resultCode(err)
	f.p.observeInfo(info)
	return info, err
}

func (f *procFS) Readlink(name string) (string, error) {
	f.p.point(opReadlink, name)
	target, err := f.p.view.Readlink(name)
	f.p.result = resultCode(err)
	f.p.observeString(target)
	return target, err
}

func (f *procFS) Chmod(name string, mode fs.FileMode) error {
	f.p.point(opChmod, name)
	err := f.p.view.Chmod(name, mode)
	f.p.result = resultCode(err)
	return err
}

// newProcFile wraps an open file for p, carving the wrapper from a slab
// of procFileSlab: a run opens a few thousand files, and one allocation per
// open was a tenth of all of them. A slab lives while any wrapper in it is
// referenced.
func (w *World) newProcFile(p *Proc, inner lease.File) *procFile {
	if len(w.procFiles) == 0 {
		w.procFiles = make([]procFile, procFileSlab)
	}
	f := &w.procFiles[0]
	w.procFiles = w.procFiles[1:]
	f.p, f.inner, f.fresh = p, inner, false
	p.calls.opened(f)
	return f
}

const procFileSlab = 16

// procFile wraps an open file of the process.
type procFile struct {
	p     *Proc
	inner lease.File
	// fresh: the open created the file (a temp), so its writes open the
	// power loss's write window (writewindow.go).
	fresh bool
}

// Name is not a scheduling point: it reads no shared state.
func (f *procFile) Name() string { return f.inner.Name() }

func (f *procFile) Read(b []byte) (int, error) {
	f.p.point(opFileRead, f.inner.Name())
	n, err := f.inner.Read(b)
	f.p.result = resultCode(err)
	f.p.traceEOF(err)
	f.p.observeBytes(b[:max(n, 0)])
	return n, err
}

func (f *procFile) Write(b []byte) (int, error) {
	f.p.point(opFileWrite, f.inner.Name())
	n, err := f.inner.Write(b)
	f.p.result = resultCode(err)
	f.p.observeValue(uint64(n))
	if f.fresh {
		f.p.noteFreshWrite(err)
	}
	return n, err
}

func (f *procFile) Sync() error {
	f.p.point(opFileSync, f.inner.Name())
	f.p.inWriteWindow = false
	err := f.inner.Sync()
	f.p.result = resultCode(err)
	f.p.world.noteSync(f.inner.Name(), err)
	return err
}

func (f *procFile) Stat() (lease.FileInfo, error) {
	f.p.point(opFileStat, f.inner.Name())
	info, err := f.inner.Stat()
	f.p.result = resultCode(err)
	f.p.observeInfo(info)
	return info, err
}

func (f *procFile) Close() error {
	f.p.point(opFileClose, f.inner.Name())
	f.p.inWriteWindow = false
	f.p.calls.closed(f)
	err := f.inner.Close()
	f.p.result = resultCode(err)
	return err
}

// The directory-handle methods: each is a scheduling point, like every
// other call, named by the joined path it acts on.

func (f *procFile) ReadDir() ([]lease.DirEntry, error) {
	f.p.point(opFileReadDir, f.inner.Name())
	entries, err := f.inner.ReadDir()
	f.p.result = resultCode(err)
	f.p.observeEntries(entries)
	return entries, err
}

func (f *procFile) OpenAt(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	f.p.point(opFileOpenAt, fspath.Join(f.inner.Name(), name))
	inner, err := f.inner.OpenAt(name, flag, perm)
	f.p.result = resultCode(err)
	if flag&lease.O_CREATE != 0 {
		f.p.calls.noteCreated(fspath.Join(f.inner.Name(), name), err)
	}
	if err != nil {
		return nil, err
	}
	file := f.p.world.newProcFile(f.p, inner)
	file.fresh = createsFile(flag)
	return file, nil
}

func (f *procFile) StatAt(name string) (lease.FileInfo, error) {
	f.p.point(opFileStatAt, fspath.Join(f.inner.Name(), name))
	info, err := f.inner.StatAt(name)
	f.p.result = resultCode(err)
	f.p.observeInfo(info)
	return info, err
}

func (f *procFile) RemoveAt(name string, dir bool) error {
	f.p.point(opFileRemoveAt, fspath.Join(f.inner.Name(), name))
	err := f.inner.RemoveAt(name, dir)
	f.p.result = resultCode(err)
	return err
}

// procClock is the process's host clock.
type procClock struct{ p *Proc }

func (c *procClock) Now() time.Time {
	c.p.point(opNow, "")
	now := c.p.host.Wall()
	c.p.observeTime(now)
	c.p.noteWallRead()
	return now
}

func (c *procClock) Monotonic() time.Duration {
	c.p.point(opMonotonic, "")
	monotonic := c.p.host.Monotonic()
	c.p.observeValue(uint64(monotonic))
	return monotonic
}

// Sleep blocks the process until the simulated time reaches now+d. A
// sleeping process is not runnable; when nothing is runnable the world jumps
// to the earliest wake-up.
func (c *procClock) Sleep(ctx context.Context, d time.Duration) error {
	p := c.p
	p.point(opSleep, "")
	if err := ctx.Err(); err != nil {
		p.result = 1
		return err
	}
	if d <= 0 {
		return nil
	}
	p.sleeping = true
	p.wakeAt = p.world.now + int64(min(d, sleepMax-time.Duration(p.world.now)))
	p.point(opWake, "")
	return ctx.Err()
}

// sleepMax caps every wake-up time (about 146 years of simulated time), so
// that no sleep, however long, overflows the simulated clock.
const sleepMax = time.Duration(1 << 62)

// procInspector is the process's view of its host's process table.
type procInspector struct{ p *Proc }

func (in *procInspector) Current() (lease.ProcessIdentity, error) {
	in.p.point(opCurrent, "")
	id, err := in.p.inspector.Current()
	in.p.result = resultCode(err)
	in.p.observeIdentity(id)
	return id, err
}

func (in *procInspector) Inspect(pid int) lease.Inspection {
	in.p.point(opInspect, "")
	inspection := in.p.inspector.Inspect(pid)
	in.p.result = uint64(inspection.Kind)
	if in.p.world.trace != nil {
		in.p.resultText = inspectionText(pid, inspection)
	}
	in.p.observeInspection(inspection)
	in.p.noteInspected(pid, inspection)
	return inspection
}

// inspectionText renders an inspection for the trace, by name:
// "live pid=7 state=R threads=1", "absent pid=7", "unknown pid=7: <why>".
func inspectionText(pid int, in lease.Inspection) string {
	head := in.Kind.String() + " pid=" + strconv.Itoa(pid)
	switch in.Kind {
	case lease.InspectLive:
		state := "R"
		if in.State == lease.StateZombie {
			state = "Z"
		}
		return head + " state=" + state + " threads=" + strconv.Itoa(in.Threads)
	case lease.InspectUnknown:
		return head + ": " + in.Diagnostic
	}
	return head
}

// procIDs draws identifiers from the world's counter: unique within a run,
// deterministic, and independent of the decision list (so a shrunk list never
// makes two generations equal).
type procIDs struct{ p *Proc }

func (s *procIDs) NewID() string {
	s.p.point(opNewID, "")
	w := s.p.world
	w.idsTotal++
	s.p.observeValue(w.idsTotal)
	return formatUUID(w.idsTotal)
}

// formatUUID renders a version-4 UUID whose random bits are two bijective
// mixes of n. Version and variant overwrite 6 of the 128 bits; two counters
// would have to agree on the other 122 bits of two independent bijections
// to collide.
func formatUUID(n uint64) string {
	hi, lo := mix64(n), mix64(n^0x5555555555555555)
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(hi >> (56 - 8*i))
		b[8+i] = byte(lo >> (56 - 8*i))
	}
	return statefile.FormatUUIDv4(b)
}

// mix64 is splitmix64's finalizer, a bijection on uint64.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// traceSecondPath shows a two-path call's other path in the trace (the
// new name of a rename or link, a symlink's target) beside the path the
// step announced.
func (p *Proc) traceSecondPath(key, path string) {
	if p.world.trace != nil {
		p.traceExtra = " " + key + "=" + path
	}
}

// traceEOF shows a read at end of file as EOF in the trace, not as the
// "error" of a failed call: io.EOF is how a read reports the file's end.
func (p *Proc) traceEOF(err error) {
	if err == io.EOF && p.world.trace != nil {
		p.resultText = "EOF"
	}
}
