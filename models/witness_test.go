package models

import (
	"cmp"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
)

// witnessCase is a family of generated histories and the model they are
// checked against; bugs plants a bug in the generator.
type witnessCase struct {
	name    string
	model   porcupine.Model
	history func(seed int64, bugs bool) []porcupine.Operation
}

var witnessCases = []witnessCase{
	{"lease", LeaseModel(), func(seed int64, bugs bool) []porcupine.Operation {
		ops, _ := generateLeaseHistoryCountingBugs(leaseWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3, bugReclaimLive: bugs})
		return ops
	}},
	{"admission", AdmissionModel(), func(seed int64, bugs bool) []porcupine.Operation {
		ops, _ := generateAdmissionHistory(admissionWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3, bugStaleCAS: bugs})
		return ops
	}},
	{"dirlease", DirLeaseModel(), func(seed int64, bugs bool) []porcupine.Operation {
		ops, _ := generateDirHistory(dirWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3, bugRecoverLive: bugs})
		return annotateChildFates(ops)
	}},
}

// crossCheck runs witness and porcupine on each generated history, correct
// and with the planted bug, and counts the witnesses and the witnesses
// porcupine rejects (each one a false pass).
func crossCheck(c witnessCase, seeds int64, witness func(porcupine.Model, []porcupine.Operation) bool) (witnessed, illegal, falsePasses int) {
	for seed := int64(1); seed <= seeds; seed++ {
		for _, bugs := range []bool{false, true} {
			ops := c.history(seed, bugs)
			verdict := porcupine.CheckOperations(c.model, ops)
			if !verdict {
				illegal++
			}
			if witness(c.model, ops) {
				witnessed++
				if !verdict {
					falsePasses++
				}
			}
		}
	}
	return witnessed, illegal, falsePasses
}

// The call- and return-order walks never passes a history porcupine rejects, over
// correct and bug-planted histories of every model; and it is worth having:
// it passes some of them, sparing porcupine.
func TestCallOrderWitnessAgreesWithPorcupine(t *testing.T) {
	for _, c := range witnessCases {
		witnessed, illegal, falsePasses := crossCheck(c, 25, orderWitness)
		if falsePasses != 0 {
			t.Fatalf("%s: the order walks passed %d histories porcupine rejects", c.name, falsePasses)
		}
		if illegal == 0 {
			t.Fatalf("%s: no planted bug made a history porcupine rejects: the cross-check checks nothing", c.name)
		}
		t.Logf("%s: %d of 50 histories witnessed in call or return order, %d illegal", c.name, witnessed, illegal)
	}
}

// The cross-check catches a broken walk: one that steps past an operation
// the model rejects passes histories porcupine rejects.
func TestCrossCheckCatchesAWalkThatIgnoresRejections(t *testing.T) {
	ignoring := func(model porcupine.Model, ops []porcupine.Operation) bool {
		ordered := slices.Clone(ops)
		slices.SortStableFunc(ordered, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
		partitions := [][]porcupine.Operation{ordered}
		if model.Partition != nil {
			partitions = model.Partition(ordered)
		}
		for _, partition := range partitions {
			state := model.Init()
			for _, op := range partition {
				if ok, next := model.Step(state, op.Input, op.Output); ok {
					state = next
				}
			}
		}
		return true
	}
	for _, c := range witnessCases {
		if _, _, falsePasses := crossCheck(c, 25, ignoring); falsePasses == 0 {
			t.Fatalf("%s: the cross-check missed a walk that ignores the model's rejections", c.name)
		}
	}
}
