package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForcedReclaim: the operator action moves a corrupt receiver.lock
// into quarantine only with --force, prints the evidence, never deletes,
// and refuses a live owner.
func TestForcedReclaim(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "receiver.lock"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "receiver.lock", "owner.json"), []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	dry := run(t, "reclaim", "--dir", dir)
	out := decode[reclaimOutputJSON](t, dry.stdout)
	if dry.code != exitRefused || out.Result != "dry-run" || out.Evidence.OwnerBytes != "{torn" ||
		out.Evidence.Projection.State != "corrupt" {
		t.Fatalf("dry run: exit %d %+v", dry.code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "receiver.lock", "owner.json")); err != nil {
		t.Fatalf("the dry run moved something: %v", err)
	}
	forced := run(t, "reclaim", "--dir", dir, "--force")
	out = decode[reclaimOutputJSON](t, forced.stdout)
	if forced.code != exitOK || out.Result != "reclaimed" || !strings.Contains(out.QuarantinePath, "/quarantine/receiver.forced.corrupt.") {
		t.Fatalf("forced: exit %d %+v %s", forced.code, out, forced.stderr)
	}
	if data, err := os.ReadFile(filepath.Join(out.QuarantinePath, "owner.json")); err != nil || string(data) != "{torn" {
		t.Fatalf("the evidence is not in quarantine: %q %v", data, err)
	}
	held := decode[acquireJSON](t, run(t, "acquire", "--dir", dir).stdout)
	if held.Result != "acquired" {
		t.Fatalf("acquire after the forced reclaim: %+v", held)
	}
	live := run(t, "reclaim", "--dir", dir, "--force", "--generation", held.Owner.Generation)
	if out := decode[reclaimOutputJSON](t, live.stdout); live.code != exitRefused || out.Result != "refused" ||
		!strings.Contains(out.Why, "alive") {
		t.Fatalf("forced reclaim of a live owner: exit %d %+v", live.code, out)
	}
	unconfirmed := run(t, "reclaim", "--dir", dir, "--force")
	if out := decode[reclaimOutputJSON](t, unconfirmed.stdout); unconfirmed.code != exitRefused ||
		!strings.Contains(out.Why, "--generation") {
		t.Fatalf("forced reclaim without the generation: exit %d %+v", unconfirmed.code, out)
	}
}
