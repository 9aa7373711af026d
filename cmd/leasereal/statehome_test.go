package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingStateHomeIsARefusal: every admission and dirlease command on
// a state home that does not exist refuses (exit 3, not an I/O error's
// 4), says that the home is missing and how to create it (private, mode
// 0700), and creates nothing; inspect prints the refused verdict with the
// mkdir as its operator command.
func TestMissingStateHomeIsARefusal(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "missing")
	work := privateDir(t, privateDir(t, base, "parent"), "work")
	for _, args := range [][]string{
		{"admission", "inspect", "--state-home", home},
		{"admission", "run", "--state-home", home, "--", "true"},
		{"admission", "quarantine", "--state-home", home},
		{"dirlease", "inspect", "--state-home", home},
		{"dirlease", "recover", "--state-home", home},
		{"dirlease", "quarantine", "--state-home", home, "--claim", "c.json"},
		{"dirlease", "run", "--state-home", home, "--path", work, "--", "true"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			got := run(t, args...)
			if got.code != exitRefused || !strings.Contains(got.stderr, "state home "+home+" does not exist") ||
				!strings.Contains(got.stderr, "mode 0700") {
				t.Fatalf("exit %d, want %d with the missing home's refusal\n%s%s", got.code, exitRefused, got.stdout, got.stderr)
			}
			if args[1] != "inspect" {
				return
			}
			var out struct {
				Verdict   verdict        `json:"verdict"`
				Operators []operatorJSON `json:"operators"`
			}
			if err := json.Unmarshal([]byte(got.stdout), &out); err != nil {
				t.Fatalf("inspect output: %v\n%s", err, got.stdout)
			}
			if out.Verdict != verdictRefused || len(out.Operators) != 1 || !strings.HasPrefix(out.Operators[0].Command, "mkdir -m 700 "+home) {
				t.Fatalf("inspect: %s", got.stdout)
			}
		})
	}
	if matches, _ := filepath.Glob(home + "*"); len(matches) != 0 {
		t.Fatalf("a refused command created %v", matches)
	}
}
