package realstress

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasekit/leasekit/internal/longtest"
	"github.com/leasekit/leasekit/models"
)

// killedHistoryArchive is the work directory (logs and deaths) of
// `leasereal stress --engine lease --procs 8 --ops 1500 --kill-rate 20` on a
// btrfs loop device: ops are slow there, so 713 kills left 610 of the 1500
// operations with unknown outcomes, up to eight of them open at once. A
// search over porcupine's power sets found no verdict for it within two
// minutes; the search over single states decides it. It is one gzipped JSON
// object, each file's path under the work directory to its contents (a tar
// archive would build archive/tar, os/user and cgo into the test command for
// this one test).
const killedHistoryArchive = "testdata/btrfs-lease-killed.json.gz"

// readKilledHistory unpacks the archive into a temp dir and merges it.
func readKilledHistory(t *testing.T) History {
	t.Helper()
	dir := t.TempDir()
	archive, err := os.Open(killedHistoryArchive)
	if err != nil {
		t.Fatal(err)
	}
	defer archive.Close()
	unzipped, err := gzip.NewReader(archive)
	if err != nil {
		t.Fatal(err)
	}
	var files map[string]string
	if err := json.NewDecoder(unzipped).Decode(&files); err != nil {
		t.Fatal(err)
	}
	for name, contents := range files {
		path := filepath.Join(dir, filepath.Clean("/"+name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(contents), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	history, err := ReadHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := models.ValidateLeaseHistory(history.Operations); err != nil {
		t.Fatal(err)
	}
	return history
}

// TestCheckSegmentedDecidesAHeavilyKilledHistory: the exact search says the
// real btrfs history is ok, and CheckSegmented says the same history with
// one inspect that reports an owner nobody ever was is illegal, with the
// report naming that segment.
func TestCheckSegmentedDecidesAHeavilyKilledHistory(t *testing.T) {
	longtest.Require(t, "checks an archived 10,000-operation history twice (about 10 s)")
	history := readKilledHistory(t)
	if history.Unknown < 500 || history.Deaths < 500 {
		t.Fatalf("the archive has %d unknown outcomes and %d deaths; it was kept for its many", history.Unknown, history.Deaths)
	}
	model := models.LeaseNondeterministicModel()
	clean := checkExact(model, history.Operations, 1, time.Now().Add(10*time.Minute))
	if clean.Result != porcupine.Ok || clean.Segments < 100 {
		t.Fatalf("the real history: %v in %d segments", clean.Result, clean.Segments)
	}
	t.Logf("%d operations, %d segments, %d configurations", len(history.Operations), clean.Segments, clean.Configurations)

	planted := append([]porcupine.Operation(nil), history.Operations...)
	index := plantPhantomOwner(planted)
	if index < 0 {
		t.Fatal("the history has no completed inspect to plant in")
	}
	got := CheckSegmented(model, planted, 1, 20*time.Second) // the fast pass gives up after 5 s
	if got.Witness {
		t.Fatal("the fast pass accepted a phantom owner")
	}
	if got.Result != porcupine.Illegal {
		t.Fatalf("a phantom owner in operation %d: %v", index, got.Result)
	}
	found := false
	for _, op := range got.Failed {
		found = found || op.Output == planted[index].Output
	}
	if !found {
		t.Fatalf("the failed segment does not hold the phantom owner's inspect")
	}
}

// plantPhantomOwner rewrites a completed inspect in the middle of ops to
// report an owner no acquire ever made, and returns its index (-1: none).
func plantPhantomOwner(ops []porcupine.Operation) int {
	for i := len(ops) / 2; i < len(ops); i++ {
		if _, inspect := ops[i].Input.(models.LeaseInspect); inspect {
			if _, completed := ops[i].Output.(models.LeaseInspectResult); completed {
				ops[i].Output = models.LeaseInspectResult{Kind: models.LeaseOwned, Generation: "phantom", Session: "nobody", Epoch: 1}
				return i
			}
		}
	}
	return -1
}
