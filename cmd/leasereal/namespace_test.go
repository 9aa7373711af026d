package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunUnderSymlinkedAncestor: `run -n /var/lock/job.lease` where
// /var/lock -> /run/lock (issue 19, item 1: exit 4, "not a directory", and
// an empty directory left behind). A real symlinked ancestor is built in a
// temp dir; missing directories below it are made; the namespace itself
// must still not be a symlink.
func TestRunUnderSymlinkedAncestor(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "run-lock")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "var-lock")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"job.lease", filepath.Join("new", "deeper", "job.lease")} {
		namespace := filepath.Join(link, name)
		got := run(t, "run", "-n", "--json", namespace, "sh", "-c", `printf %s "$LEASEKIT_NAMESPACE" > "$0"`, filepath.Join(dir, "seen"))
		if got.code != 0 {
			t.Fatalf("run -n %s: exit %d: %s", namespace, got.code, got.stderr)
		}
		seen, err := os.ReadFile(filepath.Join(dir, "seen"))
		if err != nil || string(seen) != filepath.Join(real, name) {
			t.Fatalf("the child saw LEASEKIT_NAMESPACE=%q (%v), want the resolved %s", seen, err, filepath.Join(real, name))
		}
		if info, err := os.Lstat(filepath.Join(real, name)); err != nil || !info.IsDir() {
			t.Fatalf("namespace under the symlink's target: %v %v", info, err)
		}
		if out := decode[inspectJSON](t, run(t, "inspect", "--dir", namespace).stdout); out.State != "empty" || out.Namespace != filepath.Join(real, name) {
			t.Fatalf("inspect through the symlink: %+v", out)
		}
	}
	if err := os.Symlink(filepath.Join(real, "job.lease"), filepath.Join(real, "ns-link")); err != nil {
		t.Fatal(err)
	}
	got := run(t, "run", "-n", filepath.Join(link, "ns-link"), "true")
	if got.code != exitRefused || !strings.Contains(got.stderr, "unsafe-namespace") {
		t.Fatalf("a symlink AT the namespace: exit %d %s, want the engine's unsafe-namespace refusal", got.code, got.stderr)
	}
}

// TestNamespaceIsAFile: a regular file at the namespace path is an operator
// state with exit 3 and a command that resolves it (issue 19, item 5: it
// was exit 4): `reclaim` shows it, `reclaim --force` renames it aside
// (nothing deleted), and the next run works.
func TestNamespaceIsAFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "job.lease")
	if err := os.WriteFile(dir, []byte("evidence"), 0o600); err != nil {
		t.Fatal(err)
	}
	acquired := run(t, "acquire", "--dir", dir)
	out := decode[acquireJSON](t, acquired.stdout)
	if acquired.code != exitRefused || out.Refusal == nil || out.Refusal.Reason != "namespace-not-directory" ||
		out.Refusal.Human == "" || !strings.Contains(out.Refusal.Diagnostic, "leasereal reclaim --dir "+dir) {
		t.Fatalf("acquire: exit %d %+v", acquired.code, out)
	}
	for _, args := range [][]string{{"run", "-n", dir, "true"}, {"release", "--dir", dir, "--generation", "g"}} {
		if got := run(t, args...); got.code != exitRefused || !strings.Contains(got.stdout+got.stderr, "leasereal reclaim --dir") {
			t.Fatalf("%v: exit %d %s%s", args, got.code, got.stdout, got.stderr)
		}
	}
	inspected := run(t, "inspect", "--dir", dir)
	if out := decode[inspectJSON](t, inspected.stdout); inspected.code != exitRefused || out.State != "refused" || out.Refusal.Reason != "namespace-not-directory" {
		t.Fatalf("inspect: exit %d %+v", inspected.code, out)
	}
	dry := run(t, "reclaim", "--dir", dir)
	if out := decode[reclaimOutputJSON](t, dry.stdout); dry.code != exitRefused || out.Result != "dry-run" || out.Namespace != dir || out.Evidence.Ino == 0 {
		t.Fatalf("reclaim dry run: exit %d %+v", dry.code, out)
	}
	forced := run(t, "reclaim", "--dir", dir, "--force")
	moved := decode[reclaimOutputJSON](t, forced.stdout)
	if forced.code != exitOK || moved.Result != "reclaimed" || !strings.HasPrefix(moved.QuarantinePath, dir+".not-a-directory.") {
		t.Fatalf("reclaim --force: exit %d %+v %s", forced.code, moved, forced.stderr)
	}
	if data, err := os.ReadFile(moved.QuarantinePath); err != nil || string(data) != "evidence" {
		t.Fatalf("the file moved aside: %q %v", data, err)
	}
	if got := run(t, "run", "-n", dir, "true"); got.code != 0 {
		t.Fatalf("run after the reclaim: exit %d %s", got.code, got.stderr)
	}
}

// TestInspectRefusalIsJSONAndExit3: inspect refuses an unsafe namespace as
// run does, with exit 3 and JSON (issue 19, item 5: exit 4, plain text).
func TestInspectRefusalIsJSONAndExit3(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	if got := run(t, "run", "-n", dir, "true"); got.code != 0 {
		t.Fatalf("run: exit %d %s", got.code, got.stderr)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	ran := run(t, "run", "-n", dir, "true")
	inspected := run(t, "inspect", "--dir", dir)
	out := decode[inspectJSON](t, inspected.stdout)
	if ran.code != exitRefused || inspected.code != ran.code || out.State != "refused" || out.Namespace != dir ||
		out.Refusal == nil || out.Refusal.Reason != "unsafe-namespace" || out.Refusal.Human != "unsafe-namespace" {
		t.Fatalf("run exit %d; inspect exit %d %+v", ran.code, inspected.code, out)
	}
	reclaimed := run(t, "reclaim", "--dir", dir)
	if out := decode[reclaimOutputJSON](t, reclaimed.stdout); reclaimed.code != exitRefused || out.Result != "refused" || out.Evidence.Projection.Namespace != dir {
		t.Fatalf("reclaim of an unsafe namespace: exit %d %+v", reclaimed.code, out)
	}
}

// TestReclaimEvidenceNamesTheNamespace: the evidence's projection carries
// the namespace (issue 19, item 5: it was "").
func TestReclaimEvidenceNamesTheNamespace(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "receiver.lock"), 0o700); err != nil {
		t.Fatal(err)
	}
	got := run(t, "reclaim", "--dir", dir)
	out := decode[reclaimOutputJSON](t, got.stdout)
	if got.code != exitRefused || out.Result != "dry-run" || out.Namespace != dir || out.Evidence.Projection.Namespace != dir {
		t.Fatalf("reclaim: exit %d %+v", got.code, out)
	}
}
