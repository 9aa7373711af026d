package models

import (
	"math/rand/v2"
	"testing"

	"github.com/anishathalye/porcupine"
)

// referenceLeaseModel is the lease model through porcupine's own power-set
// construction (NondeterministicModel.ToModel): stateSetModel must decide
// every history as it does.
func referenceLeaseModel() porcupine.Model {
	nondeterministic := porcupine.NondeterministicModel{
		Partition: leasePartition,
		Init:      func() []any { return []any{leaseState{}} },
		Step: func(state, input, output any) []any {
			var next []any
			for _, s := range leaseStep(state.(leaseState), input, output) {
				next = append(next, s)
			}
			return next
		},
		Hash:              func(state any) uint64 { return leaseHash(state.(leaseState)) },
		DescribeOperation: DescribeLeaseOperation,
		DescribeState:     DescribeLeaseState,
	}
	return nondeterministic.ToModel()
}

// TestStateSetModelDecidesAsToModel: on random small lease histories (most
// illegal, some legal, overlapping calls, environment events; a fixed seed),
// the typed power-set model and porcupine's give the same verdict.
func TestStateSetModelDecidesAsToModel(t *testing.T) {
	random := rand.New(rand.NewPCG(8, 8))
	pick := func(values ...string) string { return values[random.IntN(len(values))] }
	verdicts := map[bool]int{}
	for range 3000 {
		var history []porcupine.Operation
		clock := int64(0)
		for i := range 1 + random.IntN(7) {
			proc := 1 + random.IntN(3)
			generation, session := pick("g1", "g2", "g3"), pick("s1", "s2", "s3")
			epoch := int64(random.IntN(4))
			var input, output any
			switch random.IntN(7) {
			case 0:
				input = acq(proc, "h", session)
				output = []any{acquired(generation, epoch), held(generation, session, epoch),
					acquireRefused(RefusalLifecycleBusy), acquireRefused(RefusalCorruptOwner)}[random.IntN(4)]
			case 1:
				input, output = rel(proc, generation, session), []any{released, notOwner}[random.IntN(2)]
			case 2:
				input, output = insp(proc), []any{empty, owned(generation, session, epoch)}[random.IntN(2)]
			case 3:
				input, output = fence(proc, generation, session), []any{fenceOK, fenced}[random.IntN(2)]
			case 4:
				input = ProcessDeath{Proc: proc}
			case 5:
				input = LeaseReclaim{Namespace: ns, Generation: generation}
			default:
				input = LeaseCorruption{Namespace: ns}
			}
			call := clock + int64(random.IntN(3))
			ret := call + int64(random.IntN(4))
			if output == nil {
				ret = call
			}
			clock = call + 1
			history = append(history, porcupine.Operation{ClientId: i, Input: input, Output: output, Call: call, Return: ret})
		}
		got := porcupine.CheckOperations(LeaseModel(), history)
		if want := porcupine.CheckOperations(referenceLeaseModel(), history); got != want {
			t.Fatalf("typed model %v, porcupine's construction %v, on %+v", got, want, history)
		}
		verdicts[got]++
	}
	if verdicts[true] == 0 || verdicts[false] == 0 {
		t.Fatalf("the generator must reach both verdicts: %v", verdicts)
	}
}
