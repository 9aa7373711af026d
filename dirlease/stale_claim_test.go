package dirlease

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestRecoverNeverActsOnAStaleClaimCopy is the dirlease campaign's finding
// (testdata/seeds/dirlease/violation-c1e627e3ddbb702d.seed, seeds 1369 and
// 1763), on the real OS: recovery reads a claim while it is launching; the
// owner then changes it and exits; recovery finds the owner dead and the
// launch window passed. Judged from its old copy the claim is recoverable;
// recovery must instead judge what the claim file holds now. Before the
// fix, the running case removed the directory of a live child.
func TestRecoverNeverActsOnAStaleClaimCopy(t *testing.T) {
	type outcome struct {
		report     Report
		dirRemains bool
		claimGone  bool
	}
	cases := []struct {
		name string
		// owner is what the owner does after recovery read its claim.
		owner func(w *world, l *Lease)
		want  outcome
	}{
		{"updated to running with a live child", func(w *world, l *Lease) {
			w.inspector.SetLive(leasetest.IdentityOf(childPID, w.uid, "900"))
			must(w.t, l.Update(ctx, PhaseRunning, childPID))
		}, outcome{Report{Active: 1}, true, false}},
		{"updated to running, then settled", func(w *world, l *Lease) {
			w.inspector.SetLive(leasetest.IdentityOf(childPID, w.uid, "900"))
			must(w.t, l.Update(ctx, PhaseRunning, childPID))
			must(w.t, l.Update(ctx, PhaseSettled, 0))
		}, outcome{Report{Recovered: 1}, false, true}},
		{"released, keeping its directory", func(w *world, l *Lease) {
			must(w.t, l.Release(ctx))
		}, outcome{Report{}, true, true}},
		{"unchanged", func(w *world, l *Lease) {}, outcome{Report{Recovered: 1}, false, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l := w.raw("raw")
			must(t, l.Update(ctx, PhaseLaunching, 0))
			w.clock.Advance((windowMs + 1) * time.Millisecond)
			config := w.recoverer()
			ran := false
			// The owner's step runs once, on recovery's first Inspect of the
			// owner: between its read of the claims and its judgment of one.
			w.inspector.OnInspect(func(pid int) {
				if pid == ownerPID && !ran {
					ran = true
					tc.owner(w, l)
					w.inspector.Kill(ownerPID)
				}
			})
			report, err := Recover(ctx, config)
			if !ran {
				t.Fatal("the owner's step never ran")
			}
			got := outcome{report, exists(t, l.Claim().Path), !exists(t, l.ClaimPath())}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v (err %v), want %+v", got, err, tc.want)
			}
			if got.dirRemains {
				if content, err := os.ReadFile(filepath.Join(l.Claim().Path, "nested", "data.bin")); err != nil || string(content) != "payload" {
					t.Fatalf("the directory was touched: %q %v", content, err)
				}
			}
			assertNoMachinery(t, w)
		})
	}
}

// TestRecoverRacingRecoverRemovesOnce: a second recovery runs while the
// first one is removing a directory (at its quarantine rename, holding the
// claim file's mutation claim). The second one cannot take the mutation
// claim and fails safely with nothing removed; the first completes; a
// later pass finds nothing left.
func TestRecoverRacingRecoverRemovesOnce(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	w.inspector.Kill(ownerPID)
	var secondErr error
	ran := false
	hooked := leasetest.NewHookFS(w.fs)
	hooked.Before(func(op leasetest.Op) error {
		if op.Name == "RenameNoReplace" && strings.Contains(op.Paths[1], ".leasekit-removing-") && !ran {
			ran = true
			_, secondErr = Recover(ctx, w.controller(2001, "601"))
		}
		return nil
	})
	first := w.recoverer()
	first.FS = hooked
	report, err := Recover(ctx, first)
	if !ran {
		t.Fatal("the second recovery never ran")
	}
	if !errors.Is(secondErr, statecas.ErrMutationActive) {
		t.Fatalf("second recovery: want ErrMutationActive, got %v", secondErr)
	}
	if err != nil || report != (Report{Recovered: 1}) {
		t.Fatalf("first recovery: %+v %v", report, err)
	}
	if exists(t, l.Claim().Path) || exists(t, l.ClaimPath()) {
		t.Fatal("the directory or its claim is left")
	}
	again, err := Recover(ctx, w.controller(2002, "602"))
	if err != nil || again != (Report{}) {
		t.Fatalf("later pass: %+v %v", again, err)
	}
	assertNoMachinery(t, w)
}

// assertNoMachinery fails if a mutation claim, orphan, temp or quarantine
// is left in the claim root or the work directory.
func assertNoMachinery(t *testing.T, w *world) {
	t.Helper()
	for _, dir := range []string{w.root(), w.work} {
		entries, err := os.ReadDir(dir)
		must(t, err)
		for _, entry := range entries {
			if strings.HasPrefix(entry.Name(), ".") {
				t.Fatalf("left behind in %s: %s", dir, entry.Name())
			}
		}
	}
}
