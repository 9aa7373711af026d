//go:build linux

package osenv

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/internal/procfs"
	"github.com/leasekit/leasekit/lease"
)

const (
	// pollAttemptsMax and pollInterval bound every wait for the kernel to
	// reach a state (a killed child turning zombie): at most 5 s.
	pollAttemptsMax = 1000
	pollInterval    = 5 * time.Millisecond
	// startAttemptsMax bounds retries of exec on ETXTBSY: a fork by another
	// goroutine can briefly hold a just-written binary open for writing.
	startAttemptsMax = 50
)

func sleepBinary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep binary to run as a child process: %v", err)
	}
	return path
}

// startChild runs binary with argument "30" and registers a kill+reap.
func startChild(t *testing.T, binary string) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	var err error
	for range startAttemptsMax {
		cmd = exec.Command(binary, "30")
		err = cmd.Start()
		if !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		time.Sleep(pollInterval)
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func statOf(t *testing.T, path string) lease.FileInfo {
	t.Helper()
	info, err := NewFS().Stat(path)
	require.NoError(t, err)
	return info
}

func TestCurrentIsLiveAndComplete(t *testing.T) {
	inspector := NewInspector()
	current, err := inspector.Current()
	require.NoError(t, err)
	require.NoError(t, current.Validate())

	executable, err := os.Executable()
	require.NoError(t, err)
	executableInfo := statOf(t, executable)
	hostname, err := os.Hostname()
	require.NoError(t, err)
	bootID, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	require.NoError(t, err)
	namespace := statOf(t, "/proc/self/ns/pid")

	require.Equal(t, os.Getpid(), current.PID)
	require.Regexp(t, `^[0-9]+$`, current.StartTime)
	require.Equal(t, strings.TrimSpace(string(bootID)), current.BootID)
	require.NotEmpty(t, current.BootID)
	require.Equal(t, executable, current.Executable)
	require.Equal(t, executableInfo.Dev, current.ExecutableDev)
	require.Equal(t, executableInfo.Ino, current.ExecutableIno)
	require.NotZero(t, current.ExecutableIno)
	require.Equal(t, hostname, current.Hostname)
	require.Equal(t, strconv.FormatUint(namespace.Ino, 10), current.PIDNamespace)
	require.Equal(t, os.Getuid(), current.UID)

	again := inspector.Inspect(os.Getpid())
	require.Equal(t, lease.InspectLive, again.Kind)
	require.Equal(t, current, again.Identity, "the identity is stable")
	require.Equal(t, lease.StateRunning, again.State)
	require.GreaterOrEqual(t, again.Threads, 1)
}

func TestCurrentFailsOnBrokenTable(t *testing.T) {
	_, err := NewInspectorAt(t.TempDir(), nil).Current()
	require.ErrorContains(t, err, "cannot inspect the current process")
}

func TestInspectChildLiveThenAbsent(t *testing.T) {
	binary := sleepBinary(t)
	inspector := NewInspector()
	child := startChild(t, binary)
	pid := child.Process.Pid

	got := inspector.Inspect(pid)
	require.Equal(t, lease.InspectLive, got.Kind, "diagnostic: %s", got.Diagnostic)
	require.NoError(t, got.Identity.Validate())
	require.Equal(t, pid, got.Identity.PID)
	require.Regexp(t, `^[0-9]+$`, got.Identity.StartTime)
	require.Equal(t, lease.StateRunning, got.State)
	require.Equal(t, 1, got.Threads)
	binaryInfo := statOf(t, binary)
	require.Equal(t, binaryInfo.Ino, got.Identity.ExecutableIno)
	require.Equal(t, binaryInfo.Dev, got.Identity.ExecutableDev)
	self, err := inspector.Current()
	require.NoError(t, err)
	childStart, err := strconv.ParseUint(got.Identity.StartTime, 10, 64)
	require.NoError(t, err)
	selfStart, err := strconv.ParseUint(self.StartTime, 10, 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, childStart, selfStart, "the child started after the test process")

	require.NoError(t, child.Process.Kill())
	_ = child.Wait() // "signal: killed"
	require.Equal(t, lease.Inspection{Kind: lease.InspectAbsent}, inspector.Inspect(pid))
}

// waitForZombie polls the child's stat until the kernel shows it as Z.
func waitForZombie(t *testing.T, pid int) {
	t.Helper()
	path := filepath.Join("/proc", strconv.Itoa(pid), "stat")
	for range pollAttemptsMax {
		data, err := os.ReadFile(path)
		require.NoError(t, err, "an unreaped child cannot vanish")
		stat, err := procfs.ParseStat(pid, data)
		require.NoError(t, err)
		if stat.State == 'Z' {
			return
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("PID %d did not become a zombie within %v", pid, pollAttemptsMax*pollInterval)
}

func TestInspectZombie(t *testing.T) {
	binary := sleepBinary(t)
	inspector := NewInspector()
	child := startChild(t, binary)
	pid := child.Process.Pid
	live := inspector.Inspect(pid)
	require.Equal(t, lease.InspectLive, live.Kind, "diagnostic: %s", live.Diagnostic)

	require.NoError(t, child.Process.Kill())
	waitForZombie(t, pid)
	got := inspector.Inspect(pid)
	require.Equal(t, lease.InspectLive, got.Kind, "an unreaped zombie is still in the table: %s", got.Diagnostic)
	require.Equal(t, lease.StateZombie, got.State)
	require.Equal(t, 1, got.Threads)
	require.Equal(t, live.Identity.StartTime, got.Identity.StartTime)
	require.Equal(t, live.Identity.PIDNamespace, got.Identity.PIDNamespace)

	current, err := inspector.Current()
	require.NoError(t, err)
	verdict := lease.ClassifyRecord(live.Identity, current, inspector)
	require.Equal(t, lease.OwnerState{Kind: lease.OwnerStale, Reason: lease.StaleZombie}, verdict)

	_ = child.Wait()
	require.Equal(t, lease.Inspection{Kind: lease.InspectAbsent}, inspector.Inspect(pid))
}

func copyFile(t *testing.T, source, target string) {
	t.Helper()
	in, err := os.Open(source)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// TestInspectExecutableReplaced: an upgrade renames a new binary over the
// running one. The process still runs the old inode, and the inspector
// reports that inode, not the one now at the path.
func TestInspectExecutableReplaced(t *testing.T) {
	binary := sleepBinary(t)
	dir := t.TempDir()
	installed := filepath.Join(dir, "daemon")
	copyFile(t, binary, installed)
	original := statOf(t, installed)
	if err := exec.Command(installed, "0").Run(); errors.Is(err, syscall.EACCES) {
		t.Skipf("cannot run a binary from %s (mounted noexec?): %v", dir, err)
	}
	child := startChild(t, installed)

	upgrade := filepath.Join(dir, "daemon.new")
	copyFile(t, binary, upgrade)
	require.NoError(t, NewFS().Rename(upgrade, installed))
	replaced := statOf(t, installed)
	require.NotEqual(t, original.Ino, replaced.Ino)

	got := NewInspector().Inspect(child.Process.Pid)
	require.Equal(t, lease.InspectLive, got.Kind, "diagnostic: %s", got.Diagnostic)
	require.Equal(t, original.Dev, got.Identity.ExecutableDev)
	require.Equal(t, original.Ino, got.Identity.ExecutableIno)
	require.NotEqual(t, replaced.Ino, got.Identity.ExecutableIno)
	require.Equal(t, installed+" (deleted)", got.Identity.Executable, "the path is kept as the kernel shows it")
}

func TestClassifyRecordOnRealInspector(t *testing.T) {
	binary := sleepBinary(t)
	inspector := NewInspector()
	current, err := inspector.Current()
	require.NoError(t, err)
	child := startChild(t, binary)
	inspection := inspector.Inspect(child.Process.Pid)
	require.Equal(t, lease.InspectLive, inspection.Kind, "diagnostic: %s", inspection.Diagnostic)
	record := inspection.Identity

	require.Equal(t, lease.OwnerState{Kind: lease.OwnerLive}, lease.ClassifyRecord(record, current, inspector))
	require.Equal(t, lease.OwnerState{Kind: lease.OwnerLive}, lease.ClassifyRecord(current, current, inspector))

	reused := record
	reused.StartTime += "0"
	require.Equal(t, lease.OwnerState{Kind: lease.OwnerStale, Reason: lease.StaleStartChanged},
		lease.ClassifyRecord(reused, current, inspector))

	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	require.Equal(t, lease.OwnerState{Kind: lease.OwnerStale, Reason: lease.StalePIDAbsent},
		lease.ClassifyRecord(record, current, inspector))
}
