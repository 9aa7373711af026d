package workload_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/simtest"
	"github.com/leasekit/leasekit/workload"
)

// The fuzz targets of leasekit's engines: go test -fuzz=FuzzLease (or
// FuzzAdmission, FuzzDirlease) hands the simulator decision streams chosen
// by Go's coverage-guided fuzzer (simtest.FuzzWith: 8 bytes of seed, then
// one byte per decision), starting from campaign seeds' runs. A crasher's
// rerun (go test ./workload -run=FuzzLease/<input>) shrinks it into a seed
// file under the repository's testdata/seeds/<engine>/, a regression seed
// that leasesim replay, and the seed-file tests, replay; the failure names
// the leasesim replay command.

// repoSeeds is the repository's seed directory, seen from this package.
const repoSeeds = "../testdata/seeds"

func FuzzLease(f *testing.F)     { fuzzEngine(f, "lease") }
func FuzzAdmission(f *testing.F) { fuzzEngine(f, "admission") }
func FuzzDirlease(f *testing.F)  { fuzzEngine(f, "dirlease") }

func fuzzEngine(f *testing.F, name string) {
	engine, err := workload.Catalog().Lookup(name)
	if err != nil {
		f.Fatal(err)
	}
	simtest.FuzzWith(f, engine, simtest.Options{SeedDir: repoSeeds, ReplayCommand: leasesimReplay})
}

// leasesimReplay is the command replaying a seed file from the module root.
func leasesimReplay(path string) string {
	return campaign.DefaultReplayCommand(strings.TrimPrefix(filepath.ToSlash(path), "../"))
}

func TestLeasesimReplayNamesPathFromModuleRoot(t *testing.T) {
	if got, want := leasesimReplay(filepath.Join(repoSeeds, "lease", "violation-1.seed")),
		"go run ./cmd/leasesim replay testdata/seeds/lease/violation-1.seed"; got != want {
		t.Fatalf("leasesimReplay = %q, want %q", got, want)
	}
}
