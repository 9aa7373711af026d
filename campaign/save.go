package campaign

import (
	"fmt"
	"path/filepath"

	"github.com/leasekit/leasekit/sim"
)

// ReplayCommand renders the paste-ready command that replays a seed file.
type ReplayCommand func(path string) string

// DefaultReplayCommand is the command run from the module root.
func DefaultReplayCommand(path string) string { return "go run ./cmd/leasesim replay " + path }

// ShrinkToFile shrinks a failing spec and writes it as a seed file under
// dir/<engine>/. It returns the file's path and the shrink's result.
func ShrinkToFile(spec Spec, want Finding, dir string, runsMax int, command ReplayCommand) (string, ShrinkResult, error) {
	shrunk, err := Shrink(spec, want, runsMax)
	if err != nil {
		return "", ShrinkResult{}, err
	}
	file := SeedFile{Spec: shrunk.Spec, Expect: shrunk.Finding}
	path, err := WriteSeedFile(dir, withSummary(file, shrunk, command, dir))
	if err != nil {
		return "", shrunk, err
	}
	return path, shrunk, nil
}

// withSummary adds the # lines: the finding, the run's size, the shrink.
func withSummary(file SeedFile, shrunk ShrinkResult, command ReplayCommand, dir string) SeedFile {
	r := shrunk.Result
	file.Summary = []string{
		fmt.Sprintf("outcome=%v step=%d steps=%d processes=%d operations=%d hash=%016x",
			shrunk.Finding.Outcome, r.Step, r.Steps, r.Processes, len(r.History), r.Hash),
		"message=" + oneLine(firstLine(shrunk.Finding.Message)),
		fmt.Sprintf("shrunk from %d decisions (%d choices) to %d decisions (%d choices) in %d runs",
			shrunk.DecisionsBefore, shrunk.ChoicesBefore, shrunk.DecisionsAfter, shrunk.ChoicesAfter, shrunk.Runs),
	}
	if probes := r.ProbeLines(); len(probes) > 0 {
		file.Summary = append(file.Summary, "probes: "+joinFirst(probes, 12))
	}
	if command != nil {
		file.Summary = append(file.Summary, "replay: "+command(filepath.Join(dir, file.Spec.Engine, file.Name())))
	}
	return file
}

func joinFirst(items []string, n int) string {
	out := ""
	for i, item := range items {
		if i == n {
			return out + fmt.Sprintf(" ... (%d more)", len(items)-n)
		}
		if i > 0 {
			out += " "
		}
		out += item
	}
	return out
}

// ShrinkFailures shrinks the first failure of each distinct class (at most
// limit of them; nondeterminism findings are not shrunk, their decision
// lists are the problem) and writes seed files under dir. It fills in the
// failures' SeedFile, DecisionsShrunk, ChoicesShrunk and Replay fields.
func ShrinkFailures(report *Report, o Options, dir string, limit, runsMax int, command ReplayCommand) []error {
	var errs []error
	for i, f := range report.FirstFailures() {
		if i >= limit {
			break
		}
		if f.Outcome == sim.OutcomeNondeterminism.String() {
			f.Replay = fmt.Sprintf("rerun twice: seed %d of engine %s", f.Seed, f.Engine)
			continue
		}
		spec, err := o.SpecFor(f.Engine, f.Seed)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		outcome, _ := parseOutcome(f.Outcome)
		path, shrunk, err := ShrinkToFile(spec, Finding{Outcome: outcome, Class: f.Class}, dir, runsMax, command)
		if err != nil {
			errs = append(errs, fmt.Errorf("shrink %s seed %d: %w", f.Engine, f.Seed, err))
			continue
		}
		f.SeedFile = path
		f.DecisionsShrunk = shrunk.DecisionsAfter
		f.ChoicesShrunk = shrunk.ChoicesAfter
		if command != nil {
			f.Replay = command(path)
		}
	}
	return errs
}

// SaveRun writes a replayed run, unshrunk, as a seed file under dir: its
// recorded decisions and its finding. This pins a rare-state run (one that
// hit a rare probe) as a regression seed.
func SaveRun(dir string, replay *Replay, command ReplayCommand) (string, error) {
	spec := replay.Spec.clone()
	spec.Decisions = trimZeros(replay.Result.Decisions)
	file := SeedFile{Spec: spec, Expect: replay.Finding}
	decisions := len(spec.Decisions)
	file = withSummary(file, ShrinkResult{Spec: spec, Finding: replay.Finding, Result: replay.Result,
		DecisionsBefore: decisions, DecisionsAfter: decisions, ChoicesBefore: Choices(spec.Decisions),
		ChoicesAfter: Choices(spec.Decisions)}, command, dir)
	file.Summary[2] = fmt.Sprintf("saved unshrunk: %d decisions (%d choices)", decisions, Choices(spec.Decisions))
	return WriteSeedFile(dir, file)
}
