package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds of the tests' polling loops: at most 5 s.
const (
	pollInterval    = 10 * time.Millisecond
	pollAttemptsMax = 500
)

// binary is the leasereal built once for every test in this package.
var binary string

func TestMain(m *testing.M) {
	flag.Parse() // testing.CoverMode and -test.gocoverdir are known after it
	// Under nohup (SIGHUP ignored) every child would inherit the ignored
	// SIGHUP, and the cases where a command must die of one would see it
	// survive. A handled signal is reset to its default by exec, so the
	// children start as they would in a terminal session.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	dir, err := os.MkdirTemp("", "leasereal-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// World-searchable, so TestOtherUIDIsUnverifiable can run it as uid 65534.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "leasereal")
	build := exec.Command("go", append(append([]string{"build"}, coverBuildFlags()...), "-o", binary, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building leasereal:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// coverBuildFlags makes the leasereal that the tests run count toward this
// package's coverage (docs/REALSTRESS.md, "Coverage of the binary"). Under `go test
// -cover`, the binary is built with -cover in the test binary's counter
// mode, instrumenting this package only (go test's default -coverpkg), so
// its coverage meta-data hash is the test binary's; every leasereal process
// writes its counters to GOCOVERDIR, set to the test binary's own
// -test.gocoverdir, where go test's report merges all files of that hash.
// Without -cover it returns nothing and the binary is a plain build.
func coverBuildFlags() []string {
	mode := testing.CoverMode()
	coverDir := flag.Lookup("test.gocoverdir")
	if mode == "" || coverDir == nil || coverDir.Value.String() == "" {
		return nil
	}
	if err := os.Setenv("GOCOVERDIR", coverDir.Value.String()); err != nil {
		panic(err)
	}
	return []string{"-cover", "-covermode=" + mode, "-coverpkg=github.com/leasekit/leasekit/cmd/leasereal"}
}

// result is one leasereal invocation.
type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running leasereal %v: %v", args, err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func decode[T any](t *testing.T, text string) T {
	t.Helper()
	var value T
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&value); err != nil {
		t.Fatalf("decoding %T from %q: %v", value, text, err)
	}
	return value
}

// TestAcquireInspectReleaseJSON round-trips the lease through the CLI. The
// owner is the caller of leasereal (this test process), which stays alive,
// so a second acquire sees the lease held.
func TestAcquireInspectReleaseJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	acquired := run(t, "acquire", "--dir", dir, "--session-id", "round-trip")
	if acquired.code != exitOK {
		t.Fatalf("acquire: exit %d, %s%s", acquired.code, acquired.stdout, acquired.stderr)
	}
	first := decode[acquireJSON](t, acquired.stdout)
	if first.Result != "acquired" || first.Owner == nil || first.Owner.PID != os.Getpid() ||
		first.Owner.Epoch != 1 || first.Owner.SessionID != "round-trip" || first.Namespace != dir {
		t.Fatalf("acquire output %+v", first)
	}

	inspected := decode[inspectJSON](t, run(t, "inspect", "--dir", dir).stdout)
	if inspected.State != "owned" || inspected.Owner.Generation != first.Owner.Generation {
		t.Fatalf("inspect %+v, want owned by generation %s", inspected, first.Owner.Generation)
	}

	again := run(t, "acquire", "--dir", dir)
	if held := decode[acquireJSON](t, again.stdout); again.code != exitConflict || held.Result != "held" ||
		held.Owner.Generation != first.Owner.Generation {
		t.Fatalf("second acquire: exit %d %+v", again.code, held)
	}

	wrong := run(t, "release", "--dir", dir, "--generation", "not-the-generation")
	if out := decode[releaseJSON](t, wrong.stdout); wrong.code != exitConflict || out.Result != "not-owner" ||
		out.Owner == nil || out.Owner.Generation != first.Owner.Generation {
		t.Fatalf("release with a wrong generation: exit %d %+v", wrong.code, out)
	}
	released := run(t, "release", "--dir", dir, "--generation", first.Owner.Generation)
	if out := decode[releaseJSON](t, released.stdout); released.code != exitOK || out.Result != "released" {
		t.Fatalf("release: exit %d %+v", released.code, out)
	}
	if out := decode[inspectJSON](t, run(t, "inspect", "--dir", dir).stdout); out.State != "empty" {
		t.Fatalf("inspect after release: %+v", out)
	}
	// A command substitution's parent is a short-lived subshell: --owner PID
	// names the long-lived process instead.
	next := decode[acquireJSON](t, run(t, "acquire", "--dir", dir, "--owner", strconv.Itoa(os.Getpid())).stdout)
	if next.Result != "acquired" || next.Owner.Epoch != 2 || next.Owner.PID != os.Getpid() {
		t.Fatalf("acquire after release: %+v, want epoch 2 owned by this process", next)
	}
}

// TestUsageAndErrors checks the usage exit code and the refused and error
// paths.
func TestUsageAndErrors(t *testing.T) {
	notDirectory := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDirectory, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"no subcommand", nil, exitUsage},
		{"unknown subcommand", []string{"frobnicate"}, exitUsage},
		{"acquire without dir", []string{"acquire"}, exitUsage},
		{"release without generation", []string{"release", "--dir", t.TempDir()}, exitUsage},
		{"run without command", []string{"run", "--dir", t.TempDir()}, exitUsage},
		{"bad owner", []string{"acquire", "--dir", t.TempDir(), "--owner", "nobody"}, exitUsage},
		{"namespace is a file", []string{"acquire", "--dir", notDirectory}, exitRefused},
		{"namespace below a file", []string{"run", "-n", filepath.Join(notDirectory, "ns"), "true"}, exitRefused},
		{"stress of an unknown engine", []string{"stress", "--engine", "nope"}, exitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := run(t, c.args...); got.code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", got.code, c.code, got.stderr)
			}
		})
	}
}

// TestRefusedCorruptOwner: a corrupt owner needs an operator: exit 3 with
// the human state named, and nothing deleted.
func TestRefusedCorruptOwner(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "receiver.lock"), 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "receiver.lock", "owner.json")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := run(t, "acquire", "--dir", dir)
	out := decode[acquireJSON](t, got.stdout)
	if got.code != exitRefused || out.Refusal == nil || out.Refusal.Reason != "corrupt-owner" || out.Refusal.Human == "" {
		t.Fatalf("exit %d %+v", got.code, out)
	}
	if data, err := os.ReadFile(garbage); err != nil || string(data) != "{not json" {
		t.Fatalf("the corrupt owner was changed: %q %v", data, err)
	}
	if got := run(t, "run", "--dir", dir, "--", "true"); got.code != exitRefused {
		t.Fatalf("run over a corrupt owner: exit %d, want %d", got.code, exitRefused)
	}
}

// TestRunPassesExitCodesAndReleases: the child's code comes through, the
// lease is exported to it, and released after it, whatever its status.
func TestRunPassesExitCodesAndReleases(t *testing.T) {
	cases := []struct {
		name    string
		command []string
		code    int
	}{
		{"success", []string{"sh", "-c", "exit 0"}, 0},
		{"failure", []string{"sh", "-c", "exit 7"}, 7},
		{"killed by SIGTERM", []string{"sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM)},
		{"cannot start", []string{filepath.Join(t.TempDir(), "missing")}, exitNoCommand},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ns")
			got := run(t, append([]string{"run", "--dir", dir, "--"}, c.command...)...)
			if got.code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", got.code, c.code, got.stderr)
			}
			if out := decode[inspectJSON](t, run(t, "inspect", "--dir", dir).stdout); out.State != "empty" {
				t.Fatalf("lease after run: %+v, want empty", out)
			}
		})
	}
}

func TestRunExportsTheLease(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	envFile := filepath.Join(t.TempDir(), "env")
	got := run(t, "run", "--json", "--dir", dir, "--", "sh", "-c",
		`printf '%s %s %s' "$LEASEKIT_GENERATION" "$LEASEKIT_EPOCH" "$LEASEKIT_NAMESPACE" > `+envFile)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	data, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(got.stderr), "\n")
	if len(lines) != 2 {
		t.Fatalf("--json wrote %d lines, want acquire and release: %q", len(lines), got.stderr)
	}
	acquire := decode[struct{ Acquire acquireJSON }](t, lines[0]).Acquire
	release := decode[struct{ Release releaseJSON }](t, lines[1]).Release
	want := fmt.Sprintf("%s %d %s", acquire.Owner.Generation, acquire.Owner.Epoch, dir)
	if string(data) != want || release.Result != "released" {
		t.Fatalf("child saw %q, want %q; release %+v", data, want, release)
	}
	if acquire.Owner.PID == os.Getpid() {
		t.Fatal("run recorded its caller as the owner; it must record itself")
	}
}

// TestRunWait: without a wait a held lease is refused at once (flock -n);
// with --wait the run waits for the holder's release, within its bound.
func TestRunWait(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	holder := decode[acquireJSON](t, run(t, "acquire", "--dir", dir).stdout)
	started := time.Now()
	if got := run(t, "run", "--wait", "300ms", "--dir", dir, "--", "true"); got.code != exitConflict {
		t.Fatalf("run --wait 300ms against a holder: exit %d", got.code)
	}
	if waited := time.Since(started); waited < 250*time.Millisecond {
		t.Fatalf("run --wait 300ms gave up after %v", waited)
	}
	done := make(chan result, 1)
	go func() { done <- run(t, "run", "--wait", "10s", "--json", "--dir", dir, "--", "true") }()
	time.Sleep(200 * time.Millisecond)
	if got := run(t, "release", "--dir", dir, "--generation", holder.Owner.Generation); got.code != exitOK {
		t.Fatalf("release: exit %d", got.code)
	}
	got := <-done
	if got.code != 0 {
		t.Fatalf("run --wait 10s after the release: exit %d: %s", got.code, got.stderr)
	}
	// The wait is the library's AcquireWait: one acquire line, its last
	// attempt's (the held attempts before it print nothing).
	var acquires []acquireJSON
	for _, line := range strings.Split(strings.TrimSpace(got.stderr), "\n") {
		if strings.HasPrefix(line, `{"acquire":`) {
			acquires = append(acquires, decode[map[string]acquireJSON](t, line)["acquire"])
		}
	}
	if len(acquires) != 1 || acquires[0].Result != "acquired" {
		t.Fatalf("run --wait --json printed %d acquire lines (want 1, acquired): %s", len(acquires), got.stderr)
	}
}

// TestFlockDropIn runs testdata/flock_dropin.sh: `leasereal run -n` where a
// script would use `flock -n`, including a crashed holder.
func TestFlockDropIn(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("testdata", "flock_dropin.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, binary, t.TempDir())
	output, err := cmd.CombinedOutput()
	t.Logf("%s", output)
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(output)), "PASS") {
		t.Fatalf("flock_dropin.sh: %v", err)
	}
}

// TestBinaryCountsTowardCoverage: under `go test -cover` every leasereal
// run writes its counters into the test binary's coverage directory (so
// the report merges them, coverBuildFlags); without -cover the binary is a
// plain build and nothing is written.
func TestBinaryCountsTowardCoverage(t *testing.T) {
	coverDir := os.Getenv("GOCOVERDIR")
	if testing.CoverMode() == "" {
		if coverDir != "" {
			t.Fatalf("GOCOVERDIR=%s without -cover", coverDir)
		}
		if got := run(t, "help"); got.code != 0 || got.stderr != "" {
			t.Fatalf("a plain build: exit %d, stderr %q", got.code, got.stderr)
		}
		return
	}
	counters := func() int {
		matches, err := filepath.Glob(filepath.Join(coverDir, "covcounters.*"))
		if err != nil {
			t.Fatal(err)
		}
		return len(matches)
	}
	before := counters()
	if got := run(t, "help"); got.code != 0 {
		t.Fatalf("help: exit %d %s", got.code, got.stderr)
	}
	if after := counters(); after != before+1 {
		t.Fatalf("GOCOVERDIR %s: %d counter files before a run, %d after; want one more", coverDir, before, after)
	}
}
