package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run whose release does not release exits with its own code, never the
// command's and never 0 (issue 29 item 7): the command takes the lease's
// record away (an operator's force, as far as the run can tell) and the
// release finds no owner (exit 5, lost while the command ran); or the
// command leaves a garbage lifecycle guard and the release is refused
// (exit 6, the run's record stays). Before exitLeaseLost and
// exitReleaseRefused, both exited with the command's code (3 and 0 here).
func TestRunReleaseThatDoesNotReleaseHasItsOwnCode(t *testing.T) {
	cases := []struct {
		name, script, says string
		want               int
	}{
		{name: "lost", script: `mv "$LEASEKIT_NAMESPACE/receiver.lock" "$LEASEKIT_NAMESPACE/../moved"; exit 3`,
			says: "was lost while the command ran (the command exited 3)", want: exitLeaseLost},
		{name: "refused", script: `printf 'garbage' > "$LEASEKIT_NAMESPACE/receiver.lifecycle.guard.json"`,
			says: "was refused after the command (the command exited 0)", want: exitReleaseRefused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := filepath.Join(t.TempDir(), "ns")
			got := run(t, "run", "-n", ns, "sh", "-c", tc.script)
			if got.code != tc.want || !strings.Contains(got.stderr, tc.says) {
				t.Fatalf("exit %d, want %d; stderr %q, want it to say %q", got.code, tc.want, got.stderr, tc.says)
			}
		})
	}
}

// Every flag of stress is in the usage text (--check-timeout,
// --quiesce-every, --compare-check and --verbose were missing, issue 30
// item 3).
func TestUsageNamesEveryStressFlag(t *testing.T) {
	flags, _ := newStressFlags()
	flags.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(usageText, "--"+f.Name+" ") && !strings.Contains(usageText, "--"+f.Name+"]") {
			t.Errorf("usage text lacks stress --%s", f.Name)
		}
	})
}

// `flock DIR cmd` locks a directory without writing into it; leasereal
// would fill its --dir with the lease's records. A non-empty directory
// with no lease in it is refused (exit 3), nothing written (issue 30 item
// 3: it was adopted silently, exit 0, with lifecycle-reclaims/,
// quarantine/ and receiver.epoch.json beside the user's file); an empty
// directory and an existing namespace are used.
func TestRunRefusesANonEmptyDirectoryWithNoLease(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := run(t, "run", "-n", dir, "true")
	if got.code != exitRefused || !strings.Contains(got.stderr, "namespace-foreign-directory") {
		t.Fatalf("exit %d, want %d (namespace-foreign-directory); stderr %q", got.code, exitRefused, got.stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the refused directory was written: %v %v", entries, err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{empty, empty} { // a new namespace, then an existing one
		if got := run(t, "run", "-n", ns, "true"); got.code != 0 {
			t.Fatalf("run in %s: exit %d; stderr %q", ns, got.code, got.stderr)
		}
	}
}
