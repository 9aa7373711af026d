//go:build linux

package main

import (
	"context"
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

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
)

// Real-OS identity tests, end to end through lease.Manager and osenv. The
// inspector-level versions live in lease/osenv/inspector_linux_test.go
// (TestInspectZombie and friends); these show what the engine then does.

func testManager(t *testing.T, dir string) *lease.Manager {
	t.Helper()
	manager, err := lease.NewManager(lease.Config{Namespace: dir, RootID: defaultRootID, FS: osenv.NewFS(),
		Clock: osenv.NewClock(), Inspector: osenv.NewInspector(), IDs: osenv.NewIDSource()})
	if err != nil {
		t.Fatal(err)
	}
	return manager
}

// startHolder starts `<executable> run --dir dir -- sleep 60` and waits
// until its lease is published; the owner is that leasereal process.
func startHolder(t *testing.T, executable, dir string) (*exec.Cmd, lease.Owner) {
	t.Helper()
	holder := exec.Command(executable, "run", "--dir", dir, "--", "sleep", "60")
	holder.Stdout, holder.Stderr = io.Discard, io.Discard
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = holder.Process.Kill()
		_ = holder.Wait()
	})
	manager := testManager(t, dir)
	for range pollAttemptsMax {
		projection, err := manager.Inspect(context.Background())
		if err == nil && projection.Kind == lease.Owned && projection.Owner.PID == holder.Process.Pid {
			return holder, projection.Owner
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("holder %d never published its lease", holder.Process.Pid)
	return nil, lease.Owner{}
}

func acquire(t *testing.T, dir string) lease.AcquireResult {
	t.Helper()
	result, err := testManager(t, dir).Acquire(context.Background(),
		lease.AcquireRequest{SessionID: "identity-test", SessionFile: "/identity-test"})
	if err != nil {
		t.Fatal(err)
	}
	return result
}

// assertReclaimed checks that result acquired over the dead owner, with the
// reason, and that the owner record survives in quarantine.
func assertReclaimed(t *testing.T, result lease.AcquireResult, owner lease.Owner, reason string) {
	t.Helper()
	if result.Kind != lease.Acquired || len(result.Reclaimed) != 1 {
		t.Fatalf("acquire over a dead owner: %v, %d reclaims, refusal %v", result.Kind, len(result.Reclaimed), result.Refusal)
	}
	reclaim := result.Reclaimed[0]
	if reclaim.Owner.Generation != owner.Generation || reclaim.Reason != reason {
		t.Fatalf("reclaimed %s (%q), want %s (%q)", reclaim.Owner.Generation, reclaim.Reason, owner.Generation, reason)
	}
	data, err := os.ReadFile(filepath.Join(reclaim.QuarantinePath, "owner.json"))
	if err != nil || !strings.Contains(string(data), owner.Generation) {
		t.Fatalf("the reclaimed owner is not in quarantine: %v", err)
	}
	if result.Owner.Epoch <= owner.Epoch {
		t.Fatalf("new epoch %d is not above the reclaimed %d", result.Owner.Epoch, owner.Epoch)
	}
}

// TestKilledOwnerIsReclaimed: a real holder SIGKILLed and reaped while its
// PID is still recorded: its lease is stale and the next acquire moves it
// into quarantine.
func TestKilledOwnerIsReclaimed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	holder, owner := startHolder(t, binary, dir)
	if got := acquire(t, dir); got.Kind != lease.Held || got.Owner.Generation != owner.Generation {
		t.Fatalf("acquire against a live holder: %v", got.Kind)
	}
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	assertReclaimed(t, acquire(t, dir), owner, lease.StalePIDAbsent)
}

// TestZombieOwnerIsReclaimed: a holder killed but not yet reaped is a
// single-threaded zombie: dead by the rules, so reclaimed.
func TestZombieOwnerIsReclaimed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	holder, owner := startHolder(t, binary, dir)
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitForZombie(t, holder.Process.Pid)
	assertReclaimed(t, acquire(t, dir), owner, lease.StaleZombie)
	_ = holder.Wait()
}

// waitForZombie polls /proc/PID/stat until the process is a zombie with a
// single thread: right after a SIGKILL the leader can show Z while its
// other threads are still exiting, and a zombie leader with live threads
// is alive by the rules.
func waitForZombie(t *testing.T, pid int) {
	t.Helper()
	for range pollAttemptsMax {
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err == nil {
			// Fields after the comm: state is field 3, num_threads field 20.
			fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
			if len(fields) > 17 && fields[0] == "Z" && fields[17] == "1" {
				return
			}
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("PID %d never became a single-threaded zombie", pid)
}

// TestReplacedExecutableStillHolds: the holder's binary is replaced on
// disk (an upgrade: a new file renamed over the path) while it runs. Its
// /proc/PID/exe now reads "... (deleted)", but the running image is the
// same inode, so the owner is alive and its lease held.
func TestReplacedExecutableStillHolds(t *testing.T) {
	bin := t.TempDir()
	copyPath := filepath.Join(bin, "leasereal")
	copyFile(t, binary, copyPath)
	dir := filepath.Join(t.TempDir(), "ns")
	holder, owner := startHolder(t, copyPath, dir)

	copyFile(t, binary, copyPath+".new")
	if err := os.Rename(copyPath+".new", copyPath); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(holder.Process.Pid), "exe"))
	if err != nil || !strings.HasSuffix(exe, " (deleted)") {
		t.Fatalf("/proc/PID/exe = %q, %v; want the replaced file shown as deleted", exe, err)
	}
	got := acquire(t, dir)
	if got.Kind != lease.Held || got.Owner.Generation != owner.Generation || len(got.Reclaimed) != 0 {
		t.Fatalf("acquire against an upgraded but live holder: %v (reclaimed %d)", got.Kind, len(got.Reclaimed))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestOtherUIDIsUnverifiable: an acquirer running as another uid cannot
// read the root owner's /proc entries (EACCES): the owner is unverifiable
// and the acquire refuses (exit 3) instead of reclaiming. A root holder
// takes the lease; the namespace is then handed to uid 65534 (chown -R), as
// the engine accepts only a namespace owned by the caller's uid, so the
// owner record names a process of another uid. The acquirer runs as uid
// 65534 with ambient CAP_DAC_READ_SEARCH (to traverse the test's private
// temp dirs), which grants no ptrace access to root's processes.
func TestOtherUIDIsUnverifiable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the acquirer as a second uid (65534); running as uid", os.Geteuid())
	}
	dir := filepath.Join(t.TempDir(), "ns")
	_, owner := startHolder(t, binary, dir)
	// The owner is published before the holder drops the lifecycle guard:
	// wait for the guard to go, so the acquirer judges the owner itself.
	guard := filepath.Join(dir, "receiver.lifecycle.guard.json")
	for attempt := 0; ; attempt++ {
		if _, err := os.Lstat(guard); errors.Is(err, os.ErrNotExist) {
			break
		}
		if attempt == pollAttemptsMax {
			t.Fatal("the holder kept the lifecycle guard")
		}
		time.Sleep(pollInterval)
	}
	if err := chownTree(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	other := exec.Command(binary, "acquire", "--owner", "self", "--dir", dir)
	other.SysProcAttr = &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: 65534, Gid: 65534},
		AmbientCaps: []uintptr{capDACReadSearch},
	}
	output, err := other.Output()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Skipf("cannot start a process as uid 65534 with ambient capabilities here: %v", err)
	}
	if exitErr != nil && exitErr.ExitCode() == exitError && strings.Contains(string(exitErr.Stderr), "permission denied") {
		t.Skipf("uid 65534 cannot reach the namespace even with DAC capabilities: %s", exitErr.Stderr)
	}
	out := decode[acquireJSON](t, string(output))
	if exitErr == nil || exitErr.ExitCode() != exitRefused || out.Refusal == nil ||
		out.Refusal.Reason != string(lease.RefusalUnverifiableOwner) {
		t.Fatalf("acquire as uid 65534 against root's holder: %v, %s", err, output)
	}
	t.Logf("refusal as uid 65534: %s", out.Refusal.Diagnostic)
	if !strings.Contains(out.Refusal.Diagnostic, "permission denied") {
		t.Fatalf("the refusal does not name the EACCES: %s", out.Refusal.Diagnostic)
	}
	// The namespace now belongs to uid 65534, so root's Manager would
	// refuse it: read the owner record directly.
	data, err := os.ReadFile(filepath.Join(dir, "receiver.lock", "owner.json"))
	if err != nil || !strings.Contains(string(data), owner.Generation) {
		t.Fatalf("the refused acquire changed the lease: %v", err)
	}
}

// chownTree hands dir and everything in it to uid:gid.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// capDACReadSearch is CAP_DAC_READ_SEARCH (linux/capability.h).
const capDACReadSearch = 2
