package admissionwork

import (
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// TestGarbleCanTruncateToNothing pins the hostile hook's edge case the
// admission workload must track: garble's truncation may keep zero bytes,
// and then returns a nil slice, so "no corruption" cannot be a nil
// corruption.
func TestGarbleCanTruncateToNothing(t *testing.T) {
	record := []byte(`{"schemaVersion":1}`)
	cases := []struct {
		name      string
		decisions []uint32
		want      string
	}{
		{"truncate to nothing", []uint32{0, 0}, ""},
		{"truncate to a prefix", []uint32{0, 3}, `{"s`},
		{"overwrite the brace", []uint32{1}, `#"schemaVersion":1}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := workkit.Garble(record, sim.ReplayDecisions(tc.decisions))
			require.Equal(t, tc.want, string(got))
		})
	}
}

// TestAdmissionEmptyCorruptionIsRepaired replays leasesim's admission seed
// 1660, shrunk: the hostile hook truncates a schema-1 legacy active.json to
// zero bytes before the only controller runs. The workload kept the
// corruption as a nil slice, read that as "no corruption", and so never
// repaired the slot nor excused the engine's (correct) ErrCorrupt: the
// liveness probe's corrupt answer was reported as a wedged slot. The
// operator must remove the empty record, after which both acquires succeed.
func TestAdmissionEmptyCorruptionIsRepaired(t *testing.T) {
	plan, err := sim.ParseFaultPlan("upgrade=0.0005 corrupt=0.001")
	require.NoError(t, err)
	decisions, err := sim.ParseDecisions("0*4,1,0*3,1") // no second host, one namespace (hosts.go), then seed 1660's
	require.NoError(t, err)
	cfg := sim.Config{Seed: 1660, Replay: decisions, StepsMax: 100_000, Scheduler: sim.SchedulerPCT,
		PCTDepth: 3, PCTSteps: 2000, Faults: &plan,
		Setup: AdmissionWorkload(AdmissionOptions{Controllers: 1, OpsPerProc: 1, RespawnsMax: -1, PIDImpostors: -1, Operators: -1, Users: -1})}
	r := sim.RunTwice(cfg)
	require.Equal(t, sim.OutcomeOK, r.Outcome, r.Message)
	require.NoError(t, CheckAdmissionHistory(r.History))
	require.Equal(t, 1, r.Probes["admission-hostile-corrupt"], "the hook must strike: %v", r.Probes)
	require.Equal(t, 1, r.Probes["admission-operator-repair"], "the empty record must be repaired: %v", r.Probes)
	require.Equal(t, 1, r.Probes["admission-liveness-acquired"], "probes: %v", r.Probes)
}
