package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseRunArgs: `run` takes flock(1)'s command line (getopt_long with
// "+": options end at the lease directory), plus leasereal's own options.
func TestParseRunArgs(t *testing.T) {
	cases := []struct {
		args     []string
		dir      string
		command  []string
		wait     time.Duration
		conflict int
		verbose  bool
	}{
		{args: []string{"-n", "D", "cmd", "-x"}, dir: "D", command: []string{"cmd", "-x"}, conflict: 1},
		{args: []string{"--nb", "D", "cmd"}, dir: "D", command: []string{"cmd"}, conflict: 1},
		{args: []string{"-nE", "7", "D", "cmd"}, dir: "D", command: []string{"cmd"}, conflict: 7},
		{args: []string{"-E7", "-w", "2.5", "D", "cmd"}, dir: "D", command: []string{"cmd"}, wait: 2500 * time.Millisecond, conflict: 7},
		{args: []string{"-w10", "D", "cmd"}, dir: "D", command: []string{"cmd"}, wait: 10 * time.Second, conflict: 1},
		{args: []string{"--timeout=3", "--conflict-exit-code", "0", "D", "cmd"}, dir: "D", command: []string{"cmd"}, wait: 3 * time.Second},
		{args: []string{"--wait", "300ms", "--dir", "D", "--", "cmd"}, dir: "D", command: []string{"cmd"}, wait: 300 * time.Millisecond, conflict: 1},
		{args: []string{"-n", "-w", "5", "D", "cmd"}, dir: "D", command: []string{"cmd"}, conflict: 1}, // -n wins, as in flock
		{args: []string{"-w", "0", "D", "cmd"}, dir: "D", command: []string{"cmd"}, conflict: 1},
		{args: []string{"-o", "--verbose", "D", "-c", "echo a; echo b"}, dir: "D", command: []string{"/bin/sh", "-c", "echo a; echo b"}, conflict: 1, verbose: true},
		{args: []string{"--dir", "D", "--command", "true"}, dir: "D", command: []string{"/bin/sh", "-c", "true"}, conflict: 1},
		{args: []string{"-dir", "D", "-json", "-wait", "1s", "--", "cmd"}, dir: "D", command: []string{"cmd"}, wait: time.Second, conflict: 1},
		{args: []string{"D", "--", "cmd", "--verbose"}, dir: "D", command: []string{"cmd", "--verbose"}, conflict: 1},
		{args: []string{"D", "cmd", "-c", "x"}, dir: "D", command: []string{"cmd", "-c", "x"}, conflict: 1},
	}
	for _, c := range cases {
		f, command, err := parseRunArgs(c.args)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if f.common.dir != c.dir || !slices.Equal(command, c.command) || f.wait != c.wait || f.conflictCode != c.conflict || f.verbose != c.verbose {
			t.Fatalf("%q: dir %q command %q wait %v conflict %d verbose %v", c.args, f.common.dir, command, f.wait, f.conflictCode, f.verbose)
		}
	}
}

// TestParseRunArgsErrors: every unusable command line is a usage error,
// and the flock options a lease cannot honour name the alternative.
func TestParseRunArgsErrors(t *testing.T) {
	cases := []struct {
		args []string
		says string
	}{
		{nil, "needs a lease directory"},
		{[]string{"D"}, "needs a command"},
		{[]string{"9"}, "file descriptor mode"},
		{[]string{"--fd", "9", "true"}, "--fd N"},
		{[]string{"-s", "D", "true"}, "shared"},
		{[]string{"-x", "D", "true"}, "always exclusive"},
		{[]string{"-e", "D", "true"}, "always exclusive"},
		{[]string{"-u", "D", "true"}, "leasereal release"},
		{[]string{"-F", "D", "true"}, "drop -F"},
		{[]string{"--fcntl", "D", "true"}, "byte-range"},
		{[]string{"--bogus", "D", "true"}, "unrecognized option '--bogus'"},
		{[]string{"-q", "D", "true"}, "unrecognized option '-q'"},
		{[]string{"-E", "256", "D", "true"}, "0-255"},
		{[]string{"-E", "x", "D", "true"}, "0-255"},
		{[]string{"-w", "-1", "D", "true"}, "invalid timeout"},
		{[]string{"-w", "soon", "D", "true"}, "invalid timeout"},
		{[]string{"-w"}, "requires an argument"},
		{[]string{"--timeout"}, "requires an argument"},
		{[]string{"--verbose=yes", "D", "true"}, "doesn't allow an argument"},
		{[]string{"D", "-c"}, "exactly one command argument"},
		{[]string{"D", "-c", "a", "b"}, "exactly one command argument"},
		{[]string{"-c", "true", "D"}, "comes after the lease directory"},
		{[]string{"--dir", "D", "-c", "a", "b"}, "exactly one command argument"},
	}
	for _, c := range cases {
		_, _, err := parseRunArgs(c.args)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("%q: %v, want a usage error saying %q", c.args, err, c.says)
		}
	}
	if f, _, err := parseRunArgs([]string{"--help"}); err != nil || !f.help {
		t.Fatalf("--help: %+v %v", f, err)
	}
}

// TestRunUsageErrorPrintsRunHelp: a usage error of run prints run's own
// help (every option), not the whole command list; --help prints it on
// stdout with exit 0.
func TestRunUsageErrorPrintsRunHelp(t *testing.T) {
	got := run(t, "run", "-x", t.TempDir(), "true")
	if got.code != exitUsage || !strings.Contains(got.stderr, "always exclusive") || !strings.HasSuffix(got.stderr, runUsage) {
		t.Fatalf("run -x: exit %d, stderr %q", got.code, got.stderr)
	}
	if help := run(t, "run", "--help"); help.code != 0 || help.stdout != runUsage {
		t.Fatalf("run --help: exit %d, stdout %q", help.code, help.stdout)
	}
}
