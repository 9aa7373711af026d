package campaign

import (
	"context"
	"fmt"
	"slices"
)

// MinimizeCorpus is afl-cmin for decision lists: it replays every entry of
// corpus (each engine of o.Engines) with coverage on and returns the subset
// that a greedy set cover picks to reach every point the whole corpus
// reaches under o.Signal. A guided campaign keeps a run for any one new
// point, so a corpus grows by tens of entries a minute; the cover is what
// is worth committing under testdata/ for CI to resume (its replay comes
// back to the same points, so a resumed search starts where the big
// corpus stood). The cover is deterministic: ties go to the entry that was
// loaded first (LoadCorpus loads in file-name order).
//
// entriesMax > 0 keeps at most that many entries per engine: the first
// picks of the cover, each the entry adding the most points the earlier
// picks miss, so a small committed corpus keeps as much as its size
// allows; Points then counts what the kept entries reach.
//
// An entry whose replay fails is a finding, not an entry: MinimizeCorpus
// stops with an error naming it, so a code change that breaks a stored
// input is reported rather than dropped.
func MinimizeCorpus(ctx context.Context, o Options, corpus *Corpus, entriesMax int) (*Corpus, []CorpusCover, error) {
	switch o.Signal {
	case "", SignalCalls, SignalOperations:
	default:
		return nil, nil, &UsageError{Message: fmt.Sprintf("--signal %q: %s or %s", o.Signal, SignalCalls, SignalOperations)}
	}
	pool := newRunPool(o.Workers)
	defer pool.close()
	kept := NewCorpus()
	var covers []CorpusCover
	for _, engine := range o.Engines {
		e, err := o.Catalog.Lookup(engine)
		if err != nil {
			return nil, nil, err
		}
		entries := corpus.Entries(engine)
		sets, err := entryPoints(ctx, e, engine, entries, o.Signal, pool)
		if err != nil {
			return nil, nil, err
		}
		chosen, points := greedyCover(sets, entriesMax)
		for _, i := range chosen {
			kept.Add(entries[i])
		}
		covers = append(covers, CorpusCover{Engine: engine, Entries: len(entries), Kept: len(chosen), Points: points})
	}
	return kept, covers, nil
}

// CorpusCover is one engine's line of a minimisation: how many entries
// the corpus had, how many the cover keeps, and the distinct points both
// reach.
type CorpusCover struct {
	Engine  string `json:"engine"`
	Entries int    `json:"entries"`
	Kept    int    `json:"kept"`
	Points  int    `json:"points"`
}

// entryPoints replays entries and returns each one's distinct point hashes
// under signal.
func entryPoints(ctx context.Context, e *Engine, engine string, entries []Spec, signal string, pool *runPool) ([][]uint64, error) {
	sets := make([][]uint64, 0, len(entries))
	for start := 0; start < len(entries); start += guidedBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := entries[start:min(start+guidedBatch, len(entries))]
		indices := make([]int, len(batch))
		for i := range indices {
			indices[i] = start + i
		}
		for i, out := range runBatch(e, engine, indices, batch, pool) {
			if !out.rec.finding.OK() {
				return nil, fmt.Errorf("corpus entry %s of %s: its replay fails (%s): a finding, kept for you to replay with leasesim replay",
					corpusName(batch[i]), engine, out.rec.finding.Message)
			}
			sets = append(sets, distinctHashes(out.signal(signal)))
		}
	}
	return sets, nil
}

func distinctHashes(points []CoveragePoint) []uint64 {
	hashes := make([]uint64, len(points))
	for i, p := range points {
		hashes[i] = p.Hash
	}
	slices.Sort(hashes)
	return slices.Compact(hashes)
}

// greedyCover picks sets, each time the one that adds the most points not
// yet covered (the lowest index on a tie), until every point is covered or
// limit (if > 0) sets are chosen; it returns the chosen indices in order
// and the number of points they cover.
func greedyCover(sets [][]uint64, limit int) ([]int, int) {
	covered := map[uint64]bool{}
	var chosen []int
	used := make([]bool, len(sets))
	for {
		best, gain := -1, 0
		for i, set := range sets {
			if used[i] {
				continue
			}
			if g := uncovered(set, covered); g > gain {
				best, gain = i, g
			}
		}
		if best < 0 || (limit > 0 && len(chosen) == limit) {
			return chosen, len(covered)
		}
		used[best] = true
		chosen = append(chosen, best)
		for _, h := range sets[best] {
			covered[h] = true
		}
	}
}

func uncovered(set []uint64, covered map[uint64]bool) int {
	n := 0
	for _, h := range set {
		if !covered[h] {
			n++
		}
	}
	return n
}
