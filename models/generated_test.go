package models

import (
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// generatedTimeout bounds one check of a generated history. Each takes
// milliseconds; hitting the bound fails the test as a performance bug.
const generatedTimeout = 10 * time.Second

// TestLeaseGeneratedCorrectHistoriesPass guards against false alarms: a
// correct reference lease, with crashes, reboots, PID reuse, corruption and
// unknown outcomes that did and did not take effect, must always check Ok.
func TestLeaseGeneratedCorrectHistoriesPass(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		ops := generateLeaseHistory(leaseWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3})
		if got, _ := CheckLease(ops, generatedTimeout); got != porcupine.Ok {
			t.Fatalf("seed %d: a correct history of %d ops checked %s", seed, len(ops), got)
		}
	}
}

// TestLeaseGeneratedTwoOwnersCaught plants the two-owners bug and requires
// the model to catch it in most runs where it fired (a planted grant can be
// hidden when the displaced owner's own release was open at the time).
func TestLeaseGeneratedTwoOwnersCaught(t *testing.T) {
	fired, caught := 0, 0
	for seed := int64(1); seed <= 30; seed++ {
		ops, bugs := generateLeaseHistoryCountingBugs(leaseWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3, bugReclaimLive: true})
		if bugs == 0 {
			continue
		}
		fired++
		if got, _ := CheckLease(ops, generatedTimeout); got == porcupine.Illegal {
			caught++
		}
	}
	if fired < 10 || caught*10 < fired*9 {
		t.Fatalf("planted bug fired in %d runs, caught in %d; want it caught in at least 90%%", fired, caught)
	}
	t.Logf("planted two-owners bug: fired in %d runs, caught in %d", fired, caught)
}

// benchmarkChecks reports p50 and p99 of the wall time to check one
// history, and the same over each history's fastest run (p50-min, p99-min):
// the machine is shared, and the fastest of several runs shows the model's
// own cost without the time other processes took from it.
func benchmarkChecks(b *testing.B, histories [][]porcupine.Operation, checkFn func([]porcupine.Operation, time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo)) {
	b.Helper()
	durations := make([]time.Duration, 0, b.N)
	fastest := make([]time.Duration, len(histories))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ops := histories[i%len(histories)]
		start := time.Now()
		result, _ := checkFn(ops, generatedTimeout)
		took := time.Since(start)
		durations = append(durations, took)
		if fastest[i%len(histories)] == 0 || took < fastest[i%len(histories)] {
			fastest[i%len(histories)] = took
		}
		if result != porcupine.Ok {
			b.Fatalf("history %d checked %s", i%len(histories), result)
		}
	}
	b.StopTimer()
	reportPercentiles(b, durations, "")
	if b.N >= len(histories) {
		reportPercentiles(b, fastest, "-min")
	}
}

func reportPercentiles(b *testing.B, durations []time.Duration, suffix string) {
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "p50"+suffix+"-ms")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds())/1000, "p99"+suffix+"-ms")
}

func BenchmarkCheckLease(b *testing.B) {
	var histories [][]porcupine.Operation
	for seed := int64(1); seed <= 50; seed++ {
		histories = append(histories, generateLeaseHistory(leaseWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3}))
	}
	benchmarkChecks(b, histories, CheckLease)
}

func TestAdmissionGeneratedCorrectHistoriesPass(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		ops, _ := generateAdmissionHistory(admissionWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3})
		if got, _ := CheckAdmission(ops, generatedTimeout); got != porcupine.Ok {
			t.Fatalf("seed %d: a correct history of %d ops checked %s", seed, len(ops), got)
		}
	}
}

func TestAdmissionGeneratedStaleCASCaught(t *testing.T) {
	fired, caught := 0, 0
	for seed := int64(1); seed <= 30; seed++ {
		ops, bugs := generateAdmissionHistory(admissionWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3, bugStaleCAS: true})
		if bugs == 0 {
			continue
		}
		fired++
		if got, _ := CheckAdmission(ops, generatedTimeout); got == porcupine.Illegal {
			caught++
		}
	}
	if fired < 10 || caught*10 < fired*9 {
		t.Fatalf("planted stale CAS fired in %d runs, caught in %d; want it caught in at least 90%%", fired, caught)
	}
	t.Logf("planted stale CAS: fired in %d runs, caught in %d", fired, caught)
}

func BenchmarkCheckAdmission(b *testing.B) {
	var histories [][]porcupine.Operation
	for seed := int64(1); seed <= 50; seed++ {
		ops, _ := generateAdmissionHistory(admissionWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3})
		histories = append(histories, ops)
	}
	benchmarkChecks(b, histories, CheckAdmission)
}

func TestDirLeaseGeneratedCorrectHistoriesPass(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		ops, _ := generateDirHistory(dirWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3})
		if got, _ := CheckDirLease(ops, generatedTimeout); got != porcupine.Ok {
			t.Fatalf("seed %d: a correct history of %d ops checked %s", seed, len(ops), got)
		}
	}
}

func TestDirLeaseGeneratedLiveRemovalCaught(t *testing.T) {
	fired, caught := 0, 0
	for seed := int64(1); seed <= 30; seed++ {
		ops, bugs := generateDirHistory(dirWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3, bugRecoverLive: true})
		if bugs == 0 {
			continue
		}
		fired++
		if got, _ := CheckDirLease(ops, generatedTimeout); got == porcupine.Illegal {
			caught++
		}
	}
	if fired < 10 || caught*10 < fired*8 {
		t.Fatalf("planted live removal fired in %d runs, caught in %d; want it caught in at least 80%%", fired, caught)
	}
	t.Logf("planted live removal: fired in %d runs, caught in %d", fired, caught)
}

func BenchmarkCheckDirLease(b *testing.B) {
	var histories [][]porcupine.Operation
	for seed := int64(1); seed <= 50; seed++ {
		ops, _ := generateDirHistory(dirWorkload{seed: seed, clients: 6, ops: 200, crashPercent: 3})
		histories = append(histories, ops)
	}
	benchmarkChecks(b, histories, CheckDirLease)
}

// TestTimeoutIsUnknownForEveryModel: a check cut short by its timeout says
// Unknown, never Ok (CHECKING.md: a timeout is a failure, not a pass).
func TestTimeoutIsUnknownForEveryModel(t *testing.T) {
	admission, _ := generateAdmissionHistory(admissionWorkload{seed: 7, clients: 40, ops: 3000, crashPercent: 1})
	dirlease, _ := generateDirHistory(dirWorkload{seed: 7, clients: 40, ops: 3000, crashPercent: 1})
	cases := []struct {
		name  string
		check func() porcupine.CheckResult
	}{
		{"admission", func() porcupine.CheckResult { r, _ := CheckAdmission(admission, time.Microsecond); return r }},
		{"dirlease", func() porcupine.CheckResult { r, _ := CheckDirLease(dirlease, time.Microsecond); return r }},
	}
	for _, tc := range cases {
		if got := tc.check(); got != porcupine.Unknown {
			t.Errorf("%s: a 1µs check of a 40-client history gave %s, want Unknown", tc.name, got)
		}
	}
}
