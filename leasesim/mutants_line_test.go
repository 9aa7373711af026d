package leasesim

import (
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
)

// TestMutantLineSaysWhatWasSkipped: a hunt that skipped detections the
// real build shares says so, with their seeds, whether it then found the
// mutant or gave up; a plain row says nothing of it.
func TestMutantLineSaysWhatWasSkipped(t *testing.T) {
	for _, c := range []struct {
		name string
		row  MutantRow
		want string
		not  string
	}{
		{"plain", MutantRow{Name: "m", Hunt: campaign.HuntResult{Found: true, Seeds: 3}}, "found=true seeds=3", "skipped"},
		{"found after a skip", MutantRow{Name: "m", Confounded: 1, ConfoundedSeeds: []uint64{64208},
			Hunt: campaign.HuntResult{Found: true, Seeds: 67002}}, "found=true seeds=67002", ""},
		{"gave up", MutantRow{Name: "m", Confounded: 4, ConfoundedSeeds: []uint64{1, 2, 3, 64208},
			Hunt: campaign.HuntResult{Seeds: 64208, Stopped: "gave up after 4 detections the real build also fails"}},
			"skipped 4 detection(s) the real build also fails, seeds [1 2 3 64208]", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			line := mutantLine(c.row)
			require.Contains(t, line, c.want)
			if c.row.Confounded > 0 {
				require.Contains(t, line, "rerun them on the real build")
			}
			if c.not != "" {
				require.NotContains(t, line, c.not)
			}
		})
	}
}
