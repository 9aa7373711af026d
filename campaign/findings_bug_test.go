//go:build leasekit_bugs

package campaign_test

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
)

// openFindings holds shrunk failures of today's code that are not fixed
// yet (docs/THREAT-MODEL.md, "open findings"). They stay out of
// testdata/seeds, whose files must pass; this test, run with
// go test -tags leasekit_bugs ./campaign -run OpenFindings, fails until
// each is fixed, and a fixed one then moves to testdata/seeds.
const openFindings = "../testdata/findings"

func TestOpenFindingsPass(t *testing.T) {
	paths := seedFiles(t, openFindings)
	if len(paths) == 0 {
		t.Log("no open findings under " + openFindings)
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			file, err := campaign.ReadSeedFile(path)
			require.NoError(t, err)
			replay, err := engines.ReplayTwice(file.Spec)
			require.NoError(t, err)
			require.True(t, replay.Finding.OK(), "%s still fails: %s\nreplay: go run ./cmd/leasesim replay %s",
				path, replay.Finding.Message, strings.TrimPrefix(path, "../"))
		})
	}
}
