package campaign

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// Reseeding re-derives a drifted seed file on today's code: it searches for
// a run that finds the file's recorded finding and hits its recorded probe
// set, guided by the recorded list, shrinks it again (a failure), and
// rewrites the file with fresh provenance and a note of what changed.
//
// The candidates, in a fixed order (the search is reproducible):
//
//  1. the recorded list as it is;
//  2. the seed's own run (no list: the run the campaign drew);
//  3. perturbations: a prefix of the recorded list, cut at a drawn point,
//     continued by fresh draws from a drawn seed (sim ReplayThenDraw), or
//     the recorded list with some of its choices zeroed.
//
// A candidate must find the wanted finding; among those, the first to hit
// every recorded probe wins, else the one that loses the fewest.

// ReseedRunsDefault is the default search budget of a reseed.
const ReseedRunsDefault = 1000

// ReseedOptions bounds a reseed.
type ReseedOptions struct {
	// Want is the finding to reproduce; nil means the file's recorded one.
	// (A regression seed of a fixed bug is reseeded to pass: Want ok.)
	Want *Finding
	// RunsMax is the search budget; zero means ReseedRunsDefault.
	RunsMax int
	// Shrink bounds the shrink of a failing run found.
	Shrink ShrinkOptions
	// Command renders the replay command written in the file's summary,
	// for the file's new path under Dir (<Dir>/<engine>/<name>.seed).
	Command ReplayCommand
	Dir     string
	// Log, when not nil, receives a line per improving candidate.
	Log io.Writer
}

// ReseedResult is a reseed's outcome.
type ReseedResult struct {
	// File is the rewritten seed file (not yet written).
	File SeedFile
	// Before is the drift of the file as it was.
	Before Drift
	// Runs is the number of search runs spent; How says which candidate
	// won; ProbesLost are recorded probes the new run does not hit.
	Runs       int
	How        string
	ProbesLost []string
}

type reseedCandidate struct {
	spec Spec
	how  string
}

// reseedSearch runs the candidates in order until one finds want and hits
// every target probe (or the budget is spent), and returns the best: the
// first to find want among those that lose the fewest target probes (nil
// when none found want).
func reseedSearch(e *Engine, file SeedFile, want Finding, target []string, o ReseedOptions) (*reseedCandidate, sim.Result, []string, int) {
	runsMax := o.RunsMax
	if runsMax <= 0 {
		runsMax = ReseedRunsDefault
	}
	var best *reseedCandidate
	var bestResult sim.Result
	var bestLost []string
	draw := rand.New(rand.NewPCG(file.Spec.Seed, 0x7265736565640000)) // "reseed"
	runs := 0
	for ; runs < runsMax && (best == nil || len(bestLost) > 0); runs++ {
		candidate := reseedCandidateAt(file.Spec, runs, draw)
		result := sim.Run(candidate.spec.Config(e, nil))
		finding, _ := judge(e, result, false)
		if !finding.Same(want) {
			continue
		}
		lost := lostProbes(target, result)
		if best == nil || len(lost) < len(bestLost) {
			best, bestResult, bestLost = &candidate, result, lost
			if o.Log != nil {
				fmt.Fprintf(o.Log, "run %d: %s finds %v, loses %d of %d recorded probes\n", runs, candidate.how, finding,
					len(lost), len(target))
			}
		}
	}
	return best, bestResult, bestLost, runs
}

// Reseed re-derives file on today's code: it tries the candidates in order
// (the recorded list, the seed's own run, then perturbations of the list),
// keeps the first that finds the wanted finding and hits every recorded
// probe (else the one that loses the fewest), shrinks it again when it
// fails, and returns the file with fresh provenance, not yet written. It
// fails when no candidate within the budget finds the wanted finding.
func (c *Catalog) Reseed(file SeedFile, o ReseedOptions) (ReseedResult, error) {
	e, err := c.Lookup(file.Spec.Engine)
	if err != nil {
		return ReseedResult{}, err
	}
	want := file.Expect
	if o.Want != nil {
		want = *o.Want
	}
	before, err := c.CheckDrift(file)
	if err != nil {
		return ReseedResult{}, err
	}
	target := recordedProbes(file)
	best, bestResult, bestLost, runs := reseedSearch(e, file, want, target, o)
	if best == nil {
		return ReseedResult{Before: before, Runs: runs}, fmt.Errorf("campaign: reseed %s seed %d: no run in %d finds %v (%s)",
			file.Spec.Engine, file.Spec.Seed, runs, want, before)
	}
	spec := best.spec.clone()
	// The recorded list holds every answer of the run, the tail's too: the
	// file keeps its own seed, and the list alone replays the run.
	if file.Spec.Keys != nil {
		spec.Seed = file.Spec.Seed
	}
	spec.ThenDraw = false
	spec.adopt(bestResult)
	shrunk := ShrinkResult{Spec: spec, Finding: want, Result: bestResult, DecisionsBefore: len(spec.Decisions),
		DecisionsAfter: len(spec.Decisions), ChoicesBefore: Choices(spec.Decisions), ChoicesAfter: Choices(spec.Decisions)}
	if !want.OK() {
		options := o.Shrink
		options.KeepProbes = slices.DeleteFunc(slices.Clone(target), func(p string) bool { return slices.Contains(bestLost, p) })
		if shrunk, err = c.Shrink(spec, want, options); err != nil {
			return ReseedResult{}, err
		}
	}
	out := c.reseededFile(file, shrunk, want, o, fmt.Sprintf("%s after %d search runs; was: %s", best.how, runs, before), bestLost)
	return ReseedResult{File: out, Before: before, Runs: runs, How: best.how, ProbesLost: bestLost}, nil
}

// reseededFile is the rewritten file: the shrunk run, its summary, and the
// note of what changed (how the run was found, the drift before, the probes
// no run hit, the finding it was first recorded with).
func (c *Catalog) reseededFile(file SeedFile, shrunk ShrinkResult, want Finding, o ReseedOptions, how string, lost []string) SeedFile {
	out := SeedFile{Spec: shrunk.Spec, Expect: shrunk.Finding, Pinned: file.Pinned}
	out = c.withSummary(out, shrunk, o.Command, o.Dir)
	if want.OK() {
		out.Summary[2] = fmt.Sprintf("saved unshrunk (a passing run): %d decisions (%d choices)", len(shrunk.Spec.Decisions), Choices(shrunk.Spec.Decisions))
	}
	note := fmt.Sprintf("reseeded at %s: %s", orUnknown(BuildCommit()), how)
	if len(lost) > 0 {
		note += "; recorded probes no run hit: " + strings.Join(lost, " ")
	}
	out.Summary = append(out.Summary, note)
	out.Summary = append(out.Summary, keptNotes(file.Summary)...)
	if !want.Same(file.Expect) && !slices.ContainsFunc(out.Summary, func(l string) bool { return strings.HasPrefix(l, "originally found") }) {
		out.Summary = append(out.Summary, fmt.Sprintf("originally found %v; reseeded to find %v", file.Expect, want))
	}
	return out
}

// reseedCandidateAt is the i-th search candidate for spec.
func reseedCandidateAt(spec Spec, i int, draw *rand.Rand) reseedCandidate {
	c := spec.clone()
	if spec.Keys == nil {
		// A single-stream list (recorded before the streams were keyed)
		// cannot be split into streams: search seeded runs of its knobs.
		c.seeded()
		if i == 0 {
			return reseedCandidate{c, "the seed's own run (keyed streams)"}
		}
		c.Seed = draw.Uint64()
		return reseedCandidate{c, fmt.Sprintf("seed %d's run (keyed streams; the single-stream list cannot be split)", c.Seed)}
	}
	switch {
	case i == 0:
		return reseedCandidate{c, "the recorded list"}
	case i == 1:
		c.seeded()
		return reseedCandidate{c, "the seed's own run"}
	case i%2 == 0 && len(spec.Decisions) > 0:
		cut := draw.IntN(len(spec.Decisions) + 1)
		c.Seed = draw.Uint64() // the tail's seed
		c.truncate(cut)
		c.ThenDraw = true
		return reseedCandidate{c, fmt.Sprintf("the recorded list's first %d decisions, then fresh draws (seed %d)", cut, c.Seed)}
	default:
		zeroed := 0
		for k, v := range c.Decisions {
			if v != 0 && draw.IntN(8) == 0 {
				c.Decisions[k] = 0
				zeroed++
			}
		}
		return reseedCandidate{c, fmt.Sprintf("the recorded list with %d choices zeroed", zeroed)}
	}
}

// recordedProbes is the probe set a file records: its provenance's, or a
// version 1 file's summary line's.
func recordedProbes(file SeedFile) []string {
	if file.Provenance != nil {
		return file.Provenance.Probes
	}
	if p := summaryProvenance(file.Summary); p != nil {
		return p.Probes
	}
	return nil
}

func lostProbes(target []string, result sim.Result) []string {
	var lost []string
	for _, name := range target {
		if result.Probes[name] == 0 {
			lost = append(lost, name)
		}
	}
	return lost
}

// keptNotes are the human notes of a file's summary worth keeping across a
// rewrite ("fixed since ...", an earlier reseed's note, "originally found").
func keptNotes(summary []string) []string {
	var kept []string
	for _, line := range summary {
		for _, prefix := range []string{"fixed since", "reseeded at", "originally found", "pinned:"} {
			if strings.HasPrefix(line, prefix) {
				line, _, _ = strings.Cut(line, " replay: ")
				kept = append(kept, strings.TrimSuffix(line, "."))
				break
			}
		}
	}
	return kept
}

// ReseedFile reseeds the seed file at path and writes the result in the
// same seed directory (<dir>/<engine>/<new name>.seed); the old file is
// removed when the name changed. It returns the new path.
func (c *Catalog) ReseedFile(path string, o ReseedOptions) (string, ReseedResult, error) {
	file, err := ReadSeedFile(path)
	if err != nil {
		return "", ReseedResult{}, err
	}
	o.Dir = filepath.Dir(filepath.Dir(path))
	result, err := c.Reseed(file, o)
	if err != nil {
		return "", result, err
	}
	written, err := WriteSeedFile(o.Dir, result.File)
	if err != nil {
		return "", result, err
	}
	if filepath.Clean(written) != filepath.Clean(path) {
		if err := os.Remove(path); err != nil {
			return written, result, err
		}
	}
	return written, result, nil
}

// Passing is the finding of a run that finds nothing (ReseedOptions.Want of
// a regression seed of a fixed bug).
var Passing = Finding{Outcome: sim.OutcomeOK}
