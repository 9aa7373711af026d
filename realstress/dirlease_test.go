package realstress

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/models"
)

// dirCall and dirReturn are one creator log line.
func dirCall(t *testing.T, lane, seq int, op string, input any, ns int64) Record {
	return Record{Lane: lane, Seq: seq, Phase: PhaseCall, Op: op, Input: mustJSON(t, input), Ns: ns}
}

func dirReturn(t *testing.T, lane, seq int, op string, output any, ns int64) Record {
	return Record{Lane: lane, Seq: seq, Phase: PhaseReturn, Op: op, Output: mustJSON(t, output), Ns: ns}
}

// TestCheckDirMoves: a recovery may move a leased directory only after its
// creator's death and, while the claim surely records a running child,
// after the child's death too.
func TestCheckDirMoves(t *testing.T) {
	const path, creator, child, recoverer = "/w/l2-1", 2, 1, 3
	create := []Record{
		dirCall(t, creator, 1, OpDirCreate, models.DirCreate{Proc: creator, Host: "h", Path: path, Role: models.RoleRawWorking}, 10),
		dirReturn(t, creator, 1, OpDirCreate, models.DirCreateResult{ClaimID: "c"}, 11),
		dirCall(t, creator, 2, OpDirUpdate, models.DirUpdate{Proc: creator, Path: path, ClaimID: "c", Role: models.RoleRawWorking,
			FromPhase: models.DirPreparing, ToPhase: models.DirLaunching}, 12),
		dirReturn(t, creator, 2, OpDirUpdate, models.DirUpdateResult{Kind: models.CASOK}, 13),
	}
	toRunning := func(output any) []Record {
		records := []Record{dirCall(t, creator, 3, OpDirUpdate, models.DirUpdate{Proc: creator, Path: path, ClaimID: "c",
			Role: models.RoleRawWorking, FromPhase: models.DirLaunching, ToPhase: models.DirRunning, Child: child, ChildHost: "h"}, 14)}
		if output != nil {
			records = append(records, dirReturn(t, creator, 3, OpDirUpdate, output, 15))
		}
		return records
	}
	look := []Record{
		dirCall(t, creator, 4, OpDirUse, models.DirUse{Proc: creator, Path: path}, 16),
		dirReturn(t, creator, 4, OpDirUse, models.DirUseResult{Kind: models.UsePresent}, 17),
	}
	running := append(append(append([]Record(nil), create...), toRunning(models.DirUpdateResult{Kind: models.CASOK})...), look...)
	cases := []struct {
		name    string
		log     []Record
		deaths  []Death
		moveNs  int64
		violate string
	}{
		{"launching, owner dead", create, []Death{{Lane: creator, Ns: 20}}, 30, ""},
		{"owner alive", create, nil, 30, "creator, lane 2, was alive"},
		{"owner dies after the move", create, []Death{{Lane: creator, Ns: 40}}, 30, "creator, lane 2, was alive"},
		{"running, child alive", running, []Death{{Lane: creator, Ns: 20}}, 30, "running child its claim records, lane 1, was alive"},
		{"running, child dies after", running, []Death{{Lane: creator, Ns: 20}, {Lane: child, Ns: 35}}, 30, "lane 1, was alive"},
		{"running, child dead", running, []Death{{Lane: child, Ns: 18}, {Lane: creator, Ns: 20}}, 30, ""},
		// A Use after the update changes nothing: the claim still records the child.
		{"running, then looked at", running, []Death{{Lane: creator, Ns: 20}}, 30, "lane 1, was alive"},
		// Unsure whether the claim records the child: never blamed.
		{"update to running cut short", append(append([]Record(nil), create...), toRunning(nil)...), []Death{{Lane: creator, Ns: 20}}, 30, ""},
		{"update to running failed", append(append(append([]Record(nil), create...), toRunning(nil)...),
			Record{Lane: creator, Seq: 3, Phase: PhaseReturn, Op: OpDirUpdate, Error: "EIO", Ns: 15}), []Death{{Lane: creator, Ns: 20}}, 30, ""},
		{"update to running refused", append(append([]Record(nil), create...), toRunning(models.DirUpdateResult{Kind: models.CASChanged})...), []Death{{Lane: creator, Ns: 20}}, 30, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lanes := map[int][]Record{creator: c.log}
			violations, err := checkDirMoves(lanes, c.deaths, []Move{{Lane: recoverer, Path: path, Ns: c.moveNs}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.violate == "" && len(violations) != 0:
				t.Fatalf("violations %q, want none", violations)
			case c.violate != "" && (len(violations) != 1 || !strings.Contains(violations[0], c.violate)):
				t.Fatalf("violations %q, want one saying %q", violations, c.violate)
			}
		})
	}
	if _, err := checkDirMoves(map[int][]Record{creator: create}, nil, []Move{{Lane: recoverer, Path: "/w/l9-9", Ns: 30}}); err == nil {
		t.Fatal("a move of a path no creator leased is a harness error")
	}
}

func TestIsLeasedName(t *testing.T) {
	for name, want := range map[string]bool{"l2-1": true, leasedName(17, 204): true, "l2-1x": false, "l02-1": false,
		".quarantine-1-2-3": false, "l-1": false, "x2-1": false} {
		if got := isLeasedName(name); got != want {
			t.Errorf("isLeasedName(%q) = %t, want %t", name, got, want)
		}
	}
}
