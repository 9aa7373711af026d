package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/dirlease"
)

// surfaceCase is one state home built on the real OS, inspected through
// the built binary, and run against.
type surfaceCase struct {
	name    string
	build   func(t *testing.T) (inspect, run []string)
	verdict verdict
	runCode int // what run (or acquire) exits with on the same state
}

// TestInspectSurfaceIsOneDesign is issue 29's item 8 through the binary:
// the three engines' inspect commands print the same envelope (engine,
// verdict, operatorNeeded, operators), exit 3 exactly when run refuses
// with 3 (an operator must act, or the state cannot be read), and name a
// command for every state that asks for an operator. Before, admission
// and dirlease inspect exited 0 and printed nothing on a state home run
// refused with 3, and refusals said operatorNeeded false.
func TestInspectSurfaceIsOneDesign(t *testing.T) {
	for _, tc := range surfaceCases() {
		t.Run(tc.name, func(t *testing.T) {
			inspectArgs, runArgs := tc.build(t)
			inspected := run(t, inspectArgs...)
			envelope := decode[surfaceJSON](t, envelopeOf(t, inspected.stdout))
			if envelope.Verdict != tc.verdict || inspected.code != tc.verdict.exitCode() {
				t.Fatalf("inspect: verdict %q exit %d, want %q exit %d\n%s%s", envelope.Verdict, inspected.code,
					tc.verdict, tc.verdict.exitCode(), inspected.stdout, inspected.stderr)
			}
			wantOperator := tc.verdict == verdictOperator
			if envelope.OperatorNeeded != (len(envelope.Operators) > 0) || (wantOperator && !envelope.OperatorNeeded) {
				t.Fatalf("inspect: operatorNeeded %v with %d commands\n%s", envelope.OperatorNeeded, len(envelope.Operators), inspected.stdout)
			}
			for _, operator := range envelope.Operators {
				if operator.Path == "" || operator.Why == "" || operator.Command == "" {
					t.Fatalf("inspect: an operator entry without path, why or command: %+v", operator)
				}
			}
			ran := run(t, runArgs...)
			if ran.code != tc.runCode || (ran.code == exitRefused) != (inspected.code == exitRefused) {
				t.Fatalf("run: exit %d, want %d, inspect exit %d\n%s", ran.code, tc.runCode, inspected.code, ran.stderr)
			}
		})
	}
}

// envelopeOf keeps only the envelope's keys of an inspect output, so
// the strict decoder checks the envelope and not each engine's own fields.
func envelopeOf(t *testing.T, text string) string {
	t.Helper()
	full := decode[map[string]any](t, text)
	envelope := map[string]any{}
	for _, key := range []string{"engine", "verdict", "operatorNeeded", "operators"} {
		value, ok := full[key]
		if !ok {
			t.Fatalf("inspect output has no %q: %s", key, text)
		}
		envelope[key] = value
	}
	encoded, err := json.Marshal(envelope)
	if err != nil {
		t.Fatal(err)
	}
	return string(encoded)
}

func surfaceCases() []surfaceCase {
	return []surfaceCase{
		{"lease/free", func(t *testing.T) ([]string, []string) {
			dir := filepath.Join(t.TempDir(), "ns")
			return []string{"inspect", "--dir", dir}, []string{"run", "-n", dir, "true"}
		}, verdictFree, exitOK},
		{"lease/held", func(t *testing.T) ([]string, []string) {
			dir := filepath.Join(t.TempDir(), "ns")
			mustRun(t, exitOK, "acquire", "--dir", dir) // held by this test process, alive
			return []string{"inspect", "--dir", dir}, []string{"run", "-n", dir, "true"}
		}, verdictHeld, exitConflict},
		{"lease/operator-needed", func(t *testing.T) ([]string, []string) {
			dir := filepath.Join(t.TempDir(), "ns")
			mustRun(t, exitOK, "run", dir, "true")
			writeFile(t, filepath.Join(dir, "receiver.lifecycle.guard.json"), "{\"schemaVersion\":1,\"gener")
			return []string{"inspect", "--dir", dir}, []string{"run", "-n", dir, "true"}
		}, verdictOperator, exitRefused},
		{"lease/refused-unsafe", func(t *testing.T) ([]string, []string) {
			dir := filepath.Join(t.TempDir(), "ns")
			mustRun(t, exitOK, "run", dir, "true")
			chmod(t, dir, 0o777)
			return []string{"inspect", "--dir", dir}, []string{"run", "-n", dir, "true"}
		}, verdictRefused, exitRefused},
		{"admission/free", func(t *testing.T) ([]string, []string) {
			home := privateDir(t, t.TempDir(), "home")
			return []string{"admission", "inspect", "--state-home", home}, []string{"admission", "run", "--state-home", home, "--", "true"}
		}, verdictFree, exitOK},
		{"admission/operator-needed", func(t *testing.T) ([]string, []string) {
			home := privateDir(t, t.TempDir(), "home")
			mustRun(t, exitOK, "admission", "run", "--state-home", home, "--", "true")
			writeFile(t, filepath.Join(append([]string{home}, admission.RootDir...)...)+"/active.json", "{corrupt\n")
			return []string{"admission", "inspect", "--state-home", home}, []string{"admission", "run", "--state-home", home, "--", "true"}
		}, verdictOperator, exitRefused},
		{"admission/refused-unsafe", func(t *testing.T) ([]string, []string) {
			home := privateDir(t, t.TempDir(), "home")
			mustRun(t, exitOK, "admission", "run", "--state-home", home, "--", "true")
			chmod(t, filepath.Join(home, admission.RootDir[0]), 0o777)
			return []string{"admission", "inspect", "--state-home", home}, []string{"admission", "run", "--state-home", home, "--", "true"}
		}, verdictRefused, exitRefused},
		{"dirlease/free", func(t *testing.T) ([]string, []string) {
			base := t.TempDir()
			home, work := privateDir(t, base, "home"), privateDir(t, base, "work")
			mustRun(t, exitOK, "dirlease", "run", "--state-home", home, "--path", work, "--", "true")
			return []string{"dirlease", "inspect", "--state-home", home}, []string{"dirlease", "run", "--state-home", home, "--path", work, "--", "true"}
		}, verdictFree, exitOK},
		{"dirlease/operator-needed", func(t *testing.T) ([]string, []string) {
			base := t.TempDir()
			home, work := privateDir(t, base, "home"), privateDir(t, base, "work")
			mustRun(t, exitOK, "dirlease", "run", "--state-home", home, "--path", work, "--", "true")
			claims := filepath.Join(append([]string{home}, dirlease.RootDir...)...)
			writeFile(t, filepath.Join(claims, "00000000-0000-4000-8000-000000000001.json"), "{corrupt\n")
			return []string{"dirlease", "inspect", "--state-home", home}, []string{"dirlease", "run", "--state-home", home, "--path", work, "--", "true"}
		}, verdictOperator, exitRefused},
		{"dirlease/refused-unsafe", func(t *testing.T) ([]string, []string) {
			base := t.TempDir()
			home, work := privateDir(t, base, "home"), privateDir(t, base, "work")
			mustRun(t, exitOK, "dirlease", "run", "--state-home", home, "--path", work, "--", "true")
			chmod(t, filepath.Join(append([]string{home}, dirlease.RootDir...)...), 0o755)
			return []string{"dirlease", "inspect", "--state-home", home}, []string{"dirlease", "run", "--state-home", home, "--path", work, "--", "true"}
		}, verdictRefused, exitRefused},
		{"dirlease/refused-group-writable-home", func(t *testing.T) ([]string, []string) {
			base := t.TempDir()
			home, work := privateDir(t, base, "home"), privateDir(t, base, "work")
			chmod(t, home, 0o775) // before anything is made in it: inspect said free
			return []string{"dirlease", "inspect", "--state-home", home}, []string{"dirlease", "run", "--state-home", home, "--path", work, "--", "true"}
		}, verdictRefused, exitRefused},
		{"dirlease/refused-unsafe-recovery-dir", func(t *testing.T) ([]string, []string) {
			base := t.TempDir()
			home, work := privateDir(t, base, "home"), privateDir(t, base, "work")
			mustRun(t, exitOK, "dirlease", "run", "--state-home", home, "--path", work, "--", "true")
			chmod(t, filepath.Join(home, dirlease.RootDir[0]), 0o770) // inspect read the claims below it
			return []string{"dirlease", "inspect", "--state-home", home}, []string{"dirlease", "run", "--state-home", home, "--path", work, "--", "true"}
		}, verdictRefused, exitRefused},
	}
}

// TestVerdictsOfEveryState: the verdicts of the states the binary test
// cannot build on demand (a live holder of admission or dirlease, an
// admission whose helper still runs, a launching window time resolves),
// and that a state home's verdict is its worst claim's.
func TestVerdictsOfEveryState(t *testing.T) {
	claim := func(d dirlease.Disposition, operator bool) dirlease.ClaimState {
		return dirlease.ClaimState{Disposition: d, OperatorNeeded: operator, ContentSHA256: "x", Path: "/h/c.json"}
	}
	for _, tc := range []struct {
		name   string
		got    verdict
		wanted verdict
	}{
		{"admission absent", admissionVerdict(admission.State{}), verdictFree},
		{"admission active", admissionVerdict(admission.State{Present: true, Disposition: admission.DispositionActive}), verdictHeld},
		{"admission recoverable", admissionVerdict(admission.State{Present: true, Disposition: admission.DispositionRecoverable}), verdictFree},
		{"admission helper runs", admissionVerdict(admission.State{Present: true, Disposition: admission.DispositionIndeterminate,
			Waiting: "its helper still runs"}), verdictWaiting},
		{"admission indeterminate", admissionVerdict(admission.State{Present: true, Disposition: admission.DispositionIndeterminate,
			OperatorNeeded: true}), verdictOperator},
		{"dirlease empty", dirleaseVerdict(nil), verdictFree},
		{"dirlease recoverable", dirleaseVerdict([]dirlease.ClaimState{claim(dirlease.DispositionRecoverable, false)}), verdictFree},
		{"dirlease active", dirleaseVerdict([]dirlease.ClaimState{claim(dirlease.DispositionRecoverable, false),
			claim(dirlease.DispositionActive, false)}), verdictHeld},
		{"dirlease launching window", dirleaseVerdict([]dirlease.ClaimState{claim(dirlease.DispositionActive, false),
			claim(dirlease.DispositionIndeterminate, false)}), verdictWaiting},
		{"dirlease worst claim", dirleaseVerdict([]dirlease.ClaimState{claim(dirlease.DispositionIndeterminate, true),
			claim(dirlease.DispositionIndeterminate, false), claim(dirlease.DispositionActive, false)}), verdictOperator},
	} {
		if tc.got != tc.wanted {
			t.Errorf("%s: verdict %q, want %q", tc.name, tc.got, tc.wanted)
		}
	}
	waiting := admission.State{Present: true, Disposition: admission.DispositionIndeterminate, Waiting: "its helper still runs"}
	if code := admissionInspectCode(waiting); code != exitRefused {
		t.Errorf("admission inspect of a record waiting for its helper exits %d, want %d: admission run refuses it", code, exitRefused)
	}
	if code := admissionInspectCode(admission.State{Present: true, Disposition: admission.DispositionActive}); code != exitOK {
		t.Errorf("admission inspect of an active record exits %d, want 0", code)
	}
}

func dirleaseVerdict(states []dirlease.ClaimState) verdict {
	_, v := dirleaseInspection(states, "/h", "/h")
	return v
}

func mustRun(t *testing.T, code int, args ...string) {
	t.Helper()
	if got := run(t, args...); got.code != code {
		t.Fatalf("%v: exit %d, want %d\n%s%s", args, got.code, code, got.stdout, got.stderr)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
