package models

import (
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

func TestExplainIllegalNamesTheOperationThatCannotFollow(t *testing.T) {
	ops := []porcupine.Operation{
		call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
		call(2, 3, 4, acq(2, "a", "s2"), acquired("g2", 2, "g1")),
		call(1, 5, 6, fence(1, "g1", "s1"), fenceOK),
	}
	result, info := CheckLease(ops, checkTimeout)
	if result != porcupine.Illegal {
		t.Fatalf("verdict %s, want Illegal", result)
	}
	text := ExplainIllegal(LeaseModel(), ops, info)
	for _, want := range []string{
		"longest partial linearization has 1",
		"p1 Acquire(ns, session s1) -> acquired(gen g1, epoch 1)",
		"state: {owned(p1@a alive, session s1, gen g1, epoch 1)}",
		"none of these could follow it:\n  [3,4] lane 2: p2 Acquire(ns, session s2) -> acquired(gen g2, epoch 2, reclaimed g1)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "[5,6]") {
		t.Errorf("explanation lists an operation that could not come next:\n%s", text)
	}
}

func TestExplainIllegalOnDirLease(t *testing.T) {
	ops := []porcupine.Operation{
		call(1, 1, 2, dirCreate(1, "/w<1>", RoleRawWorking, 100), created("c1")),
		call(2, 3, 4, recoverAt(2, 0), recovered(1, 0, 0, 0)),
	}
	result, info := CheckDirLease(ops, checkTimeout)
	if result != porcupine.Illegal {
		t.Fatalf("verdict %s, want Illegal", result)
	}
	text := ExplainIllegal(DirLeaseModel(), ops, info)
	if !strings.Contains(text, "/w<1>: claim c1 raw-working preparing, owner p1 alive, dir present") ||
		!strings.Contains(text, "p2 Recover(now 0) -> recovered 1") {
		t.Fatalf("explanation is not the plain-text story of the failure:\n%s", text)
	}
}
