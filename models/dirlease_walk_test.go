package models

import (
	"cmp"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestDirWalkModelStepsAsDirLeaseModel holds the order walks' model to the
// one porcupine runs: stepped side by side through generated histories
// (correct and bug-planted, in call and in return order), both accept or
// reject each operation alike, and the encoded model's state is the
// encoding of the walk model's decoded world after every step.
func TestDirWalkModelStepsAsDirLeaseModel(t *testing.T) {
	walk, model := dirWalkModel(), DirLeaseModel()
	var steps, rejections int
	for seed := int64(1); seed <= 150; seed++ {
		for _, bugs := range []bool{false, true} {
			ops, _ := generateDirHistory(dirWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3, bugRecoverLive: bugs})
			ops = annotateChildFates(ops)
			for _, instant := range []func(porcupine.Operation) int64{
				func(op porcupine.Operation) int64 { return op.Call },
				func(op porcupine.Operation) int64 { return op.Return },
			} {
				ordered := slices.Clone(ops)
				slices.SortStableFunc(ordered, func(a, b porcupine.Operation) int { return cmp.Compare(instant(a), instant(b)) })
				walked, encoded := walk.Init(), model.Init()
				for i, op := range ordered {
					walkOK, walkNext := walk.Step(walked, op.Input, op.Output)
					modelOK, modelNext := model.Step(encoded, op.Input, op.Output)
					if walkOK != modelOK {
						t.Fatalf("seed %d, bugs %v, operation %d (%s): the walk model says %v, the model %v",
							seed, bugs, i, DescribeDirLeaseOperation(op.Input, op.Output), walkOK, modelOK)
					}
					steps++
					if !modelOK {
						rejections++
						break
					}
					walked, encoded = walkNext, modelNext
					if got := encodeDirWorld(walked.(dirWorld)); got != encoded.(dirState) {
						t.Fatalf("seed %d, bugs %v, operation %d: the walk model's world encodes otherwise than the model's state", seed, bugs, i)
					}
				}
			}
		}
	}
	if rejections == 0 {
		t.Fatal("no history was rejected: the comparison never saw a rejection")
	}
	t.Logf("%d steps compared, %d walks ended by a rejection", steps, rejections)
}

// The walk model's witnesses agree with porcupine, as the model's do.
func TestDirWalkModelWitnessesAgreeWithPorcupine(t *testing.T) {
	c := witnessCases[2]
	if c.name != "dirlease" {
		t.Fatalf("witnessCases[2] is %s", c.name)
	}
	walk := dirWalkModel()
	witnessed, illegal, falsePasses := crossCheck(c, 25, func(_ porcupine.Model, ops []porcupine.Operation) bool { return orderWitness(walk, ops) })
	if falsePasses != 0 || illegal == 0 {
		t.Fatalf("the walk model passed %d histories porcupine rejects (of %d illegal)", falsePasses, illegal)
	}
	t.Logf("%d of 50 witnessed, %d illegal", witnessed, illegal)
}
