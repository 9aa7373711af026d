package campaign

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// ReportVersion is the version of the JSON report document.
// Version 2 added first_index, next_index and campaign (Resume).
const ReportVersion = 2

// failuresMax bounds the failures a report keeps (every distinct class's
// first failure is always kept; this bounds repeats).
const failuresMax = 200

// Report is a campaign's result: counts, probes, failures. Its JSON form is
// what `leasesim run --json` prints and `leasesim merge` combines.
type Report struct {
	Version  int      `json:"version"`
	Engines  []string `json:"engines"`
	BaseSeed uint64   `json:"base_seed"`
	// Seeds is the campaign's planned index count (0: time-bounded).
	Seeds int `json:"seeds"`
	// FirstIndex is the campaign's first seed index (Options.FirstIndex).
	FirstIndex int `json:"first_index"`
	// NextIndex is where the report stopped: every index from FirstIndex
	// below it ran on every engine, in every shard the report covers. A
	// resumed campaign starts there (Options.Resume).
	NextIndex int `json:"next_index"`
	// Campaign is the knobs that decide a run from its seed (Options.Knobs):
	// reports merge, and a campaign resumes, only with the same.
	Campaign string `json:"campaign"`
	// Shards lists the shards covered ("0/4"), sorted.
	Shards []string `json:"shards"`
	// Runs counts finished runs (one per engine per index).
	Runs  int   `json:"runs"`
	Steps int64 `json:"steps"`
	// Outcomes counts runs per outcome name.
	Outcomes map[string]int `json:"outcomes"`
	// PerEngine counts runs per engine and outcome.
	PerEngine map[string]map[string]int `json:"per_engine"`
	// Probes sums each probe's count over all runs.
	Probes map[string]int `json:"probes"`
	// DeterminismChecked counts runs that were run twice.
	DeterminismChecked int `json:"determinism_checked"`
	// Failures are the failing runs, sorted by engine then index.
	Failures []Failure `json:"failures"`
	// FailuresDropped counts repeats beyond failuresMax.
	FailuresDropped int `json:"failures_dropped"`
	// ElapsedSeconds is the wall time (the maximum over merged shards).
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// Merged counts the reports merged into this one (1 for a campaign).
	Merged int `json:"merged"`
	// Coverage is a guided campaign's distinct coverage points per engine
	// (guided.go); absent for a random one.
	Coverage map[string]int `json:"coverage,omitempty"`
	// specs holds a guided campaign's failing inputs by engine/index (a
	// failure's seed alone does not rerun it); not in the JSON form.
	specs map[string]Spec
}

// Failure is one failing run.
type Failure struct {
	Engine  string `json:"engine"`
	Index   int    `json:"index"`
	Seed    uint64 `json:"seed"`
	Outcome string `json:"outcome"`
	Class   string `json:"class"`
	Message string `json:"message"`
	Steps   int    `json:"steps"`
	// Knobs are the spec's key=value lines (scheduler, faults, params).
	Knobs []string `json:"knobs"`
	// SeedFile is the shrunk seed file written for it, if any.
	SeedFile string `json:"seed_file,omitempty"`
	// DecisionsShrunk and ChoicesShrunk describe the shrunk decision list.
	DecisionsShrunk int `json:"decisions_shrunk,omitempty"`
	ChoicesShrunk   int `json:"choices_shrunk,omitempty"`
	// Replay is the paste-ready replay command.
	Replay string `json:"replay,omitempty"`
}

func newReport(o Options) *Report {
	return &Report{Version: ReportVersion, Engines: append([]string{}, o.Engines...), BaseSeed: o.BaseSeed,
		Seeds: o.Seeds, FirstIndex: o.FirstIndex, NextIndex: o.FirstIndex, Campaign: o.Knobs(), Shards: []string{fmt.Sprintf("%d/%d", o.Shard, o.Shards)},
		Outcomes: map[string]int{}, PerEngine: map[string]map[string]int{}, Probes: map[string]int{}, Failures: []Failure{},
		Merged: 1}
}

// add folds one run into the report.
func (r *Report) add(rec record) {
	r.Runs++
	r.Steps += int64(rec.result.Steps)
	outcome := rec.finding.Outcome.String()
	r.Outcomes[outcome]++
	if r.PerEngine[rec.job.engine] == nil {
		r.PerEngine[rec.job.engine] = map[string]int{}
	}
	r.PerEngine[rec.job.engine][outcome]++
	for name, count := range rec.result.Probes {
		r.Probes[name] += count
	}
	if rec.twice {
		r.DeterminismChecked++
	}
	if rec.finding.OK() {
		return
	}
	r.Failures = append(r.Failures, Failure{Engine: rec.job.engine, Index: rec.job.index, Seed: rec.spec.Seed,
		Outcome: outcome, Class: rec.finding.Class, Message: rec.finding.Message, Steps: rec.result.Steps,
		Knobs: rec.spec.knobLines()})
}

// finish sorts the failures and bounds them, keeping every class's first.
func (r *Report) finish() {
	sortFailures(r.Failures)
	if len(r.Failures) <= failuresMax {
		return
	}
	seen := map[string]bool{}
	kept := r.Failures[:0:0]
	for _, f := range r.Failures {
		key := f.Engine + "\x00" + f.Outcome + "\x00" + f.Class
		if !seen[key] || len(kept) < failuresMax {
			seen[key] = true
			kept = append(kept, f)
			continue
		}
		r.FailuresDropped++
	}
	r.Failures = kept
}

// FirstFailures returns the first failure (lowest index) of each distinct
// (engine, outcome, class), in report order.
func (r *Report) FirstFailures() []*Failure {
	seen := map[string]bool{}
	var firsts []*Failure
	for i := range r.Failures {
		f := &r.Failures[i]
		key := f.Engine + "\x00" + f.Outcome + "\x00" + f.Class
		if !seen[key] {
			seen[key] = true
			firsts = append(firsts, f)
		}
	}
	return firsts
}

// Is reports whether f is a failure of the same kind as finding (same
// outcome and class): the grouping of FirstFailures and Finding.Same.
func (f *Failure) Is(finding Finding) bool {
	return f.Outcome == finding.Outcome.String() && f.Class == finding.Class
}

// Merge combines shard reports: counts summed, probes unioned (counts
// summed), failures kept, NextIndex the least (every shard ran every index
// below it). Reports of different campaigns (engines, base seed, seed count,
// first index, knobs) do not merge.
func Merge(reports []*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, &UsageError{Message: "merge: no reports"}
	}
	first := reports[0]
	merged := &Report{Version: ReportVersion, Engines: first.Engines, BaseSeed: first.BaseSeed, Seeds: first.Seeds,
		FirstIndex: first.FirstIndex, NextIndex: first.NextIndex, Campaign: first.Campaign,
		Outcomes: map[string]int{}, PerEngine: map[string]map[string]int{}, Probes: map[string]int{}, Failures: []Failure{}}
	shards := map[string]bool{}
	for i, r := range reports {
		if r.Version != ReportVersion {
			return nil, &UsageError{Message: fmt.Sprintf("merge: report %d has version %d, want %d", i, r.Version, ReportVersion)}
		}
		if !sameCampaign(r, first) || r.Seeds != first.Seeds || r.FirstIndex != first.FirstIndex {
			return nil, &UsageError{Message: fmt.Sprintf("merge: report %d is of another campaign (engines %v, base seed %d, seeds %d, first index %d, %s)",
				i, r.Engines, r.BaseSeed, r.Seeds, r.FirstIndex, r.Campaign)}
		}
		merged.NextIndex = min(merged.NextIndex, r.NextIndex)
		for _, shard := range r.Shards {
			if shards[shard] {
				return nil, &UsageError{Message: fmt.Sprintf("merge: shard %s appears twice", shard)}
			}
			shards[shard] = true
			merged.Shards = append(merged.Shards, shard)
		}
		merged.Runs += r.Runs
		merged.Steps += r.Steps
		merged.DeterminismChecked += r.DeterminismChecked
		merged.FailuresDropped += r.FailuresDropped
		merged.Merged += max(r.Merged, 1)
		merged.ElapsedSeconds = max(merged.ElapsedSeconds, r.ElapsedSeconds)
		for k, v := range r.Outcomes {
			merged.Outcomes[k] += v
		}
		for engine, counts := range r.PerEngine {
			if merged.PerEngine[engine] == nil {
				merged.PerEngine[engine] = map[string]int{}
			}
			for k, v := range counts {
				merged.PerEngine[engine][k] += v
			}
		}
		for k, v := range r.Probes {
			merged.Probes[k] += v
		}
		merged.Failures = append(merged.Failures, r.Failures...)
	}
	sort.Strings(merged.Shards)
	merged.finish()
	return merged, nil
}

// ReadReport decodes a JSON report.
func ReadReport(r io.Reader) (*Report, error) {
	decoder := json.NewDecoder(r)
	decoder.DisallowUnknownFields()
	var report Report
	if err := decoder.Decode(&report); err != nil {
		return nil, &UsageError{Message: fmt.Sprintf("report: %v", err)}
	}
	return &report, nil
}

// WriteJSON writes the report as indented JSON (map keys sorted, so equal
// reports are equal bytes).
func (r *Report) WriteJSON(w io.Writer) error {
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(r)
}

// Exit codes of leasesim. When a campaign finds several kinds, the most
// severe wins: nondeterminism, then violation, then liveness.
const (
	ExitOK             = 0
	ExitViolation      = 1
	ExitUsage          = 2
	ExitLiveness       = 3
	ExitNondeterminism = 4
)

// ExitCode returns the exit code the report calls for.
func (r *Report) ExitCode() int {
	switch {
	case r.Outcomes[sim.OutcomeNondeterminism.String()] > 0:
		return ExitNondeterminism
	case r.Outcomes[sim.OutcomeViolation.String()] > 0:
		return ExitViolation
	case r.Outcomes[sim.OutcomeLiveness.String()] > 0:
		return ExitLiveness
	}
	return ExitOK
}

// ExitCodeOf returns the exit code for one finding.
func ExitCodeOf(f Finding) int {
	switch f.Outcome {
	case sim.OutcomeViolation:
		return ExitViolation
	case sim.OutcomeLiveness:
		return ExitLiveness
	case sim.OutcomeNondeterminism:
		return ExitNondeterminism
	}
	return ExitOK
}

// WriteSummary writes the readable end-of-campaign summary.
func (r *Report) WriteSummary(w io.Writer) {
	rate := 0.0
	if r.ElapsedSeconds > 0 {
		rate = float64(r.Runs) / r.ElapsedSeconds
	}
	fmt.Fprintf(w, "leasesim: %d runs (%s) over engines %s, shards %s, in %.1fs (%.0f runs/s, %.1fM steps)\n",
		r.Runs, outcomeLine(r.Outcomes), strings.Join(r.Engines, ","), strings.Join(r.Shards, ","), r.ElapsedSeconds, rate,
		float64(r.Steps)/1e6)
	engines := make([]string, 0, len(r.PerEngine))
	for engine := range r.PerEngine {
		engines = append(engines, engine)
	}
	sort.Strings(engines)
	for _, engine := range engines {
		fmt.Fprintf(w, "  %-10s %s\n", engine, outcomeLine(r.PerEngine[engine]))
	}
	if r.DeterminismChecked > 0 {
		fmt.Fprintf(w, "  determinism: %d runs replayed twice\n", r.DeterminismChecked)
	}
	names := make([]string, 0, len(r.Probes))
	for name := range r.Probes {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "  probes hit (%d):", len(names))
	for i, name := range names {
		if i%6 == 0 {
			fmt.Fprint(w, "\n   ")
		}
		fmt.Fprintf(w, " %s=%d", name, r.Probes[name])
	}
	fmt.Fprintln(w)
	firsts := r.FirstFailures()
	if len(firsts) == 0 {
		fmt.Fprintln(w, "  no failures")
		return
	}
	fmt.Fprintf(w, "  failures: %d runs, %d distinct:\n", len(r.Failures)+r.FailuresDropped, len(firsts))
	for _, f := range firsts {
		fmt.Fprintf(w, "  - %s %s seed=%d (index %d, %d steps): %s\n", f.Engine, f.Outcome, f.Seed, f.Index, f.Steps, firstLine(f.Message))
		if f.SeedFile != "" {
			fmt.Fprintf(w, "    shrunk to %d decisions (%d choices): %s\n", f.DecisionsShrunk, f.ChoicesShrunk, f.SeedFile)
		}
		if f.Replay != "" {
			fmt.Fprintf(w, "    replay: %s\n", f.Replay)
		}
	}
}

func outcomeLine(counts map[string]int) string {
	var parts []string
	for _, o := range []sim.Outcome{sim.OutcomeOK, sim.OutcomeViolation, sim.OutcomeLiveness, sim.OutcomeNondeterminism} {
		if n := counts[o.String()]; n > 0 || o == sim.OutcomeOK {
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	return strings.Join(parts, ", ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	const lengthMax = 200
	if len(line) > lengthMax {
		line = line[:lengthMax] + "..."
	}
	return line
}
