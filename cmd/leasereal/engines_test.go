package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// privateDir makes a mode-0700 directory, as the engines require of a
// state home and of a leased directory.
func privateDir(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAdmissionRun: the admission is held (helper-active, the child's
// identity recorded) while the command runs, a second admission is refused
// as active (exit 1), the child's code comes through, and the slot is free
// afterwards.
func TestAdmissionRun(t *testing.T) {
	home := privateDir(t, t.TempDir(), "home")
	// The child may run before its identity is bound: it polls (bounded)
	// until the record says helper-active.
	inspect := binary + " admission inspect --state-home " + home
	nested := "for i in $(seq 1 200); do " + inspect + " | grep -q helper-active && break; sleep 0.02; done; " +
		inspect + "; " +
		binary + " admission run --state-home " + home + " -- true; echo nested=$?; exit 9"
	got := run(t, "admission", "run", "--state-home", home, "--", "sh", "-c", nested)
	if got.code != 9 {
		t.Fatalf("exit %d, want 9; stderr %s", got.code, got.stderr)
	}
	if !strings.Contains(got.stdout, `"phase": "helper-active"`) || !strings.Contains(got.stdout, "nested=1") {
		t.Fatalf("inside the run: %s", got.stdout)
	}
	if after := run(t, "admission", "inspect", "--state-home", home); !strings.Contains(after.stdout, `"present": false`) {
		t.Fatalf("after the run: %s", after.stdout)
	}
}

// TestDirleaseRunAndRecover: a raw-working lease is held while the child
// runs; when leasereal is SIGKILLed (its child dies with it), recover
// finds the abandoned directory and removes it; a clean run leaves nothing
// to recover.
func TestDirleaseRunAndRecover(t *testing.T) {
	base := t.TempDir()
	home := privateDir(t, base, "home")
	work := privateDir(t, base, "work")
	if got := run(t, "dirlease", "run", "--state-home", home, "--path", work, "--", "sh", "-c", "exit 4"); got.code != 4 {
		t.Fatalf("clean run: exit %d, want 4; %s", got.code, got.stderr)
	}
	if got := run(t, "dirlease", "recover", "--state-home", home); !strings.Contains(got.stdout, `"recovered": 0`) {
		t.Fatalf("recover after a clean run: %s", got.stdout)
	}

	holder := exec.Command(binary, "dirlease", "run", "--state-home", home, "--path", work, "--", "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	claims := filepath.Join(home, "recovery", "beeper-message-like-me-directory-leases")
	waitFor(t, "the running claim", func() bool {
		entries, _ := os.ReadDir(claims)
		for _, entry := range entries {
			data, _ := os.ReadFile(filepath.Join(claims, entry.Name()))
			if strings.Contains(string(data), `"phase":"running"`) {
				return true
			}
		}
		return false
	})
	if got := run(t, "dirlease", "recover", "--state-home", home); !strings.Contains(got.stdout, `"active": 1`) {
		t.Fatalf("recover while the holder runs: %s", got.stdout)
	}
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	// The child (sleep) dies by PR_SET_PDEATHSIG; until it is gone the
	// claim is still active.
	waitFor(t, "recovery of the abandoned directory", func() bool {
		got := run(t, "dirlease", "recover", "--state-home", home)
		return strings.Contains(got.stdout, `"recovered": 1`)
	})
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Fatalf("the abandoned working directory is still there: %v", err)
	}
}

func waitFor(t *testing.T, what string, condition func() bool) {
	t.Helper()
	for range pollAttemptsMax {
		if condition() {
			return
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("timed out waiting for %s", what)
}
