package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDirleaseRunOnAHeldPathIsBusy: a second `dirlease run` on the path a
// live run holds exits 1 at once (busy, as flock -n), leaving the holder's
// claim and directory alone, and with -w it waits for the holder's release
// and then runs. Both runs used to be accepted, and a recovery after the
// first was killed removed the directory the second worked in.
func TestDirleaseRunOnAHeldPathIsBusy(t *testing.T) {
	base := t.TempDir()
	home := privateDir(t, base, "home")
	work := privateDir(t, base, "work")
	release := filepath.Join(base, "release")
	holder := exec.Command(binary, "dirlease", "run", "--state-home", home, "--path", work, "--",
		"sh", "-c", "while [ ! -e "+release+" ]; do sleep 0.05; done")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	claims := filepath.Join(home, "recovery", "beeper-message-like-me-directory-leases")
	waitFor(t, "the holder's running claim", func() bool {
		entries, _ := os.ReadDir(claims)
		return len(entries) == 1 && strings.Contains(readFile(t, filepath.Join(claims, entries[0].Name())), `"phase":"running"`)
	})

	busy := run(t, "dirlease", "run", "--state-home", home, "--path", work, "--", "touch", filepath.Join(work, "second"))
	if busy.code != exitConflict || !strings.Contains(busy.stderr, "busy") {
		t.Fatalf("second run on a held path: exit %d, want %d (busy); %s", busy.code, exitConflict, busy.stderr)
	}
	if entries, _ := os.ReadDir(claims); len(entries) != 1 {
		t.Fatalf("the refused run left %d claims, want the holder's only", len(entries))
	}
	if _, err := os.Stat(filepath.Join(work, "second")); !os.IsNotExist(err) {
		t.Fatalf("the refused run's command ran: %v", err)
	}

	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = os.WriteFile(release, nil, 0o600)
	}()
	waited := run(t, "dirlease", "run", "--state-home", home, "--path", work, "-w", "20", "--", "touch", filepath.Join(work, "second"))
	if waited.code != 0 {
		t.Fatalf("run -w on a path released meanwhile: exit %d; %s", waited.code, waited.stderr)
	}
	if err := holder.Wait(); err != nil {
		t.Fatalf("the holder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "second")); err != nil {
		t.Fatalf("the waiting run's command did not run: %v", err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, _ := os.ReadFile(name)
	return string(data)
}
