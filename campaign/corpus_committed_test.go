package campaign_test

import (
	"context"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
)

// TestCommittedCorpusReplaysClean: the guided corpus CI resumes
// (testdata/corpus, written by `leasesim merge --corpus testdata/corpus
// --minimize --entries-max 16 DIR`) loads for every engine, every entry
// replays without a finding on today's code (a failing one is a
// regression, reported by name), and it is a cover: no entry is redundant.
func TestCommittedCorpusReplaysClean(t *testing.T) {
	names := []string{"admission", "dirlease", "lease"}
	corpus, err := campaign.LoadCorpus("../testdata/corpus", names)
	require.NoError(t, err)
	o := campaign.Options{Catalog: engines, Engines: names, Workers: 2}
	_, covers, err := campaign.MinimizeCorpus(context.Background(), o, corpus, 0)
	require.NoError(t, err)
	for _, cover := range covers {
		require.Positive(t, cover.Entries, cover.Engine)
		require.Equal(t, cover.Entries, cover.Kept, "%s: the committed corpus has redundant entries; re-minimise it", cover.Engine)
		require.Positive(t, cover.Points, cover.Engine)
	}
}
