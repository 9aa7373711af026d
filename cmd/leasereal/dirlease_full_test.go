package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/longtest"
)

// TestDirleaseFullStateHome: runs killed with kill -9 leave their claims
// until a recovery. At dirlease.ClaimsMax of them the next run is refused
// (full, exit 3) naming the state home, the count and the command, and runs
// nothing; inspect reports the state home full with that command (exit 3);
// recover takes every claim, and runs are accepted again. Before, the
// 65th run was accepted and every recover failed on the reviewed bound.
func TestDirleaseFullStateHome(t *testing.T) {
	longtest.Require(t, "dirlease.ClaimsMax killed runs filling a state home")
	base := t.TempDir()
	home := privateDir(t, base, "home")
	work := privateDir(t, base, "work")
	claims := filepath.Join(home, "recovery", "beeper-message-like-me-directory-leases")
	// A run whose kill landed before its claim was durable leaves none;
	// such a run is logged and another is started (a bounded number).
	before := 0
	for i := 0; i < dirlease.ClaimsMax+8 && (i < dirlease.ClaimsMax || claimFiles(t, claims) < dirlease.ClaimsMax); i++ {
		path := privateDir(t, work, "killed-"+strconv.Itoa(i))
		killed := run(t, "dirlease", "run", "--state-home", home, "--path", path, "--recover-after", "1ms", "--",
			"sh", "-c", "kill -9 $PPID")
		if killed.code == 0 {
			t.Fatalf("run %d was not killed: %+v", i, killed)
		}
		left := claimFiles(t, claims)
		if left == before {
			t.Logf("run %d left no claim (%d claims now): exit %d, %s", i, left, killed.code, killed.stderr)
		}
		before = left
	}
	if left := claimFiles(t, claims); left != dirlease.ClaimsMax {
		t.Fatalf("%d claims left by killed runs, want %d", left, dirlease.ClaimsMax)
	}

	path := privateDir(t, work, "one-more")
	full := run(t, "dirlease", "run", "--state-home", home, "--path", path, "--", "touch", filepath.Join(path, "ran"))
	command := "leasereal dirlease recover --state-home " + home
	if full.code != exitRefused || !strings.Contains(full.stderr, "full") ||
		!strings.Contains(full.stderr, strconv.Itoa(dirlease.ClaimsMax)+" claims") || !strings.Contains(full.stderr, command) {
		t.Fatalf("run on a full state home: exit %d, want %d naming the count and %q; %s", full.code, exitRefused, command, full.stderr)
	}
	if _, err := os.Stat(filepath.Join(path, "ran")); !os.IsNotExist(err) {
		t.Fatalf("the refused run's command ran: %v", err)
	}
	if left := claimFiles(t, claims); left != dirlease.ClaimsMax {
		t.Fatalf("the refused run left %d claims, want %d", left, dirlease.ClaimsMax)
	}

	inspected := run(t, "dirlease", "inspect", "--state-home", home)
	var report struct {
		Full struct {
			Claims   int    `json:"claims"`
			Operator string `json:"operator"`
		} `json:"full"`
	}
	if err := json.Unmarshal([]byte(inspected.stdout), &report); err != nil || inspected.code != exitRefused ||
		report.Full.Claims != dirlease.ClaimsMax || !strings.Contains(report.Full.Operator, command) {
		t.Fatalf("inspect of a full state home: exit %d (%v), want %d with the count and %q; %s", inspected.code, err,
			exitRefused, command, inspected.stdout)
	}

	recovered := run(t, "dirlease", "recover", "--state-home", home)
	if recovered.code != 0 || !strings.Contains(recovered.stdout, `"recovered": `+strconv.Itoa(dirlease.ClaimsMax)) {
		t.Fatalf("recover of a full state home: exit %d; %s %s", recovered.code, recovered.stdout, recovered.stderr)
	}
	again := run(t, "dirlease", "run", "--state-home", home, "--path", path, "--", "touch", filepath.Join(path, "ran"))
	if again.code != 0 {
		t.Fatalf("run after recovery: exit %d; %s", again.code, again.stderr)
	}
}

// claimFiles counts the claim files in dir (not the dot-named machinery a
// killed run may leave beside them, which recovery clears).
func claimFiles(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, entry := range entries {
		if strings.HasSuffix(entry.Name(), ".json") && !strings.HasPrefix(entry.Name(), ".") {
			n++
		}
	}
	return n
}
