package realstress

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/internal/modelmap"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/models"
)

// TestInspectSeesReclaimGap is the regression test of finding F1
// (docs/REALSTRESS.md, "Why the history records reclaims"): an Acquire that reclaims a dead owner renames
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
		1: acquireLine(1, 100, 200, mustAcquireOutput(t, first)),
		2: acquireLine(2, 400, 700, mustAcquireOutput(t, second)),
		3: {
			{Lane: 3, Seq: 1, Phase: PhaseCall, Op: OpInspect, Input: mustJSON(t, models.LeaseInspect{Namespace: namespace, Proc: 3}), Ns: 500},
			{Lane: 3, Seq: 1, Phase: PhaseReturn, Op: OpInspect, Output: mustJSON(t, modelmap.LeaseInspect(lease.Projection{Kind: seen})), Ns: 600},
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

// TestReclaimLogFSLogsTheMove: a worker's FS logs the move of a dead
// owner's receiver.lock into quarantine as a reclaim line of the acquire in
// progress, naming the generation, before the acquire returns; other
// renames (the install) leave no line.
func TestReclaimLogFSLogsTheMove(t *testing.T) {
	namespace := filepath.Join(t.TempDir(), "ns")
	table := leasetest.NewInspector(leasetest.Identity(101))
	table.SetLive(leasetest.Identity(102))
	logPath := filepath.Join(t.TempDir(), "lane.jsonl")
	log, err := CreateLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	worker := &opLog{config: WorkerConfig{Namespace: namespace, Worker: 2, Lane: 2}, log: log, seq: 5}
	newManager := func(fs lease.FS, pid int) *lease.Manager {
		manager, err := lease.NewManager(lease.Config{Namespace: namespace, RootID: "finding", FS: fs,
			Clock: osenv.NewClock(), Inspector: table.As(leasetest.Identity(pid)), IDs: osenv.NewIDSource()})
		if err != nil {
			t.Fatal(err)
		}
		return manager
	}
	ctx := context.Background()
	request := lease.AcquireRequest{SessionID: "s", SessionFile: "/sessions/s"}
	first, err := newManager(reclaimLogFS{FS: osenv.NewFS(), log: worker}, 101).Acquire(ctx, request)
	if err != nil || first.Kind != lease.Acquired {
		t.Fatalf("first acquire: %v %v", first.Kind, err)
	}
	table.Kill(101)
	second, err := newManager(reclaimLogFS{FS: osenv.NewFS(), log: worker}, 102).Acquire(ctx, request)
	if err != nil || second.Kind != lease.Acquired || len(second.Reclaimed) != 1 {
		t.Fatalf("second acquire: %v reclaimed %d, err %v", second.Kind, len(second.Reclaimed), err)
	}
	records, err := ReadLog(logPath)
	if err != nil || worker.reclaimErr != nil {
		t.Fatal(err, worker.reclaimErr)
	}
	if len(records) != 1 || records[0].Phase != PhaseReclaim || records[0].Seq != 5 || records[0].Lane != 2 {
		t.Fatalf("log %+v, want one reclaim line of seq 5", records)
	}
	want := models.LeaseReclaim{Namespace: namespace, Generation: first.Owner.Generation}
	if got, err := decodeAs[models.LeaseReclaim](records[0].Input); err != nil || got != want {
		t.Fatalf("reclaim line %v (%v), want %v", got, err, want)
	}
}

func TestQuarantinedGeneration(t *testing.T) {
	const id = "0503a68d-103c-4955-aae4-f3917ad2b412"
	cases := []struct{ name, want string }{
		{"receiver." + id + ".1796010956934.b0b0c446-4bb9-4b8d-8b45-1165a7089f6e", id},
		{"receiver.not-a-uuid.1796010956934.b0b0c446-4bb9-4b8d-8b45-1165a7089f6e", ""},
		{"receiver." + id + ".1796010956934", ""},
	}
	for _, c := range cases {
		if got := quarantinedGeneration(c.name); got != c.want {
			t.Errorf("quarantinedGeneration(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// mustAcquireOutput is modelmap.LeaseAcquire of a result the model knows.
func mustAcquireOutput(t *testing.T, result lease.AcquireResult) models.LeaseAcquireResult {
	t.Helper()
	output, ok := modelmap.LeaseAcquire(result)
	if !ok {
		t.Fatalf("acquire result %v has no model counterpart", result.Kind)
	}
	return output
}
