package workkit

import "testing"

// TestCommandFlag: an operator reads the value after a flag in the
// command leasereal printed, inside a sentence or alone, and nothing for
// a flag the command lacks or ends with.
func TestCommandFlag(t *testing.T) {
	const printed = "recovery will not resolve this claim: once its owner and child are known gone, run: " +
		"leasereal dirlease quarantine --state-home /h --claim c.json --sha256 ab12 (the leased directory is left to you)"
	for _, tc := range []struct {
		command, flag, want string
	}{
		{printed, "--state-home", "/h"},
		{printed, "--claim", "c.json"},
		{printed, "--sha256", "ab12"},
		{"leasereal admission quarantine --state-home /h --sha256 ff", "--sha256", "ff"},
		{"leasereal dirlease recover --state-home /h", "--sha256", ""},
		{"leasereal admission quarantine --sha256", "--sha256", ""},
	} {
		if got := CommandFlag(tc.command, tc.flag); got != tc.want {
			t.Errorf("CommandFlag(%q, %q) = %q, want %q", tc.command, tc.flag, got, tc.want)
		}
	}
}
