package realstress

import (
	"context"
	"os"
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

// TestFindingInspectSeesReclaimGap shows finding F1 (docs/LEASEREAL.md):
// an Acquire that reclaims a dead owner renames receiver.lock into
// quarantine and only then installs the new owner, both inside one guard
// hold; the lock-free Inspect can run between the two and report Empty.
// models.LeaseModel treats a known-outcome Acquire as one atomic step, so
// the history {death of A; B acquires (reclaiming A); C inspects Empty
// inside B's call} is illegal for the model. `leasereal stress` found this
// on the real OS; this test reproduces it deterministically on a real
// directory. Either the engine (e.g. install before quarantining, or make
// Inspect wait for the guard) or the model (an acquire that reclaims has an
// observable empty instant) must change; the owners of package lease and
// models decide. Until then the test is opt-in so that `go test ./...`
// stays green: set REALSTRESS_FINDINGS=1 to see it fail.
func TestFindingInspectSeesReclaimGap(t *testing.T) {
	if os.Getenv("REALSTRESS_FINDINGS") != "1" {
		t.Skip("finding F1 (Inspect sees the empty instant inside a reclaiming Acquire) is open; set REALSTRESS_FINDINGS=1 to run its failing test")
	}
	namespace := filepath.Join(t.TempDir(), "ns")
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
	first, err := newManager(osenv.NewFS(), 101).Acquire(ctx, request("a"))
	if err != nil || first.Kind != lease.Acquired {
		t.Fatalf("first acquire: %v %v", first.Kind, err)
	}
	table.Kill(101)

	hooked := leasetest.NewHookFS(osenv.NewFS())
	observer := newManager(osenv.NewFS(), 103)
	var seen []lease.ProjectionKind
	hooked.After(func(op leasetest.Op, err error) {
		if err == nil && strings.HasPrefix(op.Name, "Rename") && strings.HasSuffix(op.Paths[0], "/receiver.lock") &&
			strings.Contains(op.Paths[1], "/quarantine/") {
			projection, inspectErr := observer.Inspect(ctx)
			if inspectErr != nil {
				t.Errorf("inspect inside the reclaim: %v", inspectErr)
			}
			seen = append(seen, projection.Kind)
		}
	})
	second, err := newManager(hooked, 102).Acquire(ctx, request("b"))
	if err != nil || second.Kind != lease.Acquired || len(second.Reclaimed) != 1 || len(seen) != 1 {
		t.Fatalf("second acquire: %v reclaimed %d, inspects %v, err %v", second.Kind, len(second.Reclaimed), seen, err)
	}
	history := []porcupine.Operation{
		{ClientId: 1, Input: models.LeaseAcquire{Namespace: namespace, Proc: 1, Host: "host-a", Session: "a"},
			Output: AcquireOutput(first), Call: 1, Return: 2},
		{ClientId: 0, Input: models.ProcessDeath{Proc: 1}, Call: 3, Return: 3},
		{ClientId: 2, Input: models.LeaseAcquire{Namespace: namespace, Proc: 2, Host: "host-a", Session: "b"},
			Output: AcquireOutput(second), Call: 4, Return: 7},
		{ClientId: 3, Input: models.LeaseInspect{Namespace: namespace, Proc: 3},
			Output: InspectOutput(lease.Projection{Kind: seen[0]}), Call: 5, Return: 6},
	}
	result, _ := models.CheckLease(history, 10*time.Second)
	if result != porcupine.Ok {
		t.Fatalf("the model rejects the engine's real behaviour: an Inspect inside a reclaiming Acquire saw %v", seen[0])
	}
}
