package osenv

import (
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/leasekit/leasekit/internal/procfs"
	"github.com/leasekit/leasekit/lease"
)

// The inspector's parsing and errno mapping is internal/procfs (pure, and
// run by the simulator too); this file is its thin system-call part: the
// Reader over the real /proc, the caller's PID and uid.

const (
	// inspectAttemptsMax bounds how often Inspect starts over when the PID
	// changed hands between its first and last read of /proc/PID/stat.
	inspectAttemptsMax = procfs.InspectAttemptsMax
	// procFileBytesMax bounds one /proc file read: stat is under 1 KiB and
	// status under 2 KiB; anything larger is not the file we expect.
	procFileBytesMax = 1 << 16
)

// procAccess is how the inspector reads the process table. Tests replace a
// call to inject an error the kernel would not give them (EACCES when the
// tests run as root, who reads anything). Its methods are procfs.Reader.
type procAccess struct {
	readFile func(path string) ([]byte, error)
	stat     func(path string) (lease.FileInfo, error)
	readlink func(path string) (string, error)
	readDir  func(path string) ([]lease.DirEntry, error)
	hostname func() (string, error)
}

// realProcAccess reads through FS, so every read is EINTR-safe and every
// error is a *fs.PathError around the errno.
func realProcAccess() procAccess {
	fsys := FS{}
	return procAccess{
		readFile: func(path string) ([]byte, error) { return readFileBounded(fsys, path) },
		stat:     fsys.Stat,
		readlink: fsys.Readlink,
		readDir:  fsys.ReadDir,
	}
}

// markGone makes an ESRCH match procfs.ErrNoSuchProcess, keeping the errno.
func markGone(err error) error {
	if err != nil && errors.Is(err, syscall.ESRCH) {
		return goneError{err}
	}
	return err
}

// goneError is an ESRCH read error: it unwraps to the *fs.PathError and
// also matches procfs.ErrNoSuchProcess.
type goneError struct{ err error }

func (e goneError) Error() string        { return e.err.Error() }
func (e goneError) Unwrap() error        { return e.err }
func (e goneError) Is(target error) bool { return target == procfs.ErrNoSuchProcess }

func (a procAccess) ReadFile(path string) ([]byte, error) {
	data, err := a.readFile(path)
	return data, markGone(err)
}

func (a procAccess) Stat(path string) (lease.FileInfo, error) {
	info, err := a.stat(path)
	return info, markGone(err)
}

func (a procAccess) Readlink(path string) (string, error) {
	target, err := a.readlink(path)
	return target, markGone(err)
}

func (a procAccess) ReadDir(path string) ([]lease.DirEntry, error) {
	entries, err := a.readDir(path)
	return entries, markGone(err)
}

func (a procAccess) Hostname() (string, error) { return a.hostname() }

// readFileBounded reads a whole small file. A file longer than
// procFileBytesMax fails with EFBIG.
func readFileBounded(fsys FS, path string) ([]byte, error) {
	file, err := fsys.OpenFile(path, lease.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data := make([]byte, 0, 4096)
	buffer := make([]byte, 4096)
	for len(data) <= procFileBytesMax {
		n, err := file.Read(buffer)
		data = append(data, buffer[:n]...)
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EFBIG}
}

// procInspector is lease.Inspector over a /proc-like directory.
type procInspector struct {
	table *procfs.Table
}

// NewInspectorAt returns an Inspector that reads the process table under
// procRoot instead of /proc, and asks hostname for the host's name (nil
// means os.Hostname). It works on every platform, for handcrafted tables.
func NewInspectorAt(procRoot string, hostname func() (string, error)) lease.Inspector {
	return newProcInspector(procRoot, hostname, realProcAccess())
}

func newProcInspector(procRoot string, hostname func() (string, error), access procAccess) *procInspector {
	if procRoot == "" {
		panic("osenv: empty proc root")
	}
	if hostname == nil {
		hostname = os.Hostname
	}
	access.hostname = hostname
	return &procInspector{table: procfs.New(procRoot, access)}
}

// Current inspects the calling process, which must be live and complete.
func (i *procInspector) Current() (lease.ProcessIdentity, error) {
	return i.table.Current(os.Getpid())
}

// CallerUID is the caller's real uid (lease.CallerUIDReporter): Inspect
// needs it, and it is known even when /proc/self cannot be read.
func (i *procInspector) CallerUID() (uint32, error) { return uint32(os.Getuid()), nil }

// Inspect reads /proc/PID (procfs.Table.Inspect).
func (i *procInspector) Inspect(pid int) lease.Inspection { return i.table.Inspect(pid) }
