package campaign

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasekit/leasekit/sim"
)

// A traced run never runs a step inline on a process's coroutine
// (sim/step.go); an untraced one does for most steps. Both must be the same
// run: the same decisions, per-step hashes, outcome and history, for every
// engine, under the default swarm and under heavy crash and power loss
// (where the inline steps hand faults back to the main loop most).
func TestInlineStepsDoNotChangeARun(t *testing.T) {
	heavy, err := ParseFaultSetting("swarm,crash=0.02,powerloss=0.02,clockstep=0.05,pidchurn=0.05,zombie=0.05")
	require.NoError(t, err)
	for _, name := range Names(false) {
		e, err := Lookup(name)
		require.NoError(t, err)
		for _, faults := range []FaultSetting{swarm(t), heavy} {
			options := Options{Faults: faults}
			inline := 0
			for seed := uint64(1); seed <= 25; seed++ {
				spec, err := options.SpecFor(name, seed)
				require.NoError(t, err)
				untraced := spec.Config(e, nil)
				untraced.HashStream = true
				traced := spec.Config(e, io.Discard)
				traced.HashStream = true
				plain, withTrace := sim.Run(untraced), sim.Run(traced)
				require.Zero(t, withTrace.InlineSteps, "%s seed %d: a traced run went inline", name, seed)
				inline += plain.InlineSteps
				require.Equal(t, withTrace.Decisions, plain.Decisions, "%s seed %d", name, seed)
				require.Equal(t, withTrace.HashStream, plain.HashStream, "%s seed %d", name, seed)
				require.Equal(t, withTrace.Outcome, plain.Outcome, "%s seed %d", name, seed)
				require.Equal(t, withTrace.Message, plain.Message, "%s seed %d", name, seed)
				require.Equal(t, withTrace.Steps, plain.Steps, "%s seed %d", name, seed)
				require.Equal(t, withTrace.History, plain.History, "%s seed %d", name, seed)
			}
			require.Positive(t, inline, "%s: no step ran inline", name)
		}
	}
}
