package models

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
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
// illegal, some legal, overlapping calls, environment events), the typed
// power-set model and porcupine's give the same verdict.
func TestStateSetModelDecidesAsToModel(t *testing.T) {
	generations := []string{"g1", "g2", "g3"}
	sessions := []string{"s1", "s2", "s3"}
	verdicts := map[bool]int{}
	rapid.Check(t, func(t *rapid.T) {
		var history []porcupine.Operation
		clock := int64(0)
		for i := range rapid.IntRange(1, 7).Draw(t, "operations") {
			proc := rapid.IntRange(1, 3).Draw(t, "proc")
			generation := rapid.SampledFrom(generations).Draw(t, "generation")
			session := rapid.SampledFrom(sessions).Draw(t, "session")
			epoch := int64(rapid.IntRange(0, 3).Draw(t, "epoch"))
			var input, output any
			switch rapid.IntRange(0, 6).Draw(t, "kind") {
			case 0:
				input = acq(proc, "h", session)
				output = rapid.SampledFrom([]any{acquired(generation, epoch), held(generation, session, epoch),
					acquireRefused(RefusalLifecycleBusy), acquireRefused(RefusalCorruptOwner)}).Draw(t, "acquire-result")
			case 1:
				input = rel(proc, generation, session)
				output = rapid.SampledFrom([]any{released, notOwner}).Draw(t, "release-result")
			case 2:
				input = insp(proc)
				output = rapid.SampledFrom([]any{empty, owned(generation, session, epoch)}).Draw(t, "inspect-result")
			case 3:
				input = fence(proc, generation, session)
				output = rapid.SampledFrom([]any{fenceOK, fenced}).Draw(t, "fence-result")
			case 4:
				input, output = ProcessDeath{Proc: proc}, nil
			case 5:
				input, output = LeaseReclaim{Namespace: ns, Generation: generation}, nil
			default:
				input, output = LeaseCorruption{Namespace: ns}, nil
			}
			call := clock + int64(rapid.IntRange(0, 2).Draw(t, "gap"))
			ret := call + int64(rapid.IntRange(0, 3).Draw(t, "length"))
			if output == nil {
				ret = call
			}
			clock = call + 1
			history = append(history, porcupine.Operation{ClientId: i, Input: input, Output: output, Call: call, Return: ret})
		}
		got := porcupine.CheckOperations(LeaseModel(), history)
		want := porcupine.CheckOperations(referenceLeaseModel(), history)
		if got != want {
			t.Fatalf("typed model %v, porcupine's construction %v, on %+v", got, want, history)
		}
		verdicts[got]++
	})
	if verdicts[true] == 0 || verdicts[false] == 0 {
		t.Fatalf("the generator must reach both verdicts: %v", verdicts)
	}
}
