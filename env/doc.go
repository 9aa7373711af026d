// Package env declares everything a leasekit engine, or a lock protocol
// tested in leasekit's simulator, may touch outside its own memory: the
// filesystem (FS, File, FileInfo, FileIdentity, DirEntry and the open
// flags, with the optional AttrFS, RandomAccess and Locker for flock(2) and
// fcntl record locks), time (Clock), the process table (Inspector,
// ProcessIdentity, Inspection) and randomness (IDSource). Code written only
// against these interfaces runs unchanged on the real OS (lease/osenv) and
// inside the deterministic simulator (simfs, simproc, sim), which is what
// lets the harness crash it, reuse its PIDs, step its clock and replay every
// run bit for bit. The model is Pebble's vfs package, widened from files to
// the whole environment.
//
// The engines (lease, admission, dirlease) use these types through aliases
// (lease.FS = env.FS, ...), so either name works.
//
// # Errno conventions
//
// Errors returned by an FS or a File are *fs.PathError (one path) or
// *os.LinkError (two paths: Rename, RenameNoReplace, Link, Symlink)
// wrapping a syscall.Errno, exactly as the os package returns them; simfs
// returns the same types around the same errnos. Code that must not import
// syscall tests errors with the io/fs sentinels:
//
//   - fs.ErrNotExist: ENOENT;
//   - fs.ErrExist: EEXIST and ENOTEMPTY;
//   - fs.ErrPermission: EACCES and EPERM.
//
// Every other errno (EIO, ENOSPC, ELOOP, EINVAL, ENOTDIR, EISDIR, ...) is an
// unexpected failure: surface it, never interpret it. In the simulator EIO
// and ENOSPC are injected faults, and a write or fsync that failed may or
// may not have taken effect.
//
// # Determinism
//
// Inside the simulator every method call is a scheduling point: another
// process may run, or the caller may be killed, before the call takes
// effect. Code under test must therefore reach time only through Clock
// (never time.Now or time.Sleep), the process table only through
// Inspector, randomness only through IDSource, and must not start
// goroutines.
package env
