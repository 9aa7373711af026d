package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readPID waits for a shell to write a PID into name.
func readPID(t *testing.T, name string) int {
	t.Helper()
	waitForFile(t, name)
	for range pollAttemptsMax {
		data, err := os.ReadFile(name)
		if err == nil && strings.HasSuffix(string(data), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("%s never held a PID", name)
	return 0
}

// Issue 30 item 2: after kill -9 of `leasereal run`, the command's
// background job keeps working; the next run must find the lease held
// (exit 1, as flock) until the job exits, then get it. leasereal is
// started inside the test's own process group (as from a script), so it
// must lead a group of its own to cover the job.
func TestRunKilledWrapperLeavesItsTreeHoldingTheLease(t *testing.T) {
	dir := t.TempDir()
	ns, jobPID := filepath.Join(dir, "ns"), filepath.Join(dir, "job.pid")
	wrapper := exec.Command(binary, "run", "-n", ns, "sh", "-c", `sleep 30 & echo $! > "$1"; wait`, "sh", jobPID)
	if err := wrapper.Start(); err != nil {
		t.Fatal(err)
	}
	job := readPID(t, jobPID)
	t.Cleanup(func() { _ = syscall.Kill(job, syscall.SIGKILL) })
	if err := wrapper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = wrapper.Wait()

	if got := run(t, "run", "-n", ns, "true"); got.code != 1 {
		t.Fatalf("a run while the killed run's job works: exit %d, want 1 (held); stderr %q", got.code, got.stderr)
	}
	if got := run(t, "run", "-n", "--verbose", ns, "true"); !strings.Contains(got.stderr, "still runs") {
		t.Fatalf("--verbose does not say why the lease is held: %q", got.stderr)
	}
	if err := syscall.Kill(job, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range pollAttemptsMax {
		if got := run(t, "run", "-n", ns, "true"); got.code == 0 {
			return
		}
		time.Sleep(pollInterval)
	}
	t.Fatal("the lease stayed held after the job exited")
}

// A command that leaves a background job and exits: leasereal (a child
// subreaper) holds the lease until the job exits too, as flock holds the
// lock while any descendant holds the descriptor.
func TestRunHoldsTheLeaseUntilEveryDescendantExits(t *testing.T) {
	dir := t.TempDir()
	ns, proceed, jobPID := filepath.Join(dir, "ns"), filepath.Join(dir, "go"), filepath.Join(dir, "job.pid")
	job := `i=0; while [ ! -e "$1" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done`
	wrapper := exec.Command(binary, "run", "-n", ns, "sh", "-c", `sh -c "$1" sh "$2" & echo $! > "$3"`, "sh", job, proceed, jobPID)
	if err := wrapper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wrapper.Process.Kill() })
	readPID(t, jobPID)
	if got := run(t, "run", "-n", ns, "true"); got.code != 1 {
		t.Fatalf("a run while the first run's job works: exit %d, want 1; stderr %q", got.code, got.stderr)
	}
	if err := os.WriteFile(proceed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := wrapper.Wait(); err != nil {
		t.Fatalf("leasereal run: %v", err)
	}
	if got := run(t, "run", "-n", ns, "true"); got.code != 0 {
		t.Fatalf("after every descendant exited: exit %d, stderr %q", got.code, got.stderr)
	}
}
