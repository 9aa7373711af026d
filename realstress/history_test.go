package realstress

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasekit/leasekit/models"
)

const testNamespace = "/ns"

func mustJSON(t *testing.T, value any) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// acquireRecords is a lane's acquire call and, if output is not nil, its
// return.
func acquireRecords(t *testing.T, lane, seq int, callNs, returnNs int64, output *models.LeaseAcquireResult) []Record {
	input := models.LeaseAcquire{Namespace: testNamespace, Proc: lane, Host: "h", Session: "s" + string(rune('a'+lane))}
	records := []Record{{Lane: lane, Seq: seq, Phase: PhaseCall, Op: OpAcquire, Input: mustJSON(t, input), Ns: callNs}}
	if output != nil {
		records = append(records, Record{Lane: lane, Seq: seq, Phase: PhaseReturn, Op: OpAcquire,
			Output: mustJSON(t, *output), Ns: returnNs})
	}
	return records
}

// inspectRecords is a lane's inspect call and return.
func inspectRecords(t *testing.T, lane, seq int, callNs, returnNs int64, output models.LeaseInspectResult) []Record {
	input := models.LeaseInspect{Namespace: testNamespace, Proc: lane}
	return []Record{
		{Lane: lane, Seq: seq, Phase: PhaseCall, Op: OpInspect, Input: mustJSON(t, input), Ns: callNs},
		{Lane: lane, Seq: seq, Phase: PhaseReturn, Op: OpInspect, Output: mustJSON(t, output), Ns: returnNs},
	}
}

// reclaimLine is the line a worker logs when its acquire seq moved
// generation's receiver.lock into quarantine.
func reclaimLine(t *testing.T, lane, seq int, ns int64, generation string) Record {
	input := models.LeaseReclaim{Namespace: testNamespace, Generation: generation}
	return Record{Lane: lane, Seq: seq, Phase: PhaseReclaim, Op: OpAcquire, Input: mustJSON(t, input), Ns: ns}
}

func TestBuildHistory(t *testing.T) {
	acquired := func(generation string, epoch int64, reclaimed ...string) *models.LeaseAcquireResult {
		return &models.LeaseAcquireResult{Kind: models.LeaseAcquired, Generation: generation, Epoch: epoch, Reclaimed: reclaimed}
	}
	cases := []struct {
		name   string
		lanes  map[int][]Record
		deaths []Death
		want   porcupine.CheckResult
		err    string
	}{
		{
			name: "a killed holder is reclaimed after its death",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: acquireRecords(t, 2, 1, 400, 500, acquired("g2", 2, "g1")),
			},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300, Killed: true}},
			want:   porcupine.Ok,
		},
		{
			name: "a grant over a live holder is a violation",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: acquireRecords(t, 2, 1, 400, 500, acquired("g2", 2)),
			},
			want: porcupine.Illegal,
		},
		{
			name: "a reclaim that returns before the death is a violation",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: acquireRecords(t, 2, 1, 250, 280, acquired("g2", 2, "g1")),
			},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300, Killed: true}},
			want:   porcupine.Illegal,
		},
		{
			name: "an acquire cut by a kill is unknown, bounded by the death",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 0, nil),
				2: acquireRecords(t, 2, 1, 400, 500, &models.LeaseAcquireResult{Kind: models.LeaseHeld,
					Generation: "g1", Session: "sb", Epoch: 1}),
			},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300, Killed: true}},
			// lane 1's acquire (session "sb") may have granted before its
			// death; held by a dead owner is still a violation.
			want: porcupine.Illegal,
		},
		{
			name: "an acquire cut by a kill may have granted before the death",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 0, nil),
				2: acquireRecords(t, 2, 1, 150, 250, &models.LeaseAcquireResult{Kind: models.LeaseHeld,
					Generation: "g1", Session: "sb", Epoch: 1}),
			},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300, Killed: true}},
			want:   porcupine.Ok,
		},
		{
			name: "an Inspect sees the empty instant inside a reclaiming acquire (F1)",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: acquireRecords(t, 2, 1, 400, 700, acquired("g2", 2, "g1")),
				3: inspectRecords(t, 3, 1, 500, 600, models.LeaseInspectResult{Kind: models.LeaseEmpty}),
			},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300, Killed: true}},
			want:   porcupine.Ok,
		},
		{
			name: "a reported reclaim of a live owner is a violation, Inspect or not",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: acquireRecords(t, 2, 1, 400, 700, acquired("g2", 2, "g1")),
				3: inspectRecords(t, 3, 1, 500, 600, models.LeaseInspectResult{Kind: models.LeaseEmpty}),
			},
			want: porcupine.Illegal,
		},
		{
			name: "an acquire cut by a kill may have reclaimed a dead owner without installing",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: acquireRecords(t, 2, 1, 400, 0, nil),
				3: inspectRecords(t, 3, 1, 500, 600, models.LeaseInspectResult{Kind: models.LeaseEmpty}),
			},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300, Killed: true}, {Lane: 2, PID: 11, Ns: 800, Killed: true}},
			want:   porcupine.Ok,
		},
		{
			name: "an acquire cut by a kill never empties a live owner's lease",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: acquireRecords(t, 2, 1, 400, 0, nil),
				3: inspectRecords(t, 3, 1, 500, 600, models.LeaseInspectResult{Kind: models.LeaseEmpty}),
			},
			deaths: []Death{{Lane: 2, PID: 11, Ns: 800, Killed: true}},
			want:   porcupine.Illegal,
		},
		{
			name: "an acquire killed after reclaiming (logged) and installing: an Inspect saw the empty instant",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: append(acquireRecords(t, 2, 1, 400, 0, nil), reclaimLine(t, 2, 1, 450, "g1")),
				3: inspectRecords(t, 3, 1, 500, 600, models.LeaseInspectResult{Kind: models.LeaseEmpty}),
				4: inspectRecords(t, 4, 1, 700, 800, models.LeaseInspectResult{Kind: models.LeaseOwned, Generation: "g2", Session: "sc", Epoch: 2}),
			},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300, Killed: true}, {Lane: 2, PID: 11, Ns: 900, Killed: true}},
			want:   porcupine.Ok,
		},
		{
			name: "the same without the reclaim line: one unknown step cannot explain empty, then its own owner",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: acquireRecords(t, 2, 1, 400, 0, nil),
				3: inspectRecords(t, 3, 1, 500, 600, models.LeaseInspectResult{Kind: models.LeaseEmpty}),
				4: inspectRecords(t, 4, 1, 700, 800, models.LeaseInspectResult{Kind: models.LeaseOwned, Generation: "g2", Session: "sc", Epoch: 2}),
			},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300, Killed: true}, {Lane: 2, PID: 11, Ns: 900, Killed: true}},
			want:   porcupine.Illegal,
		},
		{
			name: "a logged reclaim of a live owner is a violation",
			lanes: map[int][]Record{
				1: acquireRecords(t, 1, 1, 100, 200, acquired("g1", 1)),
				2: append(acquireRecords(t, 2, 1, 400, 0, nil), reclaimLine(t, 2, 1, 450, "g1")),
			},
			deaths: []Death{{Lane: 2, PID: 11, Ns: 900, Killed: true}},
			want:   porcupine.Illegal,
		},
		{
			name: "a reclaim line of another operation is a recording error",
			lanes: map[int][]Record{
				2: append(acquireRecords(t, 2, 1, 400, 0, nil), reclaimLine(t, 2, 7, 450, "g1")),
			},
			deaths: []Death{{Lane: 2, PID: 11, Ns: 900, Killed: true}},
			err:    "does not belong",
		},
		{
			name:  "an open call without a death is a recording error",
			lanes: map[int][]Record{1: acquireRecords(t, 1, 1, 100, 0, nil)},
			err:   "no return and no death",
		},
		{
			name:   "a call after the death is a recording error",
			lanes:  map[int][]Record{1: acquireRecords(t, 1, 1, 400, 0, nil)},
			deaths: []Death{{Lane: 1, PID: 10, Ns: 300}},
			err:    "after its death",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			history, err := BuildHistory(c.lanes, c.deaths)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := models.CheckLease(history.Operations, 10*time.Second); got != c.want {
				t.Fatalf("check %v, want %v", got, c.want)
			}
		})
	}
}

// TestStampOrder: at one nanosecond calls come before returns, an unknown
// return before the death that bounds it, and every op gets Return > Call.
func TestStampOrder(t *testing.T) {
	lanes := map[int][]Record{
		1: acquireRecords(t, 1, 1, 100, 0, nil),
		2: acquireRecords(t, 2, 1, 101, 101, &models.LeaseAcquireResult{Kind: models.LeaseAcquireRefused,
			Reason: models.RefusalLifecycleBusy}),
	}
	history, err := BuildHistory(lanes, []Death{{Lane: 1, Ns: 101}})
	if err != nil {
		t.Fatal(err)
	}
	if len(history.Operations) != 3 || history.Unknown != 1 || history.Completed != 1 {
		t.Fatalf("history %+v", history)
	}
	death := history.Operations[2]
	for _, op := range history.Operations[:2] {
		if op.Return <= op.Call || op.Return >= death.Call {
			t.Fatalf("op %+v not inside (call, death %d)", op, death.Call)
		}
	}
	if err := models.ValidateLeaseHistory(history.Operations); err != nil {
		t.Fatal(err)
	}
}

// TestReadLogIgnoresACutLastLine: a SIGKILL during a write leaves a line
// without its newline; it is not an operation. A malformed whole line is an
// error.
func TestReadLogIgnoresACutLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	log, err := CreateLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Append(Record{Lane: 1, Seq: 1, Phase: PhaseCall, Op: OpInspect, Ns: 5}); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteString(`{"worker":0,"lane":1,"seq":2,"pha`); err != nil {
		t.Fatal(err)
	}
	file.Close()
	records, err := ReadLog(path)
	if err != nil || len(records) != 1 || CountCalls(records) != 1 {
		t.Fatalf("records %+v, err %v", records, err)
	}
	if err := os.WriteFile(path, []byte("{broken}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLog(path); err == nil {
		t.Fatal("a malformed complete line was accepted")
	}
}
