package campaign_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

// reseed re-derives drifted regression seeds instead of failing:
// go test ./campaign -run Seeds -reseed (see docs/LEASESIM.md).
var reseed = flag.Bool("reseed", false, "re-derive drifted regression seed files in place (leasesim reseed)")

// TestRegressionSeedsHaveNotDrifted replays every regression seed and
// fails when its run is not the recorded one (another step count or final
// hash): the scenario it promised to keep tested moved, and nothing else
// would say so. A file without provenance fails too (its drift cannot be
// told); a file marked pinned=true is only reported.
func TestRegressionSeedsHaveNotDrifted(t *testing.T) {
	paths := seedFiles(t, regressionSeeds)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			file, err := campaign.ReadSeedFile(path)
			require.NoError(t, err)
			drift, err := engines.CheckDrift(file)
			require.NoError(t, err)
			rel := strings.TrimPrefix(path, "../")
			if drift.Known && !drift.FromSummary && !drift.Drifted && file.Spec.Keys != nil {
				return
			}
			if file.Pinned {
				t.Logf("%s (pinned input, not failed): %s", rel, drift)
				return
			}
			if *reseed {
				ok := campaign.Finding{Outcome: sim.OutcomeOK}
				written, result, err := engines.ReseedFile(path, campaign.ReseedOptions{Want: &ok, Command: reseededReplay})
				require.NoError(t, err)
				t.Logf("reseeded %s -> %s: %s; lost probes %v", rel, written, result.How, result.ProbesLost)
				return
			}
			if file.Spec.Keys == nil {
				t.Errorf("%s: a single-stream decision list (no stream_keys): any extra draw anywhere moves the whole run", rel)
			}
			t.Errorf("%s: %s\nre-derive it: %s (or: go test ./campaign -run Seeds -reseed)", rel, drift, campaign.ReseedCommand(rel))
		})
	}
}

func reseededReplay(path string) string {
	return campaign.DefaultReplayCommand(strings.TrimPrefix(path, "../"))
}

// TestDriftIsReportedForAChangedRun rewrites a seed file's recorded run
// (what a code change does to its replay) and requires the drift to be
// told, with the commit it was recorded at, and a version 1 file's drift
// to be told from its summary lines.
func TestDriftIsReportedForAChangedRun(t *testing.T) {
	paths := seedFiles(t, regressionSeeds)
	require.NotEmpty(t, paths)
	file, err := campaign.ReadSeedFile(paths[0])
	require.NoError(t, err)
	require.NotNil(t, file.Provenance, "%s has provenance", paths[0])
	clean, err := engines.CheckDrift(file)
	require.NoError(t, err)
	require.False(t, clean.Drifted, clean.String())

	moved := file
	p := *file.Provenance
	p.Steps, p.Hash, p.Commit = p.Steps+7, p.Hash^1, "0123abc"
	moved.Provenance = &p
	drift, err := engines.CheckDrift(moved)
	require.NoError(t, err)
	require.True(t, drift.Drifted)
	require.Contains(t, drift.String(), "final hash differs")
	require.Contains(t, drift.String(), "changed since 0123abc")
	var explained bytes.Buffer
	require.NoError(t, engines.Explain(&explained, moved, 3))
	require.Contains(t, explained.String(), "drift:    DRIFT: replayed ")
	require.Contains(t, explained.String(), "recorded at commit 0123abc")

	v1 := campaign.SeedFile{Spec: file.Spec, Expect: file.Expect,
		Summary: []string{"outcome=ok step=-1 steps=9999 processes=1 operations=1 hash=00000000000000ff"}}
	parsed, err := campaign.ParseSeedFile(v1.Format())
	require.NoError(t, err)
	require.Nil(t, parsed.Provenance)
	drift, err = engines.CheckDrift(parsed)
	require.NoError(t, err)
	require.True(t, drift.Known && drift.FromSummary && drift.Drifted, drift.String())
	require.Contains(t, drift.String(), "of 9999 recorded steps")
}

// TestReseedRewritesADriftedFile reseeds a copy of a regression seed whose
// recorded list was damaged (a drift) and requires the rewritten file to
// replay without drift, to find what it recorded, and to say what changed.
func TestReseedRewritesADriftedFile(t *testing.T) {
	paths := seedFiles(t, regressionSeeds)
	var source string
	for _, path := range paths {
		if strings.Contains(path, "/selftest/") {
			source = path
		}
	}
	require.NotEmpty(t, source, "a selftest regression seed")
	file, err := campaign.ReadSeedFile(source)
	require.NoError(t, err)
	file.Provenance.Hash ^= 1 // the recorded run is not today's: drifted
	dir := t.TempDir()
	path, err := campaign.WriteSeedFile(dir, file)
	require.NoError(t, err)
	written, result, err := engines.ReseedFile(path, campaign.ReseedOptions{})
	require.NoError(t, err)
	require.True(t, result.Before.Drifted)
	rewritten, err := campaign.ReadSeedFile(written)
	require.NoError(t, err)
	drift, err := engines.CheckDrift(rewritten)
	require.NoError(t, err)
	require.False(t, drift.Drifted, drift.String())
	require.True(t, drift.FindingNow.Same(file.Expect))
	require.Empty(t, drift.ProbesLost)
	require.Contains(t, strings.Join(rewritten.Summary, "\n"), "reseeded at ")
	entries, err := os.ReadDir(filepath.Dir(written))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the drifted file was replaced")
}

// A single-stream list (a version 1 file) cannot be split into streams:
// reseeding searches keyed runs of its knobs and writes a keyed file that
// finds what the old one recorded.
func TestReseedConvertsASingleStreamFile(t *testing.T) {
	var source string
	for _, path := range seedFiles(t, mutantSeeds) {
		source = path
	}
	require.NotEmpty(t, source)
	file, err := campaign.ReadSeedFile(source)
	require.NoError(t, err)
	old := campaign.SeedFile{Spec: file.Spec, Expect: campaign.Passing}
	old.Spec.Tags, old.Spec.Keys = nil, nil
	result, err := engines.Reseed(old, campaign.ReseedOptions{})
	require.NoError(t, err)
	require.NotNil(t, result.File.Spec.Keys, result.How)
	require.NotNil(t, result.File.Provenance)
	drift, err := engines.CheckDrift(result.File)
	require.NoError(t, err)
	require.False(t, drift.Drifted, drift.String())
	require.True(t, drift.FindingNow.OK())
}
