// Package examplekit holds what the examples' tests share: the assertion
// that the harness finds a lock broken with a named hazard (RequireFinds),
// the short campaign the runnable Examples print (Findings), and
// leasekit's lease in place of the lock on the same workload (LeaseSpec).
package examplekit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simtest"
)

// RequireFinds runs a campaign of engine and requires a failure whose class
// contains hazard, shrunk into a seed file that replays to the same class.
func RequireFinds(t *testing.T, engine *campaign.Engine, o simtest.Options, hazard string) simtest.Failure {
	t.Helper()
	o.SeedDir = t.TempDir()
	failures, err := simtest.Find(engine, o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range failures {
		if !strings.Contains(f.Class, hazard) {
			continue
		}
		file, err := campaign.ReadSeedFile(f.SeedFile)
		if err != nil {
			t.Fatal(err)
		}
		_, finding, _, err := campaign.NewCatalog(engine).Execute(file.Spec, nil, false)
		if err != nil || finding.Class != f.Class || file.Expect.Class != f.Class {
			t.Fatalf("seed file %s replays to %v (err %v), stored %v; want %s", f.SeedFile, finding, err, file.Expect, f.Class)
		}
		t.Logf("found %s: %s (%d choices)", f.Class, f.Message, f.Choices)
		return f
	}
	t.Fatalf("no failure names %q; found %d other classes: %v", hazard, len(failures), failures)
	return simtest.Failure{}
}

// LeaseSpec is spec with leasekit's lease in place of the lock under test.
func LeaseSpec(spec lockwork.Spec) lockwork.Spec {
	spec.Name += "-lease"
	spec.Hazards = nil
	spec.Record = nil            // the lease keeps its own record
	spec.DescriptorLocks = false // the lease's state is on disk
	spec.Setup = nil
	spec.PerRun = nil
	if spec.Dir == "" {
		spec.Dir = lockwork.DirDefault
	}
	spec.Open = func(p *sim.Proc) lockwork.Lock { return lockwork.LeaseLock(p, spec.Dir) }
	return spec
}

// Findings runs a campaign of engine as the examples' runnable Examples
// do (seeds 1..seeds, one worker, swarm faults) and returns "outcome
// class" for each first failure whose class contains one of hazards, in
// the report's order: what an Example prints.
func Findings(engine *campaign.Engine, seeds int, hazards ...string) ([]string, error) {
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog: campaign.NewCatalog(engine), Engines: []string{engine.Name},
		Seeds: seeds, BaseSeed: 1, Workers: 1, Faults: campaign.FaultSetting{Swarm: true},
	})
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, failure := range report.FirstFailures() {
		if slices.ContainsFunc(hazards, func(h string) bool { return strings.Contains(failure.Class, h) }) {
			lines = append(lines, fmt.Sprint(failure.Outcome, " ", failure.Class))
		}
	}
	return lines, nil
}
