package campaign

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// Guided search (Options.Search "guided") is a coverage-guided fuzzer over
// decision lists, the way AFL and libFuzzer are over input bytes: every run
// is scored by its engine's coverage signal (Engine.Coverage, by default
// DefaultCoverage), and a run that reaches a point no earlier run reached
// is kept in the corpus, with the decision counts at which it reached its
// new points; later candidates are mutations of kept runs (guided_mutate.go)
// aimed at those points. Runs replay their candidate's list, then draw
// fresh answers from the candidate's seed (Spec.ThenDraw), and record what
// they drew, so every kept or failing run is a plain replayable spec.
//
// The search is deterministic for a given (Options, corpus): candidates
// come from a generator seeded by BaseSeed and Shard, are made in
// generations of guidedBatch (run in parallel over Workers), and their
// results are absorbed in candidate order, so the worker count does not
// change what runs. A Duration bound stops it after a whole generation.

// guidedBatch is the number of candidates of one generation.
const guidedBatch = 8

// guidedFresh is the number of plain seeds that start a search; later a
// plain seed is one of the operators (chooseOp).
const guidedFresh = 16

// guidedEntriesMax bounds the entries an engine's search mutates (memory:
// an entry is a whole decision list).
const guidedEntriesMax = 1024

// guidedEntry is a kept run: its input and where it reached new points.
type guidedEntry struct {
	spec  Spec
	novel []int
}

// guidedSearch is one engine's search state.
type guidedSearch struct {
	o       *Options
	e       *Engine
	engine  string
	rng     *rand.Rand
	seen    map[uint64]struct{}
	entries []guidedEntry
	corpus  *Corpus
	// made counts the candidates made (the next index).
	made int
	// tried and kept count each operator's candidates and those that
	// reached new coverage; gain and cost are each operator's new points
	// and decisions drawn, decayed (chooseOp); ops is each pending
	// candidate's operator, by index.
	tried, kept [opCount]int
	gain, cost  [opCount]float64
	ops         map[int]int
}

// outcome is what one candidate's run gives back to the search: its
// points, of which the first ops are operation points (coverageOf).
type outcome struct {
	rec    record
	points []CoveragePoint
	ops    int
}

// signal is the part of the run's points that guides the search
// (Options.Signal).
func (out outcome) signal(name string) []CoveragePoint {
	if name == SignalOperations {
		return out.points[:out.ops]
	}
	return out.points
}

func newGuidedSearch(o *Options, engine string, corpus *Corpus) *guidedSearch {
	e, err := o.Catalog.Lookup(engine)
	if err != nil {
		panic(err) // validated
	}
	salt := streamSalt(engine) ^ uint64(o.Shard)<<32 ^ uint64(o.Shards)
	return &guidedSearch{o: o, e: e, engine: engine, rng: rand.New(rand.NewPCG(o.BaseSeed, salt)),
		seen: map[uint64]struct{}{}, corpus: corpus, ops: map[int]int{}}
}

// streamSalt hashes a name (FNV-1a).
func streamSalt(name string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 0x100000001b3
	}
	return h
}

// fresh is the plain seed of candidate index (as a random campaign's seed,
// each shard its own).
func (g *guidedSearch) fresh(index int) Spec {
	spec, err := g.o.SpecFor(g.engine, g.o.BaseSeed+uint64(index*g.o.Shards+g.o.Shard))
	if err != nil {
		panic(err) // validated
	}
	return spec
}

// next makes the next candidate.
func (g *guidedSearch) next() (int, Spec) {
	index := g.made
	g.made++
	if len(g.entries) == 0 || index < guidedFresh {
		return index, g.fresh(index)
	}
	op := g.chooseOp()
	g.tried[op]++
	g.ops[index] = op
	if op == opFresh {
		return index, g.fresh(index)
	}
	if op == opFreshKnobs {
		spec := g.fresh(index)
		g.reknob(&spec, 1+g.rng.IntN(2))
		return index, spec
	}
	return index, g.mutate(op)
}

// absorb scores one run (in candidate order) and keeps it if it reached a
// new point; it reports whether it did.
func (g *guidedSearch) absorb(out outcome) bool {
	var novel []int
	gained := 0
	for _, p := range out.signal(g.o.Signal) {
		if _, ok := g.seen[p.Hash]; ok {
			continue
		}
		g.seen[p.Hash] = struct{}{}
		gained++
		if p.At >= 0 {
			novel = append(novel, p.At)
		}
	}
	novel = spread(novel, guidedNovelMax)
	op, mutated := g.ops[out.rec.job.index]
	delete(g.ops, out.rec.job.index)
	if mutated {
		g.reward(op, gained, len(out.rec.spec.Decisions))
	}
	if gained == 0 {
		return false
	}
	if mutated {
		g.kept[op]++
	}
	if len(g.entries) >= guidedEntriesMax {
		// Forget an old entry (not one of the newest half).
		victim := g.rng.IntN(guidedEntriesMax / 2)
		g.entries = append(g.entries[:victim], g.entries[victim+1:]...)
	}
	g.entries = append(g.entries, guidedEntry{spec: out.rec.spec, novel: novel})
	if g.corpus != nil {
		g.corpus.Add(out.rec.spec)
	}
	return true
}

// guidedNovelMax bounds the novel decision counts an entry keeps.
const guidedNovelMax = 32

// spread returns at most n of the distinct values of list, sorted and
// evenly spaced over them: a run of the call trace can reach hundreds of
// new points, and keeping only the first n would aim every mutation at
// the start of the run.
func spread(list []int, n int) []int {
	slices.Sort(list)
	list = slices.Compact(list)
	if len(list) <= n {
		return list
	}
	out := make([]int, n)
	for i := range out {
		out[i] = list[i*(len(list)-1)/(n-1)]
	}
	return out
}

// Points returns the distinct coverage points reached so far.
func (g *guidedSearch) points() int { return len(g.seen) }

// runCandidate runs one candidate with coverage on and returns its record
// (the spec replaced by what the run drew) and points.
func runCandidate(e *Engine, j job, spec Spec, coroutines *sim.Coroutines) outcome {
	cfg := spec.Config(e, nil)
	cfg.Coverage, cfg.Coroutines = true, coroutines
	result := sim.Run(cfg)
	finding, _ := judge(e, result, false)
	points, ops := coverageOf(e, result)
	kept := spec.clone()
	kept.adopt(result)
	kept.ThenDraw = false
	result.History = nil
	sim.Recycle(&result)
	return outcome{rec: record{job: j, spec: kept, result: result, finding: finding}, points: points, ops: ops}
}

// runBatch runs candidates over workers, results in candidate order.
func runBatch(e *Engine, engine string, indices []int, specs []Spec, pool *runPool) []outcome {
	outs := make([]outcome, len(specs))
	var group sync.WaitGroup
	for i := range specs {
		group.Add(1)
		pool.do(func(coroutines *sim.Coroutines) {
			defer group.Done()
			outs[i] = runCandidate(e, job{engine: engine, index: indices[i]}, specs[i], coroutines)
		})
	}
	group.Wait()
	return outs
}

// runPool is a fixed set of workers, each with its own coroutines.
type runPool struct {
	work chan func(*sim.Coroutines)
	done sync.WaitGroup
}

func newRunPool(workers int) *runPool {
	p := &runPool{work: make(chan func(*sim.Coroutines))}
	for range max(workers, 1) {
		p.done.Add(1)
		go func() {
			defer p.done.Done()
			coroutines := sim.NewCoroutines()
			defer coroutines.Close()
			for f := range p.work {
				f(coroutines)
			}
		}()
	}
	return p
}

func (p *runPool) do(f func(*sim.Coroutines)) { p.work <- f }

func (p *runPool) close() {
	close(p.work)
	p.done.Wait()
}

// guidedLoop runs generations over the engines until ctx ends, each engine
// made perEngine candidates (0: unbounded), or visit returns false. It
// first replays the corpus's entries (to learn their coverage; not counted
// as candidates).
func guidedLoop(ctx context.Context, o *Options, corpus *Corpus, perEngine int, visit func(outcome) bool) map[string]*guidedSearch {
	pool := newRunPool(o.Workers)
	defer pool.close()
	searches := map[string]*guidedSearch{}
	for _, engine := range o.Engines {
		g := newGuidedSearch(o, engine, corpus)
		searches[engine] = g
		if corpus == nil {
			continue
		}
		seeds := corpus.Entries(engine)
		for start := 0; start < len(seeds) && ctx.Err() == nil; start += guidedBatch {
			batch := seeds[start:min(start+guidedBatch, len(seeds))]
			indices := make([]int, len(batch))
			for i := range indices {
				indices[i] = -1
			}
			for _, out := range runBatch(g.e, engine, indices, batch, pool) {
				g.absorb(out)
			}
		}
	}
	for ctx.Err() == nil {
		progress := false
		for _, engine := range o.Engines {
			g := searches[engine]
			var indices []int
			var specs []Spec
			for len(specs) < guidedBatch && (perEngine == 0 || g.made < perEngine) {
				index, spec := g.next()
				indices, specs = append(indices, index), append(specs, spec)
			}
			if len(specs) == 0 {
				continue
			}
			progress = true
			for _, out := range runBatch(g.e, engine, indices, specs, pool) {
				g.absorb(out)
				if !visit(out) {
					return searches
				}
			}
			if ctx.Err() != nil {
				break
			}
		}
		if !progress {
			break
		}
	}
	return searches
}

// runGuided is Run for Search "guided": o.Seeds bounds the candidates per
// engine (each candidate is one index of the report).
func runGuided(ctx context.Context, o Options) (*Report, error) {
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	corpus := o.Corpus
	if corpus == nil {
		corpus = NewCorpus()
	}
	report := newReport(o)
	report.specs = map[string]Spec{}
	started := time.Now()
	lastProgress := started
	searches := guidedLoop(ctx, &o, corpus, o.Seeds, func(out outcome) bool {
		report.add(out.rec)
		if !out.rec.finding.OK() {
			report.specs[failureKey(out.rec.job.engine, out.rec.job.index)] = out.rec.spec
		}
		if o.Progress != nil && time.Since(lastProgress) >= max(o.ProgressPeriod, 200*time.Millisecond) {
			lastProgress = time.Now()
			o.Progress(Progress{Runs: report.Runs, Violations: report.Outcomes["violation"], Liveness: report.Outcomes["liveness"],
				ProbesHit: len(report.Probes), Elapsed: time.Since(started)})
		}
		return true
	})
	report.Coverage = map[string]int{}
	for engine, g := range searches {
		report.Coverage[engine] = g.points()
	}
	report.ElapsedSeconds = time.Since(started).Seconds()
	report.NextIndex = o.FirstIndex + report.Runs/max(len(o.Engines), 1)
	report.finish()
	return report, nil
}

func failureKey(engine string, index int) string { return fmt.Sprintf("%s/%d", engine, index) }
