//go:build linux

package osenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
)

const (
	fakePID       = 4242
	fakeHostname  = "fakehost"
	fakeBootID    = "6c3f2a5e-0000-4000-8000-000000000001"
	fakeStartTime = "987654"
	fakeUID       = 1000
)

// statLine builds a /proc/PID/stat line: pid, (comm), then fields 3 to 52
// with state, num_threads (20) and starttime (22) where the kernel puts
// them. fieldsAfterComm cuts it short to model truncated data.
func statLine(pid int, comm string, state byte, threads int, startTime string, fieldsAfterComm int) string {
	fields := make([]string, 50)
	for i := range fields {
		fields[i] = "0"
	}
	fields[0] = string(state)
	fields[20-3] = strconv.Itoa(threads)
	fields[22-3] = startTime
	return fmt.Sprintf("%d (%s) %s\n", pid, comm, strings.Join(fields[:fieldsAfterComm], " "))
}

// fakeProc is a handcrafted process table with one process, fakePID.
type fakeProc struct {
	root       string
	pidDir     string
	executable string
	namespace  string
}

func newFakeProc(t *testing.T, stat string) fakeProc {
	t.Helper()
	root := t.TempDir()
	pidDir := filepath.Join(root, strconv.Itoa(fakePID))
	require.NoError(t, os.MkdirAll(filepath.Join(pidDir, "ns"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys", "kernel", "random"), 0o700))
	executable := filepath.Join(t.TempDir(), "daemon")
	namespace := filepath.Join(pidDir, "ns", "pid")
	files := map[string]string{
		filepath.Join(pidDir, "stat"):                             stat,
		filepath.Join(pidDir, "status"):                           "Name:\tdaemon\nUmask:\t0022\nUid:\t1000\t0\t0\t0\nGid:\t0\t0\t0\t0\n",
		filepath.Join(root, "sys", "kernel", "random", "boot_id"): fakeBootID + "\n",
		namespace:  "",
		executable: "#!/bin/false\n",
	}
	for name, content := range files {
		require.NoError(t, os.WriteFile(name, []byte(content), 0o600))
	}
	require.NoError(t, os.Symlink(executable, filepath.Join(pidDir, "exe")))
	return fakeProc{root: root, pidDir: pidDir, executable: executable, namespace: namespace}
}

func (p fakeProc) inspector() *procInspector {
	return newProcInspector(p.root, func() (string, error) { return fakeHostname, nil }, realProcAccess())
}

func (p fakeProc) wantIdentity(t *testing.T) lease.ProcessIdentity {
	t.Helper()
	executable, err := os.Stat(p.executable)
	require.NoError(t, err)
	namespace, err := os.Stat(p.namespace)
	require.NoError(t, err)
	return lease.ProcessIdentity{
		PID:           fakePID,
		StartTime:     fakeStartTime,
		BootID:        fakeBootID,
		Executable:    p.executable,
		ExecutableDev: uint64(executable.Sys().(*syscall.Stat_t).Dev),
		ExecutableIno: executable.Sys().(*syscall.Stat_t).Ino,
		Hostname:      fakeHostname,
		PIDNamespace:  strconv.FormatUint(namespace.Sys().(*syscall.Stat_t).Ino, 10),
		UID:           fakeUID,
	}
}

func TestInspectFakeLive(t *testing.T) {
	cases := []struct {
		name    string
		comm    string
		state   byte
		threads int
		want    lease.ProcessState
	}{
		{"plain", "daemon", 'S', 3, lease.StateRunning},
		{"comm with parentheses and spaces", "a ) x ( b", 'R', 1, lease.StateRunning},
		{"comm ending in a parenthesis", "x) 1 2 (3)", 'D', 7, lease.StateRunning},
		{"empty comm", "", 'T', 1, lease.StateRunning},
		{"zombie leader with live threads", "daemon", 'Z', 4, lease.StateZombie},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proc := newFakeProc(t, statLine(fakePID, tc.comm, tc.state, tc.threads, fakeStartTime, 50))
			got := proc.inspector().Inspect(fakePID)
			require.Equal(t, lease.InspectLive, got.Kind, "diagnostic: %s", got.Diagnostic)
			require.Equal(t, proc.wantIdentity(t), got.Identity)
			require.NoError(t, got.Identity.Validate())
			require.Equal(t, tc.want, got.State)
			require.Equal(t, tc.threads, got.Threads)
		})
	}
}

// TestInspectFakeZombie: a reaped-memory zombie has no exe link and no live
// thread to borrow one from; it is still live (unreaped), with empty
// executable fields.
func TestInspectFakeZombie(t *testing.T) {
	proc := newFakeProc(t, statLine(fakePID, "daemon", 'Z', 1, fakeStartTime, 50))
	require.NoError(t, os.Remove(filepath.Join(proc.pidDir, "exe")))
	got := proc.inspector().Inspect(fakePID)
	require.Equal(t, lease.InspectLive, got.Kind, "diagnostic: %s", got.Diagnostic)
	require.Equal(t, lease.StateZombie, got.State)
	require.Equal(t, 1, got.Threads)
	require.Empty(t, got.Identity.Executable)
	require.Zero(t, got.Identity.ExecutableIno)
	require.Equal(t, fakeStartTime, got.Identity.StartTime)
}

// TestInspectFakeZombieLeaderBorrowsThreadExecutable: the leader's exe link
// is gone but a live thread still has one; its inode is the executable.
func TestInspectFakeZombieLeaderBorrowsThreadExecutable(t *testing.T) {
	proc := newFakeProc(t, statLine(fakePID, "daemon", 'Z', 2, fakeStartTime, 50))
	require.NoError(t, os.Remove(filepath.Join(proc.pidDir, "exe")))
	threadDir := filepath.Join(proc.pidDir, "task", "4243")
	require.NoError(t, os.MkdirAll(threadDir, 0o700))
	require.NoError(t, os.Symlink(proc.executable, filepath.Join(threadDir, "exe")))
	got := proc.inspector().Inspect(fakePID)
	require.Equal(t, lease.InspectLive, got.Kind, "diagnostic: %s", got.Diagnostic)
	require.Equal(t, proc.wantIdentity(t), got.Identity)
	require.Equal(t, lease.StateZombie, got.State)
	require.Equal(t, 2, got.Threads)
}

func TestInspectFakeUnknown(t *testing.T) {
	statPath := filepath.Join(strconv.Itoa(fakePID), "stat")
	cases := []struct {
		name       string
		stat       string
		mutate     func(t *testing.T, proc fakeProc)
		diagnostic string // a substring; paths are relative to the fake root
	}{
		{"garbage", "garbage\n", nil, statPath},
		{"empty stat", "", nil, statPath},
		{"no closing parenthesis", fmt.Sprintf("%d (daemon S 1 2 3", fakePID), nil, statPath},
		{"missing starttime", statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 19), nil, statPath},
		{"starttime not decimal", statLine(fakePID, "daemon", 'S', 1, "12a", 50), nil, "starttime"},
		{"starttime signed", statLine(fakePID, "daemon", 'S', 1, "+12", 50), nil, "starttime"},
		{"starttime overflows", statLine(fakePID, "daemon", 'S', 1, "99999999999999999999999", 50), nil, "starttime"},
		{"num_threads not a number", strings.Replace(statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50), " 1 0 ", " x 0 ", 1), nil, "num_threads"},
		{"state two letters", statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50)[:len("4242 (daemon) S")] + "S" + statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50)[len("4242 (daemon) S"):], nil, "state"},
		{"another PID's stat", statLine(fakePID+1, "daemon", 'S', 1, fakeStartTime, 50), nil, "PID field"},
		{"status without Uid", "", func(t *testing.T, proc fakeProc) {
			require.NoError(t, os.WriteFile(filepath.Join(proc.pidDir, "status"), []byte("Name:\tx\n"), 0o600))
		}, "status: no Uid line"},
		{"status with bad Uid", "", func(t *testing.T, proc fakeProc) {
			require.NoError(t, os.WriteFile(filepath.Join(proc.pidDir, "status"), []byte("Uid:\t-1\t0\t0\t0\n"), 0o600))
		}, "status: Uid"},
		{"executable missing while running", "", func(t *testing.T, proc fakeProc) {
			require.NoError(t, os.Remove(filepath.Join(proc.pidDir, "exe")))
		}, "exe is missing while the process (state S, 1 threads) still exists"},
		{"stat is a directory", "", func(t *testing.T, proc fakeProc) {
			require.NoError(t, os.Remove(filepath.Join(proc.pidDir, "stat")))
			require.NoError(t, os.Mkdir(filepath.Join(proc.pidDir, "stat"), 0o700))
		}, "is a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stat := tc.stat
			if stat == "" && tc.mutate != nil {
				stat = statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50)
			}
			proc := newFakeProc(t, stat)
			if tc.mutate != nil {
				tc.mutate(t, proc)
			}
			got := proc.inspector().Inspect(fakePID)
			require.Equal(t, lease.InspectUnknown, got.Kind)
			require.Contains(t, got.Diagnostic, tc.diagnostic)
			require.Equal(t, lease.ProcessIdentity{}, got.Identity, "no half-filled identity")
		})
	}
}

func TestInspectFakeNonPositivePID(t *testing.T) {
	proc := newFakeProc(t, statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50))
	for _, pid := range []int{0, -1, -fakePID} {
		got := proc.inspector().Inspect(pid)
		require.Equal(t, lease.InspectUnknown, got.Kind)
		require.Contains(t, got.Diagnostic, "not positive")
	}
}

func TestInspectFakeAbsent(t *testing.T) {
	proc := newFakeProc(t, statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50))
	got := proc.inspector().Inspect(fakePID + 1)
	require.Equal(t, lease.Inspection{Kind: lease.InspectAbsent}, got)
}

func TestInspectFakeWithoutBootID(t *testing.T) {
	proc := newFakeProc(t, statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50))
	require.NoError(t, os.Remove(filepath.Join(proc.root, "sys", "kernel", "random", "boot_id")))
	got := proc.inspector().Inspect(fakePID)
	require.Equal(t, lease.InspectLive, got.Kind, "diagnostic: %s", got.Diagnostic)
	require.Empty(t, got.Identity.BootID, "a host without boot_id leaves BootID empty")
}

func TestInspectFakeHostnameFailure(t *testing.T) {
	proc := newFakeProc(t, statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50))
	inspector := newProcInspector(proc.root, func() (string, error) { return "", syscall.EIO }, realProcAccess())
	got := inspector.Inspect(fakePID)
	require.Equal(t, lease.InspectUnknown, got.Kind)
	require.Contains(t, got.Diagnostic, "hostname")
}

// failingAccess wraps the real reads; a read of a path ending in suffix
// first runs before (if set) and then fails with errno (if not zero).
func failingAccess(suffix string, errno syscall.Errno, before func()) procAccess {
	access := realProcAccess()
	hit := func(path string) error {
		if !strings.HasSuffix(path, suffix) {
			return nil
		}
		if before != nil {
			before()
		}
		if errno == 0 {
			return nil
		}
		return &fs.PathError{Op: "open", Path: path, Err: errno}
	}
	readFile, stat, readlink := access.readFile, access.stat, access.readlink
	access.readFile = func(path string) ([]byte, error) {
		if err := hit(path); err != nil {
			return nil, err
		}
		return readFile(path)
	}
	access.stat = func(path string) (lease.FileInfo, error) {
		if err := hit(path); err != nil {
			return lease.FileInfo{}, err
		}
		return stat(path)
	}
	access.readlink = func(path string) (string, error) {
		if err := hit(path); err != nil {
			return "", err
		}
		return readlink(path)
	}
	return access
}

// TestInspectFakeReadErrors maps each errno on each file: ENOENT and ESRCH
// under /proc/PID mean the process is gone; anything else is unknown, and
// permission errors say so with the path.
func TestInspectFakeReadErrors(t *testing.T) {
	cases := []struct {
		suffix     string
		errno      syscall.Errno
		want       lease.InspectionKind
		diagnostic string
	}{
		{"/stat", syscall.EACCES, lease.InspectUnknown, "permission denied reading "},
		{"/stat", syscall.EPERM, lease.InspectUnknown, "permission denied reading "},
		{"/stat", syscall.EIO, lease.InspectUnknown, "reading "},
		{"/stat", syscall.ENOENT, lease.InspectAbsent, ""},
		{"/stat", syscall.ESRCH, lease.InspectAbsent, ""},
		{"/status", syscall.EACCES, lease.InspectUnknown, "permission denied reading "},
		{"/status", syscall.ESRCH, lease.InspectAbsent, ""},
		{"/ns/pid", syscall.EACCES, lease.InspectUnknown, "permission denied reading "},
		{"/ns/pid", syscall.ENOENT, lease.InspectAbsent, ""},
		{"/exe", syscall.EACCES, lease.InspectUnknown, "permission denied reading "},
		{"/exe", syscall.EIO, lease.InspectUnknown, "reading "},
		{"/boot_id", syscall.EACCES, lease.InspectUnknown, "reading "},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s", tc.suffix, tc.errno), func(t *testing.T) {
			proc := newFakeProc(t, statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50))
			access := failingAccess(tc.suffix, tc.errno, nil)
			got := newProcInspector(proc.root, func() (string, error) { return fakeHostname, nil }, access).Inspect(fakePID)
			require.Equal(t, tc.want, got.Kind, "diagnostic: %s", got.Diagnostic)
			if tc.want == lease.InspectUnknown {
				require.Contains(t, got.Diagnostic, tc.diagnostic+filepath.Join(proc.root, "")) // names the path
				require.Contains(t, got.Diagnostic, tc.suffix)
			}
		})
	}
}

// TestInspectFakeStatMode000 reads a stat file nobody may read. The kernel
// lets root read it anyway, so as root the same EACCES comes through the
// injected-read seam (TestInspectFakeReadErrors); here only the real
// permission check is exercised.
func TestInspectFakeStatMode000(t *testing.T) {
	proc := newFakeProc(t, statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50))
	statPath := filepath.Join(proc.pidDir, "stat")
	require.NoError(t, os.Chmod(statPath, 0))
	inspector := proc.inspector()
	if os.Geteuid() == 0 {
		t.Log("running as root: mode 000 does not stop root, so EACCES is injected through procAccess instead")
		inspector = newProcInspector(proc.root, func() (string, error) { return fakeHostname, nil },
			failingAccess("/stat", syscall.EACCES, nil))
	}
	got := inspector.Inspect(fakePID)
	require.Equal(t, lease.InspectUnknown, got.Kind)
	require.Contains(t, got.Diagnostic, "permission denied reading "+statPath)
}

// TestInspectFakeVanishes: the process disappears between the first read of
// stat and a later read; the PID is absent, not unknown.
func TestInspectFakeVanishes(t *testing.T) {
	for _, suffix := range []string{"/status", "/ns/pid", "/exe"} {
		t.Run(suffix, func(t *testing.T) {
			proc := newFakeProc(t, statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50))
			vanish := func() { require.NoError(t, os.RemoveAll(proc.pidDir)) }
			access := failingAccess(suffix, 0, vanish)
			got := newProcInspector(proc.root, func() (string, error) { return fakeHostname, nil }, access).Inspect(fakePID)
			require.Equal(t, lease.Inspection{Kind: lease.InspectAbsent}, got)
		})
	}
}

// TestInspectFakePIDReused: the PID changes hands mid-inspection. Once, and
// the inspection starts over and describes the new process; every time, and
// it gives up as unknown after a bounded number of attempts.
func TestInspectFakePIDReused(t *testing.T) {
	proc := newFakeProc(t, statLine(fakePID, "daemon", 'S', 1, fakeStartTime, 50))
	statPath := filepath.Join(proc.pidDir, "stat")
	reuses := 0
	reuse := func(limit int) func() {
		return func() {
			if reuses >= limit {
				return
			}
			reuses++
			line := statLine(fakePID, "daemon", 'S', 1, strconv.Itoa(1000+reuses), 50)
			require.NoError(t, os.WriteFile(statPath, []byte(line), 0o600))
		}
	}
	hostname := func() (string, error) { return fakeHostname, nil }

	got := newProcInspector(proc.root, hostname, failingAccess("/status", 0, reuse(1))).Inspect(fakePID)
	require.Equal(t, lease.InspectLive, got.Kind, "diagnostic: %s", got.Diagnostic)
	require.Equal(t, "1001", got.Identity.StartTime)
	require.Equal(t, 1, reuses)

	got = newProcInspector(proc.root, hostname, failingAccess("/status", 0, reuse(1000))).Inspect(fakePID)
	require.Equal(t, lease.InspectUnknown, got.Kind)
	require.Contains(t, got.Diagnostic, "changed start time")
	require.Equal(t, 1+inspectAttemptsMax, reuses)
}
