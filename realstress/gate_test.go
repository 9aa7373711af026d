package realstress

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// absentInspector reports every PID absent: the gate must then wait for
// the deaths of the incarnations that had it.
type absentInspector struct{}

func (absentInspector) Current() (lease.ProcessIdentity, error) { return lease.ProcessIdentity{}, nil }
func (absentInspector) Inspect(int) lease.Inspection {
	return lease.Inspection{Kind: lease.InspectAbsent}
}

// TestDeathGateOpensOnlyOnAPublishedDeath: the gate answers at once when
// the death is published, waits for a death published later, and stays
// shut on a deaths file it cannot decode (opening on an error would let a
// reclaim precede the death's stamp), saying so when it gives up at its
// bound.
func TestDeathGateOpensOnlyOnAPublishedDeath(t *testing.T) {
	const pid = 4242
	for _, tc := range []struct {
		name       string
		deaths     string // the deaths file at the start ("" = none)
		publishAt  time.Duration
		wantWait   bool   // the wait lasts until the bound
		wantReport string // in what the gate says ("" = nothing)
	}{
		{name: "published", deaths: `{"lane":1,"pid":4242,"ns":5,"killed":false}` + "\n"},
		{name: "published during the wait", publishAt: 30 * time.Millisecond},
		{name: "never published", wantWait: true, wantReport: "1 death(s) still unpublished"},
		{name: "undecodable deaths file", deaths: "{not json}\n", wantWait: true, wantReport: "last error: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			spawns, deaths := filepath.Join(dir, "spawns.jsonl"), filepath.Join(dir, "deaths.jsonl")
			if err := appendJSONLine(spawns, Spawn{Lane: 1, PID: pid, StartTime: "7"}); err != nil {
				t.Fatal(err)
			}
			if tc.deaths != "" {
				if err := os.WriteFile(deaths, []byte(tc.deaths), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.publishAt > 0 {
				timer := time.AfterFunc(tc.publishAt, func() {
					_ = appendJSONLine(deaths, Death{Lane: 1, PID: pid, Ns: 5})
				})
				defer timer.Stop()
			}
			const waitMax = 300 * time.Millisecond
			var said strings.Builder
			gate := deathGate{inner: absentInspector{}, spawnsPath: spawns, deathsPath: deaths, waitMax: waitMax, report: &said}
			started := time.Now()
			if got := gate.Inspect(pid); got.Kind != lease.InspectAbsent {
				t.Fatalf("the gate changed the inspection: %+v", got)
			}
			waited := time.Since(started)
			if tc.wantWait != (waited >= waitMax) || waited < tc.publishAt {
				t.Fatalf("waited %v (bound %v, publish at %v), want the whole bound: %v", waited, waitMax, tc.publishAt, tc.wantWait)
			}
			if tc.wantReport == "" && said.Len() > 0 || !strings.Contains(said.String(), tc.wantReport) {
				t.Fatalf("the gate said %q, want %q", said.String(), tc.wantReport)
			}
		})
	}
}
