package campaign_test

import (
	"bytes"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// TestReplaySaysWhyAHistoryIsNotLinearizable: a replay whose history fails
// its check prints, under the verdict, the model's account of the longest
// partial linearization (which operation could follow none of the others)
// instead of a bare "not linearizable". Here a recovery pass reports a
// claim recovered in a world that never had one.
func TestReplaySaysWhyAHistoryIsNotLinearizable(t *testing.T) {
	e := mustEngine(t, "dirlease")
	result := sim.Result{History: []sim.Operation{{Lane: 1, Proc: "recoverer-0", Op: "recover",
		Input:  models.DirRecover{Proc: 1, Host: "host0", NowMs: 1},
		Output: models.DirRecoverResult{Recovered: 1}, Call: 1, Return: 2, CallOrder: 1, ReturnOrder: 2}}}
	verdict := e.HistoryVerdict(result, "not linearizable: dirlease history", false)
	require.NotNil(t, verdict.Explain)
	var text bytes.Buffer
	(&campaign.Replay{Result: result, Verdict: verdict}).WriteText(&text)
	require.Contains(t, text.String(), "porcupine: NOT linearizable")
	require.Contains(t, text.String(), "longest partial linearization has 0")
	require.Contains(t, text.String(), "none of these could follow it:\n  [1,2] lane 1: p1 Recover(now 1) -> recovered 1")

	ok := e.HistoryVerdict(result, "", false)
	require.Nil(t, ok.Explain, "a history that passed needs no account")
}
