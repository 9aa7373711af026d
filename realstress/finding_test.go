package realstress

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/models"
)

// TestInspectSeesReclaimGap is the regression test of finding F1
// (docs/LEASEREAL.md, fixed): an Acquire that reclaims a dead owner renames
// receiver.lock into quarantine and only then installs the new owner, and
// the lock-free Inspect can run between the two and report Empty. The test
// makes that schedule happen on a real directory (an FS hook runs the
// Inspect right after the rename), logs it as the stress workers do, and
// builds the history with BuildHistory: the acquire's reported reclaim
// becomes a models.LeaseReclaim spanning the acquire, which explains the
// empty instant, so the history checks Ok. The same history without the
// reclaim event must stay Illegal (the model still treats an acquire as one
// atomic step), so the test fails if BuildHistory stops emitting it.
func TestInspectSeesReclaimGap(t *testing.T) {
	namespace := filepath.Join(t.TempDir(), "ns")
	first, second, seen := reclaimGapSchedule(t, namespace)
	if seen != lease.Empty {
		t.Fatalf("the Inspect inside the reclaim saw %v, want empty (the engine's order changed: revisit F1)", seen)
	}
	session := func(lane int) string { return "lane" + string(rune('0'+lane)) + "-op1" }
	acquireLine := func(lane int, callNs, returnNs int64, output models.LeaseAcquireResult) []Record {
		input := models.LeaseAcquire{Namespace: namespace, Proc: lane, Host: "host-a", Session: session(lane)}
		return []Record{
			{Lane: lane, Seq: 1, Phase: PhaseCall, Op: OpAcquire, Input: mustJSON(t, input), Ns: callNs},
			{Lane: lane, Seq: 1, Phase: PhaseReturn, Op: OpAcquire, Output: mustJSON(t, output), Ns: returnNs},
		}
	}
	lanes := map[int][]Record{
		1: acquireLine(1, 100, 200, AcquireOutput(first)),
		2: acquireLine(2, 400, 700, AcquireOutput(second)),
		3: {
			{Lane: 3, Seq: 1, Phase: PhaseCall, Op: OpInspect, Input: mustJSON(t, models.LeaseInspect{Namespace: namespace, Proc: 3}), Ns: 500},
			{Lane: 3, Seq: 1, Phase: PhaseReturn, Op: OpInspect, Output: mustJSON(t, InspectOutput(lease.Projection{Kind: seen})), Ns: 600},
		},
	}
	history, err := BuildHistory(lanes, []Death{{Lane: 1, PID: 101, Ns: 300, Killed: true}})
	if err != nil {
		t.Fatal(err)
	}
	if history.Reclaims != 1 {
		t.Fatalf("reclaims %d, want 1", history.Reclaims)
	}
	var withoutReclaims []porcupine.Operation
	for _, op := range history.Operations {
		if _, reclaim := op.Input.(models.LeaseReclaim); !reclaim {
			withoutReclaims = append(withoutReclaims, op)
		}
	}
	if len(withoutReclaims) != len(history.Operations)-1 {
		t.Fatalf("history has %d reclaim events, want 1", len(history.Operations)-len(withoutReclaims))
	}
	cases := []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"with the reclaim event", history.Operations, porcupine.Ok},
		{"without it (the F1 false alarm)", withoutReclaims, porcupine.Illegal},
	}
	for _, c := range cases {
		if result, _ := models.CheckLease(c.ops, 10*time.Second); result != c.want {
			t.Errorf("%s: check %v, want %v", c.name, result, c.want)
		}
	}
}

// reclaimGapSchedule runs, on a real namespace directory: pid 101 acquires
// and dies; pid 102 acquires (reclaiming 101's owner), and pid 103
// inspects right after the rename of receiver.lock into quarantine, before
// the install. It returns both acquire results and what the Inspect saw.
func reclaimGapSchedule(t *testing.T, namespace string) (first, second lease.AcquireResult, seen lease.ProjectionKind) {
	t.Helper()
	table := leasetest.NewInspector(leasetest.Identity(101))
	table.SetLive(leasetest.Identity(102))
	newManager := func(fs lease.FS, pid int) *lease.Manager {
		manager, err := lease.NewManager(lease.Config{Namespace: namespace, RootID: "finding", FS: fs,
			Clock: osenv.NewClock(), Inspector: table.As(leasetest.Identity(pid)), IDs: osenv.NewIDSource()})
		if err != nil {
			t.Fatal(err)
		}
		return manager
	}
	ctx := context.Background()
	request := func(session string) lease.AcquireRequest {
		return lease.AcquireRequest{SessionID: session, SessionFile: "/sessions/" + session}
	}
	first, err := newManager(osenv.NewFS(), 101).Acquire(ctx, request("lane1-op1"))
	if err != nil || first.Kind != lease.Acquired {
		t.Fatalf("first acquire: %v %v", first.Kind, err)
	}
	table.Kill(101)

	hooked := leasetest.NewHookFS(osenv.NewFS())
	observer := newManager(osenv.NewFS(), 103)
	var seenAll []lease.ProjectionKind
	hooked.After(func(op leasetest.Op, err error) {
		if err == nil && strings.HasPrefix(op.Name, "Rename") && strings.HasSuffix(op.Paths[0], "/receiver.lock") &&
			strings.Contains(op.Paths[1], "/quarantine/") {
			projection, inspectErr := observer.Inspect(ctx)
			if inspectErr != nil {
				t.Errorf("inspect inside the reclaim: %v", inspectErr)
			}
			seenAll = append(seenAll, projection.Kind)
		}
	})
	second, err = newManager(hooked, 102).Acquire(ctx, request("lane2-op1"))
	if err != nil || second.Kind != lease.Acquired || len(second.Reclaimed) != 1 || len(seenAll) != 1 {
		t.Fatalf("second acquire: %v reclaimed %d, inspects %v, err %v", second.Kind, len(second.Reclaimed), seenAll, err)
	}
	if second.Reclaimed[0].Owner.Generation != first.Owner.Generation {
		t.Fatalf("reclaimed generation %s, want %s", second.Reclaimed[0].Owner.Generation, first.Owner.Generation)
	}
	return first, second, seenAll[0]
}
