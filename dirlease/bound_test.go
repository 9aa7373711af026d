package dirlease

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// pileUp leaves created claims of the default owner (up to ClaimsMax,
// through Create) and then older claims written straight to the claim
// directory, as a version without Create's bound left them, n in all. It
// returns the claims in the order they were made.
func (w *world) pileUp(n int) []Claim {
	w.t.Helper()
	var claims []Claim
	for i := 0; i < min(n, ClaimsMax); i++ {
		claims = append(claims, w.raw("created-"+strconv.Itoa(i)).Claim())
	}
	for i := len(claims); i < n; i++ {
		claims = append(claims, w.writeOlderClaim(claims[0], i))
	}
	return claims
}

// writeOlderClaim writes a claim like base, on a fresh directory, under
// an ID that sorts after every created one.
func (w *world) writeOlderClaim(base Claim, i int) Claim {
	w.t.Helper()
	claim := base
	claim.ID = fmt.Sprintf("eeeeeeee-0000-4000-8000-%012d", i)
	claim.Revision = fmt.Sprintf("eeeeeeee-1111-4000-8000-%012d", i)
	claim.Path = w.dir("older-" + strconv.Itoa(i))
	info, err := w.fs.Lstat(claim.Path)
	must(w.t, err)
	identity, ok := info.Identity()
	if !ok {
		w.t.Fatal("no identity")
	}
	claim.DirectoryIdentity = IdentityOf(identity)
	w.writeClaim(claim)
	return claim
}

func (w *world) writeClaim(claim Claim) {
	w.t.Helper()
	must(w.t, os.WriteFile(filepath.Join(w.root(), claim.ID+".json"), claim.Bytes(), 0o600))
}

// TestClaimsPastTheBound: crashed creators' claims pile up to ClaimsMax.
// Create then refuses (ErrFull, naming the state home, the count and the
// command) and writes nothing; Inspect says the directory is full; and
// recovery takes the dead owners' claims past the bound, in batches,
// keeping every claim another live claim holds the directory of. Without
// the fix Create added a 65th claim and every recovery pass failed on the
// reviewed bound (ErrBound) with nothing recovered.
func TestClaimsPastTheBound(t *testing.T) {
	tests := []struct {
		name   string
		claims int
		// liveTwin adds a live owner's claim naming the first claim's
		// directory, sorting after every other claim (another batch).
		liveTwin bool
		// wantFull: Create refuses and Inspect reports the directory full.
		wantFull      bool
		wantRecovered int
		wantActive    int
	}{
		{name: "one below the bound", claims: ClaimsMax - 1, wantRecovered: ClaimsMax - 1},
		{name: "at the bound", claims: ClaimsMax, wantFull: true, wantRecovered: ClaimsMax},
		{name: "past the bound (older claims)", claims: ClaimsMax + 7, wantFull: true, wantRecovered: ClaimsMax + 7},
		{name: "three batches", claims: 2*ClaimsMax + 5, wantFull: true, wantRecovered: 2*ClaimsMax + 5},
		{name: "past the bound, a live claim holds one directory", claims: ClaimsMax + 3, liveTwin: true,
			wantFull: true, wantRecovered: ClaimsMax + 2, wantActive: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			claims := w.pileUp(tc.claims)
			if tc.liveTwin {
				twin := claims[0]
				twin.ID, twin.Revision = "ffffffff-0000-4000-8000-000000000001", "ffffffff-1111-4000-8000-000000000001"
				live := leasetest.IdentityOf(7000, w.uid, "700")
				w.inspector.SetLive(live)
				twin.Owner = statecas.OwnerOf(live)
				w.writeClaim(twin)
			}
			w.inspector.Kill(ownerPID)
			w.checkCreateAtBound(tc.wantFull)
			report, err := Recover(ctx, w.recoverer())
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if report.Recovered != tc.wantRecovered || report.Active != tc.wantActive {
				t.Fatalf("report %+v, want recovered %d, active %d", report, tc.wantRecovered, tc.wantActive)
			}
			for i, claim := range claims {
				held := tc.liveTwin && i == 0
				if exists(t, claim.Path) != held {
					t.Fatalf("claim %d: directory present %v, want %v", i, !held, held)
				}
			}
			w.checkCreateAtBound(false)
		})
	}
}

// checkCreateAtBound creates one more lease and checks that it is refused
// as full, naming the state home, the count and the command, with nothing
// written, when full is set (and that Inspect agrees); else that it
// succeeds.
func (w *world) checkCreateAtBound(full bool) {
	w.t.Helper()
	t := w.t
	states, err := Inspect(ctx, w.recoverer())
	must(t, err)
	if Full(states) != full {
		t.Fatalf("Full(%d states) = %v, want %v", len(states), !full, full)
	}
	path := w.dir("one-more-" + strconv.Itoa(len(states)))
	before := snapshotTree(t, w.home, w.work)
	l, err := Create(ctx, w.controller(ownerPID+1, "501"), CreateRequest{Role: RoleRawWorking, Path: path, RecoverAfterMs: startMs + windowMs})
	if !full {
		must(t, err)
		must(t, l.Release(ctx))
		return
	}
	if !errors.Is(err, ErrFull) {
		t.Fatalf("Create at the bound: want ErrFull, got %v", err)
	}
	for _, want := range []string{w.home, strconv.Itoa(len(states)) + " claims", "leasereal dirlease recover --state-home " + w.home} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("refusal %q does not name %q", err, want)
		}
	}
	if after := snapshotTree(t, w.home, w.work); after != before {
		t.Fatal("a refused Create changed the tree")
	}
}

// TestRecoverOverTheListingBound: more entries than any call reads
// (inspectEntriesMax, put there by other hands) is refused with nothing
// changed, saying how to move entries out and what to run then.
func TestRecoverOverTheListingBound(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	content, err := os.ReadFile(l.ClaimPath())
	must(t, err)
	for i := 0; i < inspectEntriesMax; i++ {
		name := fmt.Sprintf("ffffffff-0000-4000-8000-%012d.json", i)
		must(t, os.WriteFile(filepath.Join(w.root(), name), content, 0o600))
	}
	before := snapshotTree(t, w.home, w.work)
	_, err = Recover(ctx, w.recoverer())
	if !errors.Is(err, ErrBound) || !strings.Contains(err.Error(), "mv ") ||
		!strings.Contains(err.Error(), "leasereal dirlease recover --state-home "+w.home) {
		t.Fatalf("want ErrBound with the way out, got %v", err)
	}
	if after := snapshotTree(t, w.home, w.work); after != before {
		t.Fatal("tree changed")
	}
}
