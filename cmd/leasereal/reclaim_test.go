package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/lease"
)

// TestForcedReclaim: the operator action moves a corrupt receiver.lock
// into quarantine only with --force and --holder-may-run (nothing names
// its holder, which may still run: the dry run and the refusal say so and
// how to check), prints the evidence, never deletes, and refuses a live
// owner.
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
		out.Evidence.Projection.State != "corrupt" || !strings.Contains(out.Why, "may still be running") ||
		!strings.Contains(out.Why, "--holder-may-run") {
		t.Fatalf("dry run: exit %d %+v", dry.code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "receiver.lock", "owner.json")); err != nil {
		t.Fatalf("the dry run moved something: %v", err)
	}
	unconfirmedHolder := run(t, "reclaim", "--dir", dir, "--force")
	if out := decode[reclaimOutputJSON](t, unconfirmedHolder.stdout); unconfirmedHolder.code != exitRefused ||
		out.Result != "refused" || !strings.Contains(out.Why, lease.UnidentifiedHolderAdvice) || !strings.Contains(out.Why, "--holder-may-run") {
		t.Fatalf("forced reclaim of an unidentified holder without --holder-may-run: exit %d %+v", unconfirmedHolder.code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "receiver.lock", "owner.json")); err != nil {
		t.Fatalf("the refused reclaim moved something: %v", err)
	}
	forced := run(t, "reclaim", "--dir", dir, "--force", "--holder-may-run")
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

// TestCorruptGuardHasAnOperatorPath is issue 19's item 8 through the
// binary: a corrupt lifecycle guard used to wedge a namespace for good
// (inspect said empty, reclaim --force "nothing to do", every run refused).
// Now run refuses with exit 3 and names the operator command, inspect lists
// the guard as a blocker, reclaim's dry run moves nothing, reclaim --force
// moves the guard into quarantine/ through lease.Manager.ForceReclaim with
// its bytes kept, and the next run succeeds.
func TestCorruptGuardHasAnOperatorPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	if got := run(t, "run", dir, "true"); got.code != exitOK {
		t.Fatalf("first run: exit %d %s", got.code, got.stderr)
	}
	guard := filepath.Join(dir, "receiver.lifecycle.guard.json")
	garbled := []byte("{\"schemaVersion\":1,\"gener")
	if err := os.WriteFile(guard, garbled, 0o600); err != nil {
		t.Fatal(err)
	}
	refused := run(t, "run", dir, "true")
	if refused.code != exitRefused || !strings.Contains(refused.stderr, "leasereal reclaim --dir "+dir) ||
		!strings.Contains(refused.stderr, "leasereal inspect --dir "+dir) {
		t.Fatalf("run over a corrupt guard: exit %d, stderr %q (want 3 and the operator commands)", refused.code, refused.stderr)
	}
	inspected := run(t, "inspect", "--dir", dir)
	view := decode[inspectJSON](t, inspected.stdout)
	if inspected.code != exitRefused || view.Verdict != verdictOperator || !view.OperatorNeeded || len(view.Blockers) != 1 ||
		view.Blockers[0].Kind != "lifecycle-guard" || view.Blockers[0].Path != guard ||
		view.Blockers[0].Human != "corrupt-lifecycle-guard" || !strings.Contains(view.Blockers[0].Operator, "leasereal reclaim --dir "+dir+" --force") {
		t.Fatalf("inspect: exit %d %+v", inspected.code, view)
	}
	dry := run(t, "reclaim", "--dir", dir)
	if out := decode[reclaimOutputJSON](t, dry.stdout); dry.code != exitRefused || out.Result != "dry-run" ||
		len(out.Actions) != 1 || out.Actions[0].Result != "pending" {
		t.Fatalf("reclaim dry run: exit %d %+v", dry.code, out)
	}
	if data, err := os.ReadFile(guard); err != nil || string(data) != string(garbled) {
		t.Fatalf("the dry run touched the guard: %q %v", data, err)
	}
	forced := run(t, "reclaim", "--dir", dir, "--force")
	out := decode[reclaimOutputJSON](t, forced.stdout)
	if forced.code != exitOK || out.Result != "reclaimed" || len(out.Actions) != 1 || out.Actions[0].Result != "moved" ||
		!strings.HasPrefix(out.QuarantinePath, filepath.Join(dir, "quarantine", "lifecycle.forced.corrupt.")) {
		t.Fatalf("reclaim --force: exit %d %+v %s", forced.code, out, forced.stderr)
	}
	if data, err := os.ReadFile(out.QuarantinePath); err != nil || string(data) != string(garbled) {
		t.Fatalf("the guard's bytes are not kept in quarantine: %q %v", data, err)
	}
	if _, err := os.Lstat(guard); !os.IsNotExist(err) {
		t.Fatalf("the corrupt guard is still in place: %v", err)
	}
	if got := run(t, "run", dir, "true"); got.code != exitOK {
		t.Fatalf("run after the reclaim: exit %d %s", got.code, got.stderr)
	}
	if after := decode[inspectJSON](t, run(t, "inspect", "--dir", dir).stdout); after.OperatorNeeded || len(after.Blockers) != 0 {
		t.Fatalf("inspect after the reclaim: %+v", after)
	}
}

// TestReclaimResolvesEveryBlocker: one forced reclaim resolves a corrupt
// guard, a corrupt receiver.lock and a corrupt epoch counter, in that order
// (receiver.lock and the epoch counter are forced under the guard); the
// epoch counter needs --epoch-floor, asked for before anything moves.
func TestReclaimResolvesEveryBlocker(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	if got := run(t, "run", dir, "true"); got.code != exitOK {
		t.Fatalf("first run: exit %d %s", got.code, got.stderr)
	}
	for name, content := range map[string]string{"receiver.lifecycle.guard.json": "{", "receiver.epoch.json": "not json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "receiver.lock"), 0o700); err != nil {
		t.Fatal(err)
	}
	view := decode[inspectJSON](t, run(t, "inspect", "--dir", dir).stdout)
	if len(view.Blockers) != 3 {
		t.Fatalf("inspect: %d blockers, want 3: %+v", len(view.Blockers), view.Blockers)
	}
	unfloored := run(t, "reclaim", "--dir", dir, "--force", "--holder-may-run")
	if out := decode[reclaimOutputJSON](t, unfloored.stdout); unfloored.code != exitRefused || !strings.Contains(out.Why, "--epoch-floor") {
		t.Fatalf("reclaim --force without --epoch-floor: exit %d %+v", unfloored.code, out)
	}
	if _, err := os.Lstat(filepath.Join(dir, "receiver.lifecycle.guard.json")); err != nil {
		t.Fatalf("a refused reclaim moved the guard: %v", err)
	}
	forced := run(t, "reclaim", "--dir", dir, "--force", "--epoch-floor", "7", "--holder-may-run")
	out := decode[reclaimOutputJSON](t, forced.stdout)
	var kinds []string
	for _, action := range out.Actions {
		kinds = append(kinds, action.Kind+"="+action.Result)
	}
	if forced.code != exitOK || strings.Join(kinds, " ") != "lifecycle-guard=moved receiver-lock=moved epoch-counter=moved" ||
		!strings.Contains(out.QuarantinePath, "/quarantine/receiver.forced.corrupt.") {
		t.Fatalf("reclaim --force --epoch-floor 7: exit %d %v %+v %s", forced.code, kinds, out, forced.stderr)
	}
	acquired := decode[acquireJSON](t, run(t, "acquire", "--dir", dir).stdout)
	if acquired.Result != "acquired" || acquired.Owner.Epoch != 8 {
		t.Fatalf("acquire after the reclaim: %+v (want epoch 8, above the floor)", acquired)
	}
}

// TestReclaimRefusesAnEpochFloorBelowTheEvidence (issue 29, item 2): after
// five leases were acquired and released, a torn epoch counter forced with
// --epoch-floor 1 was accepted and the next lease got epoch 2. inspect
// now names the issued mark that proves epoch 5 and the floor to pass; a
// lower floor is refused (exit 3) before anything moves, and the lease
// goes on at epoch 6.
func TestReclaimRefusesAnEpochFloorBelowTheEvidence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ns")
	for i := 0; i < 5; i++ {
		if got := run(t, "run", dir, "true"); got.code != exitOK {
			t.Fatalf("run %d: exit %d %s", i, got.code, got.stderr)
		}
	}
	counter, mark := filepath.Join(dir, "receiver.epoch.json"), filepath.Join(dir, "receiver.epoch.issued.json")
	if err := os.WriteFile(counter, []byte(`{"epoch":5,"sch`), 0o600); err != nil {
		t.Fatal(err)
	}
	view := decode[inspectJSON](t, run(t, "inspect", "--dir", dir).stdout)
	if len(view.Blockers) != 1 || view.Blockers[0].ProvenEpoch != 5 || view.Blockers[0].ProvenBy != mark ||
		!strings.Contains(view.Blockers[0].Operator, "--epoch-floor 5 ") ||
		!strings.Contains(view.Blockers[0].Diagnostic, mark) {
		t.Fatalf("inspect: %+v", view.Blockers)
	}
	low := run(t, "reclaim", "--dir", dir, "--force", "--epoch-floor", "1")
	if out := decode[reclaimOutputJSON](t, low.stdout); low.code != exitRefused || !strings.Contains(out.Why, mark) ||
		!strings.Contains(out.Why, "--epoch-floor 5") {
		t.Fatalf("reclaim --force --epoch-floor 1: exit %d %+v", low.code, out)
	}
	if data, err := os.ReadFile(counter); err != nil || string(data) != `{"epoch":5,"sch` {
		t.Fatalf("a refused reclaim changed the counter: %q %v", data, err)
	}
	forced := run(t, "reclaim", "--dir", dir, "--force", "--epoch-floor", "5")
	if out := decode[reclaimOutputJSON](t, forced.stdout); forced.code != exitOK {
		t.Fatalf("reclaim --force --epoch-floor 5: exit %d %+v %s", forced.code, out, forced.stderr)
	}
	acquired := decode[acquireJSON](t, run(t, "acquire", "--dir", dir).stdout)
	if acquired.Result != "acquired" || acquired.Owner.Epoch != 6 {
		t.Fatalf("acquire after the reclaim: %+v (want epoch 6, above every epoch issued)", acquired)
	}
}
