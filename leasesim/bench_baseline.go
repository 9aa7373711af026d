package leasesim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/leasekit/leasekit/campaign"
)

// benchBaseline is `bench --baseline BIN`: rounds of this binary's bench and
// BIN's, back to back in one run, printed side by side as one Markdown
// table (docs/BENCH.md pastes it). Each side runs as its own process, so
// neither inherits the other's heap or profile.
func benchBaseline(ctx context.Context, baseline string, rounds, seeds int, engines string, stdout io.Writer) error {
	current, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"bench", "--json", "--workers", "1", "--repeat", "1", "--rounds", "2",
		"--seeds", strconv.Itoa(seeds), "--engine", engines}
	comparison := &campaign.BenchComparison{Baseline: baseline, Current: "leasesim (this build)"}
	for range rounds {
		base, err := benchReportOf(ctx, baseline, args)
		if err != nil {
			return err
		}
		now, err := benchReportOf(ctx, current, args)
		if err != nil {
			return err
		}
		comparison.Rounds = append(comparison.Rounds, [2]*campaign.BenchReport{base, now})
	}
	return comparison.WriteMarkdown(stdout)
}

// benchReportOf runs binary with args and decodes the JSON report it prints.
func benchReportOf(ctx context.Context, binary string, args []string) (*campaign.BenchReport, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("bench --baseline: %s: %w: %s", binary, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var report campaign.BenchReport
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		return nil, fmt.Errorf("bench --baseline: %s printed no report: %w", binary, err)
	}
	return &report, nil
}
