package campaign

import (
	"bytes"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// shardedRun runs o in n shards, round-trips each report through JSON as CI
// jobs do, and merges them.
func shardedRun(t *testing.T, o Options, n int) *Report {
	t.Helper()
	var parts []*Report
	for shard := range n {
		o.Shard, o.Shards = shard, n
		var buffer bytes.Buffer
		require.NoError(t, runCampaign(t, o).WriteJSON(&buffer))
		decoded, err := ReadReport(&buffer)
		require.NoError(t, err)
		parts = append(parts, decoded)
	}
	merged, err := Merge(parts)
	require.NoError(t, err)
	return merged
}

// TestResumeContinuesWhereTheMergedReportStopped: a night of 40 indices in
// 2 shards, then a night resumed from its merged report with 50 indices in 3
// shards, run exactly the runs of one 90-index campaign.
func TestResumeContinuesWhereTheMergedReportStopped(t *testing.T) {
	o := Options{Catalog: testCatalog, Engines: []string{"toylock", "toylock-buggy"}, Seeds: 90, BaseSeed: 5, Faults: swarm(t), Workers: 2}
	whole := runCampaign(t, o)
	require.Equal(t, 0, whole.FirstIndex)
	require.Equal(t, 90, whole.NextIndex)

	o.Seeds = 40
	night1 := shardedRun(t, o, 2)
	require.Equal(t, 40, night1.NextIndex)
	o.Seeds = 50
	require.NoError(t, o.Resume(night1))
	require.Equal(t, 40, o.FirstIndex)
	night2 := shardedRun(t, o, 3)
	require.Equal(t, 40, night2.FirstIndex)
	require.Equal(t, 90, night2.NextIndex)

	require.Equal(t, whole.Runs, night1.Runs+night2.Runs)
	require.Equal(t, whole.Steps, night1.Steps+night2.Steps, "the same runs: the same steps")
	for outcome, count := range whole.Outcomes {
		require.Equal(t, count, night1.Outcomes[outcome]+night2.Outcomes[outcome], outcome)
	}
	for probe, count := range whole.Probes {
		require.Equal(t, count, night1.Probes[probe]+night2.Probes[probe], probe)
	}
	require.Equal(t, whole.Failures, append(append([]Failure{}, night1.Failures...), night2.Failures...))
	for _, f := range night2.Failures {
		require.GreaterOrEqual(t, f.Index, 40, "the resumed night reruns no index")
	}
}

func TestResumeRefusesAnotherCampaign(t *testing.T) {
	o := Options{Catalog: testCatalog, Engines: []string{"toylock"}, Seeds: 12, BaseSeed: 1, Faults: swarm(t), Workers: 1}
	merged := shardedRun(t, o, 2)
	o.Shard, o.Shards = 0, 2
	half := runCampaign(t, o)
	o.Shard, o.Shards = 0, 1
	other := func(change func(o *Options)) Options {
		c := o
		change(&c)
		return c
	}
	older := *merged
	older.Version = 1
	for _, c := range []struct {
		name    string
		options Options
		report  *Report
		want    string
	}{
		{"other faults", other(func(o *Options) { o.Faults = FaultSetting{} }), merged, "another campaign"},
		{"other engines", other(func(o *Options) { o.Engines = []string{"toylock", "toylock-buggy"} }), merged, "another campaign"},
		{"other base seed", other(func(o *Options) { o.BaseSeed = 2 }), merged, "another campaign"},
		{"other knob", other(func(o *Options) { o.StepsMax = 99 }), merged, "another campaign"},
		{"one shard of two", o, half, "merge every shard's report first"},
		{"an older report", o, &older, "version 1"},
	} {
		err := c.options.Resume(c.report)
		require.ErrorContains(t, err, c.want, c.name)
		var usage *UsageError
		require.ErrorAs(t, err, &usage, c.name)
	}
	require.NoError(t, o.Resume(merged))
	require.Equal(t, 12, o.FirstIndex)
}

// A campaign cut short (by --duration or a signal) stops at the first job
// not taken: NextIndex is the index of that job's row, in the shard's own
// index sequence.
func TestNextIndexIsTheFirstIndexNotRunOnEveryEngine(t *testing.T) {
	for _, c := range []struct {
		first, shard, shards, engines, seeds, done, want int
	}{
		{0, 0, 1, 1, 0, 7, 7},
		{0, 0, 1, 3, 0, 7, 2},   // job 7 is index 2's second engine
		{0, 1, 4, 1, 0, 0, 1},   // shard 1's first index
		{0, 1, 4, 2, 0, 5, 9},   // indices 1, 5 done; job 5 is index 9's second engine
		{10, 1, 4, 1, 0, 0, 13}, // resumed at 10: shard 1's first index from 10 is 13
		{10, 2, 4, 1, 0, 2, 18},
		{10, 1, 4, 1, 4, 1, 14}, // 10..13: shard 1 has 13 only; done: the end
		{0, 1, 2, 1, 1, 0, 1},   // a shard with no index at all
	} {
		o := Options{Engines: make([]string, c.engines), FirstIndex: c.first, Shard: c.shard, Shards: c.shards, Seeds: c.seeds}
		require.Equal(t, c.want, o.nextIndex(c.done), "%+v", c)
		for k := 0; ; k++ {
			j, ok := o.jobAt(k)
			if !ok || j.index >= c.want {
				break
			}
			require.Equal(t, c.shard, j.index%c.shards)
			require.GreaterOrEqual(t, j.index, c.first)
			require.Less(t, k, c.done, "job %d (index %d) is below next_index %d, so it is done", k, j.index, c.want)
		}
	}
}

// Merged shards cover every index below the least of their next indices.
func TestMergeKeepsTheLeastNextIndex(t *testing.T) {
	o := Options{Catalog: testCatalog, Engines: []string{"toylock"}, Seeds: 10, BaseSeed: 1, Faults: swarm(t), Workers: 1, Shards: 2}
	a := runCampaign(t, o)
	o.Shard = 1
	b := runCampaign(t, o)
	a.NextIndex = 6 // as if shard 0 were cut short after indices 0, 2, 4
	for _, order := range [][]*Report{{a, b}, {b, a}} {
		merged, err := Merge(order)
		require.NoError(t, err)
		require.Equal(t, 6, merged.NextIndex)
	}
}
