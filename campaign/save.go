package campaign

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/leasekit/leasekit/sim"
)

// ReplayCommand renders the paste-ready command that replays a seed file.
type ReplayCommand func(path string) string

// DefaultReplayCommand is the command run from the module root.
func DefaultReplayCommand(path string) string { return "go run ./cmd/leasesim replay " + path }

// ShrinkToFile shrinks a failing spec and writes it as a seed file under
// dir/<engine>/. It returns the file's path and the shrink's result.
func (c *Catalog) ShrinkToFile(spec Spec, want Finding, dir string, options ShrinkOptions, command ReplayCommand) (string, ShrinkResult, error) {
	shrunk, err := c.Shrink(spec, want, options)
	if err != nil {
		return "", ShrinkResult{}, err
	}
	file := SeedFile{Spec: shrunk.Spec, Expect: shrunk.Finding}
	path, err := WriteSeedFile(dir, c.withSummary(file, shrunk, command, dir))
	if err != nil {
		return "", shrunk, err
	}
	return path, shrunk, nil
}

// withSummary adds the # lines: the finding, the run's size, the shrink.
func (c *Catalog) withSummary(file SeedFile, shrunk ShrinkResult, command ReplayCommand, dir string) SeedFile {
	r := shrunk.Result
	if e, err := c.Lookup(file.Spec.Engine); err == nil {
		file.Provenance = newProvenance(e, r)
	}
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
	if replay, err := c.ReplaySpec(file.Spec, false); err == nil {
		file.Summary = append(file.Summary, fmt.Sprintf("%d context switches over %d steps", ContextSwitches(replay.Trace), replay.Result.Steps))
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
// lists are the problem) and writes seed files under dir. The shrinks run in
// parallel on o.Workers goroutines; each is sequential and deterministic. It
// fills in the failures' SeedFile, DecisionsShrunk, ChoicesShrunk and Replay.
func ShrinkFailures(report *Report, o Options, dir string, limit int, options ShrinkOptions, command ReplayCommand) []error {
	firsts := report.FirstFailures()
	firsts = firsts[:min(limit, len(firsts))]
	errs := make([]error, len(firsts))
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	slots := make(chan struct{}, workers)
	var group sync.WaitGroup
	for i, f := range firsts {
		group.Add(1)
		slots <- struct{}{}
		go func() {
			defer group.Done()
			defer func() { <-slots }()
			errs[i] = shrinkFailure(f, o, report.specs, dir, options, command)
		}()
	}
	group.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	return failed
}

func shrinkFailure(f *Failure, o Options, specs map[string]Spec, dir string, options ShrinkOptions, command ReplayCommand) error {
	if f.Outcome == sim.OutcomeNondeterminism.String() {
		f.Replay = fmt.Sprintf("rerun twice: leasesim replay --engine %s %d (with the campaign's flags)", f.Engine, f.Seed)
		return nil
	}
	spec, guided := specs[failureKey(f.Engine, f.Index)] // a guided campaign's input
	if !guided {
		var err error
		if spec, err = o.SpecFor(f.Engine, f.Seed); err != nil {
			return err
		}
	}
	outcome, err := parseOutcome(f.Outcome)
	if err != nil {
		return err
	}
	path, shrunk, err := o.Catalog.ShrinkToFile(spec, Finding{Outcome: outcome, Class: f.Class}, dir, options, command)
	if err != nil {
		return fmt.Errorf("shrink %s seed %d: %w", f.Engine, f.Seed, err)
	}
	f.SeedFile = path
	f.DecisionsShrunk = shrunk.DecisionsAfter
	f.ChoicesShrunk = shrunk.ChoicesAfter
	if command != nil {
		f.Replay = command(path)
	}
	return nil
}

// SaveRun writes a replayed run, unshrunk, as a seed file under dir: its
// recorded decisions and its finding. This pins a rare-state run (one that
// hit a rare probe) as a regression seed.
func (c *Catalog) SaveRun(dir string, replay *Replay, command ReplayCommand) (string, error) {
	spec := replay.Spec.clone()
	spec.adopt(replay.Result)
	file := SeedFile{Spec: spec, Expect: replay.Finding}
	decisions := len(spec.Decisions)
	file = c.withSummary(file, ShrinkResult{Spec: spec, Finding: replay.Finding, Result: replay.Result,
		DecisionsBefore: decisions, DecisionsAfter: decisions, ChoicesBefore: Choices(spec.Decisions),
		ChoicesAfter: Choices(spec.Decisions)}, command, dir)
	file.Summary[2] = fmt.Sprintf("saved unshrunk: %d decisions (%d choices)", decisions, Choices(spec.Decisions))
	return WriteSeedFile(dir, file)
}
