// Package osenv implements the injected interfaces (FS, File, Clock,
// IDSource and Inspector, declared in package env and aliased by package
// lease) on the real operating system, through golang.org/x/sys/unix, with
// dirlease's BootClock and leasecli's Groups (ProcessGroups) beside them. It is the only place where the engines reach
// the OS; they see it only through those interfaces, so the same engine
// code also runs inside the deterministic simulator.
//
// Errors follow the os package exactly: one-path failures are *fs.PathError
// and two-path failures (Rename, RenameNoReplace, Link, Symlink) are
// *os.LinkError, each wrapping the bare syscall.Errno, so errors.Is works both
// with the io/fs sentinels and with the exact errno. Every system call is
// retried on EINTR, a bounded number of times.
//
// Birth time comes from statx(2) with STATX_BTIME on Linux and from
// st_birthtimespec on darwin. When the filesystem does not report it,
// FileInfo.HasBirth is false and BirthNs is 0: an unknown identity, never a
// fake "born at zero".
//
// Process inspection reads /proc (Linux). Its parsing and errno mapping is
// internal/procfs, the same code the simulator runs over the /proc files its
// simulated hosts render; this package gives it the real reads. On darwin there is no /proc, and
// libproc cannot give a start time, executable inode and PID namespace with
// the same guarantees, so NewInspector fails closed there: Current returns an
// error and Inspect reports InspectUnknown. An unknown owner is never
// reclaimed, so a darwin host can hold leases but never steals a stale one.
// NewInspectorAt reads any directory laid out like /proc on every platform;
// it is the test seam for handcrafted process tables.
package osenv
