package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/longtest"
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

// TestShortChildrenExitZero: a child that exits before its identity is
// recorded (`true`) ran and exited 0, so `run` exits 0 and leaves nothing
// behind. Before the fix, the failed capture of the exited child (a zombie)
// made about one run in three exit 4.
// TestDirleaseRunRefusesABadRecoverAfter: a launching window the engine
// cannot record is a usage error naming the flag, before anything is
// claimed (the engine's own refusal says only that the request is invalid).
func TestDirleaseRunRefusesABadRecoverAfter(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	for _, value := range []string{"-1s", "8784h0m1s"} {
		got := run(t, "dirlease", "run", "--state-home", home, "--path", work, "--recover-after", value, "--", "true")
		if got.code != exitUsage || !strings.Contains(got.stderr, "invalid --recover-after "+value) {
			t.Fatalf("--recover-after %s: exit %d; %s", value, got.code, got.stderr)
		}
	}
	if entries, err := os.ReadDir(home); err != nil || len(entries) != 0 {
		t.Fatalf("the state home holds %v (%v): a refused run wrote state", entries, err)
	}
}

// TestUnusableLeaseSettingsAreAUsageError: a --dir or --root-id the lease
// engine refuses as a config (lease.ConfigError) is bad input: exit 2 with
// the engine's reason, before anything is made.
func TestUnusableLeaseSettingsAreAUsageError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lease")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "--dir", "/"}, "namespace must not be the root directory"},
		{[]string{"run", "-n", "/", "true"}, "namespace must not be the root directory"},
		{[]string{"acquire", "--dir", dir, "--root-id", strings.Repeat("r", 1025)}, "over the 1024-byte bound"},
	}
	for _, c := range cases {
		got := run(t, c.args...)
		if got.code != exitUsage || !strings.Contains(got.stderr, c.want) {
			t.Fatalf("%v: exit %d; %s", c.args, got.code, got.stderr)
		}
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused acquire made %s (%v)", dir, err)
	}
}

func TestShortChildrenExitZero(t *testing.T) {
	base := t.TempDir()
	home := privateDir(t, base, "home")
	work := privateDir(t, base, "work")
	runs := longtest.Pick(40, 12)
	for i := range runs {
		if got := run(t, "dirlease", "run", "--state-home", home, "--path", work, "--", "true"); got.code != 0 {
			t.Fatalf("dirlease run %d: exit %d; %s", i, got.code, got.stderr)
		}
		if got := run(t, "admission", "run", "--state-home", home, "--", "true"); got.code != 0 {
			t.Fatalf("admission run %d: exit %d; %s", i, got.code, got.stderr)
		}
	}
	if got := run(t, "dirlease", "recover", "--state-home", home); !strings.Contains(got.stdout, `"indeterminate": 0`) ||
		!strings.Contains(got.stdout, `"recovered": 0`) {
		t.Fatalf("claims left behind: %s", got.stdout)
	}
	if got := run(t, "admission", "inspect", "--state-home", home); !strings.Contains(got.stdout, `"present": false`) {
		t.Fatalf("admission left behind: %s", got.stdout)
	}
}

// TestAdmissionQuarantineResolvesAKilledRun: after kill -9 of `admission
// run` the slot is indeterminate (its helper may have left descendants)
// and refused until reboot; inspect says so and names the operator
// command; quarantine without the confirmation or with a stale one moves
// nothing; with it, the file moves (byte for byte) into quarantine/ and
// the slot is free.
func TestAdmissionQuarantineResolvesAKilledRun(t *testing.T) {
	home := privateDir(t, t.TempDir(), "home")
	holder := exec.Command(binary, "admission", "run", "--state-home", home, "--", "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the helper-active admission", func() bool {
		return strings.Contains(run(t, "admission", "inspect", "--state-home", home).stdout, `"phase": "helper-active"`)
	})
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	type stateJSON struct {
		surfaceJSON
		Present       bool            `json:"present"`
		Path          string          `json:"path"`
		ContentSHA256 string          `json:"contentSHA256"`
		Disposition   string          `json:"disposition"`
		Phase         string          `json:"phase"`
		Claim         json.RawMessage `json:"claim"`
		Operator      string          `json:"operator"`
		Problem       string          `json:"problem"`
	}
	var state stateJSON
	waitFor(t, "the helper's death (PR_SET_PDEATHSIG)", func() bool {
		state = decode[stateJSON](t, run(t, "admission", "inspect", "--state-home", home).stdout)
		return state.Disposition == "indeterminate"
	})
	if !state.OperatorNeeded || !strings.Contains(state.Operator, "leasereal admission quarantine --state-home "+home+" --sha256 "+state.ContentSHA256) {
		t.Fatalf("inspect does not name the operator command: %+v", state)
	}
	evidence, err := os.ReadFile(state.Path)
	if err != nil {
		t.Fatal(err)
	}
	refused := run(t, "admission", "run", "--state-home", home, "--", "true")
	if refused.code != exitRefused || !strings.HasPrefix(refused.stderr, "leasereal: leasekit recovery: prior export owner cannot be inspected safely") {
		t.Fatalf("run on the wedged slot: exit %d, %s", refused.code, refused.stderr)
	}
	if got := run(t, "admission", "quarantine", "--state-home", home); got.code != exitRefused || !strings.Contains(got.stdout, `"dry-run"`) {
		t.Fatalf("quarantine without --sha256: exit %d, %s", got.code, got.stdout)
	}
	stale := strings.Repeat("0", 64)
	if got := run(t, "admission", "quarantine", "--state-home", home, "--sha256", stale); got.code != exitConflict {
		t.Fatalf("quarantine with a stale --sha256: exit %d, %s %s", got.code, got.stdout, got.stderr)
	}
	if _, err := os.Stat(state.Path); err != nil {
		t.Fatalf("a refused quarantine moved the admission: %v", err)
	}
	got := run(t, "admission", "quarantine", "--state-home", home, "--sha256", state.ContentSHA256)
	moved := decode[struct {
		Result         string    `json:"result"`
		QuarantinePath string    `json:"quarantinePath"`
		State          stateJSON `json:"state"`
	}](t, got.stdout)
	if got.code != 0 || moved.Result != "quarantined" || filepath.Dir(moved.QuarantinePath) != filepath.Join(filepath.Dir(state.Path), "quarantine") {
		t.Fatalf("quarantine: exit %d, %s %s", got.code, got.stdout, got.stderr)
	}
	if kept, err := os.ReadFile(moved.QuarantinePath); err != nil || string(kept) != string(evidence) {
		t.Fatalf("the quarantined evidence is not the admission as judged: %v", err)
	}
	if got := run(t, "admission", "run", "--state-home", home, "--", "true"); got.code != 0 {
		t.Fatalf("run after the quarantine: exit %d, %s", got.code, got.stderr)
	}
}

// TestDirleaseQuarantineUnwedgesRecovery: a corrupt claim file stops every
// `dirlease recover`; inspect names it, its token and the operator
// command; quarantine moves it (byte for byte) and recovery runs again.
func TestDirleaseQuarantineUnwedgesRecovery(t *testing.T) {
	base := t.TempDir()
	home := privateDir(t, base, "home")
	work := privateDir(t, base, "work")
	if got := run(t, "dirlease", "run", "--state-home", home, "--path", work, "--", "true"); got.code != 0 {
		t.Fatalf("run: exit %d, %s", got.code, got.stderr)
	}
	claims := filepath.Join(home, "recovery", "beeper-message-like-me-directory-leases")
	name := "00000000-0000-4000-8000-000000000001.json"
	if err := os.WriteFile(filepath.Join(claims, name), []byte("{corrupt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := run(t, "dirlease", "recover", "--state-home", home); got.code != exitRefused {
		t.Fatalf("recover over a corrupt claim: exit %d, %s %s", got.code, got.stdout, got.stderr)
	}
	type claimJSON struct {
		Name           string `json:"name"`
		ContentSHA256  string `json:"contentSHA256"`
		Disposition    string `json:"disposition"`
		OperatorNeeded bool   `json:"operatorNeeded"`
		Operator       string `json:"operator"`
		Problem        string `json:"problem"`
		Path           string `json:"path"`
	}
	inspected := decode[struct {
		surfaceJSON
		Claims []claimJSON `json:"claims"`
	}](t, run(t, "dirlease", "inspect", "--state-home", home).stdout)
	if len(inspected.Claims) != 1 || inspected.Claims[0].Disposition != "corrupt" || !inspected.Claims[0].OperatorNeeded ||
		!strings.Contains(inspected.Claims[0].Operator, "--claim "+name+" --sha256 "+inspected.Claims[0].ContentSHA256) {
		t.Fatalf("inspect: %+v", inspected)
	}
	// Without --sha256 it is a dry run, as admission quarantine: nothing
	// moves, the confirmation to rerun with is printed, exit 3.
	dry := run(t, "dirlease", "quarantine", "--state-home", home, "--claim", name)
	if dry.code != exitRefused || !strings.Contains(dry.stdout, `"dry-run"`) ||
		!strings.Contains(dry.stdout, "--sha256 "+inspected.Claims[0].ContentSHA256) {
		t.Fatalf("quarantine without --sha256: exit %d, %s %s", dry.code, dry.stdout, dry.stderr)
	}
	if got := run(t, "dirlease", "quarantine", "--state-home", home, "--claim", "no-such-claim.json"); got.code != exitConflict {
		t.Fatalf("dry run of an absent claim: exit %d, %s", got.code, got.stdout)
	}
	got := run(t, "dirlease", "quarantine", "--state-home", home, "--claim", name, "--sha256", inspected.Claims[0].ContentSHA256)
	if got.code != 0 || !strings.Contains(got.stdout, `"quarantined"`) {
		t.Fatalf("quarantine: exit %d, %s %s", got.code, got.stdout, got.stderr)
	}
	kept, err := os.ReadFile(filepath.Join(home, "recovery", "beeper-message-like-me-directory-leases.quarantine",
		mustOneEntry(t, filepath.Join(home, "recovery", "beeper-message-like-me-directory-leases.quarantine"))))
	if err != nil || string(kept) != "{corrupt\n" {
		t.Fatalf("the quarantined claim is not the evidence: %q %v", kept, err)
	}
	if got := run(t, "dirlease", "recover", "--state-home", home); got.code != 0 {
		t.Fatalf("recover after the quarantine: exit %d, %s", got.code, got.stderr)
	}
}

func mustOneEntry(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s: %v %v", dir, entries, err)
	}
	return entries[0].Name()
}

// TestUnsafeStateHomeIsARefusal: a state home that is a symlink is not
// private to this user; admission and dirlease refuse it with exit 3 (an
// operator moves it), as the lease commands refuse an unsafe namespace,
// not exit 4 (an I/O error).
func TestUnsafeStateHomeIsARefusal(t *testing.T) {
	base := t.TempDir()
	real := privateDir(t, base, "real")
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"dirlease", "recover", "--state-home", link},
		{"admission", "run", "--state-home", link, "--", "true"},
	} {
		if got := run(t, args...); got.code != exitRefused {
			t.Errorf("%v: exit %d, want %d (refused); stderr %s", args, got.code, exitRefused, got.stderr)
		}
	}
}

// TestDirleaseNonRegularClaimHasAnOperatorCommand: a symlink planted under
// a claim name stops every recover (exit 3), has no SHA-256 to confirm a
// quarantine with, and inspect still names the command that resolves it;
// run as printed, it unwedges recovery, and the symlink's target is
// untouched.
func TestDirleaseNonRegularClaimHasAnOperatorCommand(t *testing.T) {
	base := t.TempDir()
	home := privateDir(t, base, "home")
	if got := run(t, "dirlease", "recover", "--state-home", home); got.code != 0 {
		t.Fatalf("recover of an empty home: exit %d, %s", got.code, got.stderr)
	}
	target := filepath.Join(base, "target")
	if err := os.WriteFile(target, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	claims := filepath.Join(home, "recovery", "beeper-message-like-me-directory-leases")
	if err := os.Symlink(target, filepath.Join(claims, "planted.json")); err != nil {
		t.Fatal(err)
	}
	if got := run(t, "dirlease", "recover", "--state-home", home); got.code != exitRefused {
		t.Fatalf("recover with a planted symlink: exit %d, want %d", got.code, exitRefused)
	}
	inspected := run(t, "dirlease", "inspect", "--state-home", home)
	_, command, found := strings.Cut(inspected.stdout, "as quarantine would: ")
	command, _, _ = strings.Cut(command, "\"")
	if !found || !strings.Contains(command, "planted.json") {
		t.Fatalf("inspect names no operator command for the planted symlink: %s", inspected.stdout)
	}
	if output, err := exec.Command("sh", "-c", command).CombinedOutput(); err != nil {
		t.Fatalf("the printed command %q: %v %s", command, err, output)
	}
	if got := run(t, "dirlease", "recover", "--state-home", home); got.code != 0 {
		t.Fatalf("recover after the operator command: exit %d, %s", got.code, got.stderr)
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != "keep\n" {
		t.Fatalf("the symlink's target changed: %q %v", data, err)
	}
}
