package campaign

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Knobs renders the options that decide a run from its seed (scheduler, PCT
// depth, step budget, fault setting, knob overrides) as one canonical line.
// Engines and the base seed are compared separately.
func (o *Options) Knobs() string {
	fields := []string{"scheduler=" + o.Scheduler, "pct_depth=" + strconv.Itoa(o.PCTDepth),
		"steps_max=" + strconv.Itoa(o.StepsMax), "faults=" + o.Faults.canonical()}
	names := make([]string, 0, len(o.Params))
	for name := range o.Params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fields = append(fields, fmt.Sprintf("param.%s=%d", name, o.Params[name]))
	}
	return strings.Join(fields, " ")
}

// canonical renders a fault setting as ParseFaultSetting reads it, overrides
// sorted: "swarm,crash=0", "none".
func (f FaultSetting) canonical() string {
	var fields []string
	if f.Swarm {
		fields = append(fields, "swarm")
	}
	names := make([]string, 0, len(f.Overrides))
	for name := range f.Overrides {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fields = append(fields, name+"="+strconv.FormatFloat(f.Overrides[name], 'g', -1, 64))
	}
	if len(fields) == 0 {
		return "none"
	}
	return strings.Join(fields, ",")
}

// sameCampaign reports whether two reports are of one campaign: engines,
// base seed and knobs.
func sameCampaign(a, b *Report) bool {
	return strings.Join(a.Engines, ",") == strings.Join(b.Engines, ",") && a.BaseSeed == b.BaseSeed && a.Campaign == b.Campaign
}

// Resume makes the options continue the campaign report covers: its first
// index becomes report.NextIndex, so the campaign runs the next o.Seeds
// indices. It refuses a report of another campaign (engines, base seed,
// knobs: the options must be the ones the report was run with) and a report
// that does not cover every shard of its shard count (merge them first: a
// missing shard's indices were never run).
func (o *Options) Resume(report *Report) error {
	if report.Version != ReportVersion {
		return &UsageError{Message: fmt.Sprintf("--resume: the report has version %d, want %d (a report of an older leasesim has no next_index)",
			report.Version, ReportVersion)}
	}
	mine := newReport(*o)
	if !sameCampaign(report, mine) {
		return &UsageError{Message: fmt.Sprintf("--resume: the report is of another campaign: engines %s, base seed %d, %s; this run: engines %s, base seed %d, %s",
			strings.Join(report.Engines, ","), report.BaseSeed, report.Campaign, strings.Join(mine.Engines, ","), mine.BaseSeed, mine.Campaign)}
	}
	if err := coversEveryShard(report.Shards); err != nil {
		return err
	}
	if report.NextIndex < report.FirstIndex {
		return &UsageError{Message: fmt.Sprintf("--resume: next_index %d is below first_index %d", report.NextIndex, report.FirstIndex)}
	}
	o.FirstIndex = report.NextIndex
	return nil
}

// coversEveryShard checks that shards are exactly 0/n .. n-1/n for one n.
func coversEveryShard(shards []string) error {
	seen := map[int]bool{}
	count := 0
	for _, shard := range shards {
		i, n, err := parseShardName(shard)
		if err != nil || (count != 0 && n != count) || seen[i] {
			return &UsageError{Message: fmt.Sprintf("--resume: the report's shards %s are not one set i/n", strings.Join(shards, ","))}
		}
		count = n
		seen[i] = true
	}
	if count == 0 || len(seen) != count {
		return &UsageError{Message: fmt.Sprintf("--resume: the report covers shards %s of %d: merge every shard's report first (leasesim merge)",
			strings.Join(shards, ","), count)}
	}
	return nil
}

// parseShardName parses a report's "i/n".
func parseShardName(text string) (int, int, error) {
	a, b, ok := strings.Cut(text, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("shard %q is not i/n", text)
	}
	return i, n, nil
}
