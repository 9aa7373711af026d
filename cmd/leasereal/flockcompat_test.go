package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/longtest"
)

// TestFlockCompat runs scripts/flockcompat.sh: flock(1) and `leasereal run`
// side by side on the same command lines, each case's exit codes checked
// against the expected pair by the script, and every row it prints must be
// in docs/LEASEREAL.md's table, so the document says what both tools do.
// flock(1) and setsid(1) come with util-linux, which every Linux CI image
// here has; their absence fails the test rather than skipping it.
func TestFlockCompat(t *testing.T) {
	longtest.Require(t, "flock(1) and leasereal run side by side over scripts/flockcompat.sh")
	for _, tool := range []string{"flock", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s(1) is needed (apt-get install util-linux): %v", tool, err)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "flockcompat.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, binary, t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	output, err := cmd.Output()
	t.Logf("%s%s", output, stderr.String())
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(output)), "PASS") {
		t.Fatalf("flockcompat.sh: %v", err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "LEASEREAL.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(output), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		rows++
		if !strings.Contains(string(doc), "\n"+line+"\n") {
			t.Errorf("docs/LEASEREAL.md lacks the row the script printed:\n%s", line)
		}
	}
	if rows < 10 {
		t.Fatalf("the script printed %d table lines", rows)
	}
}
