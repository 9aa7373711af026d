package campaign

import (
	"slices"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// The mutation operators of guided search. Each takes a kept run's input
// (its whole recorded list) and a point k in it (usually where the run
// reached a new coverage point), changes the decisions near k, and lets the
// run draw fresh answers from a new seed past each stream's list
// (ThenDraw), so the candidate keeps what made its parent interesting and
// varies what follows:
//
//   - tail: keep the decisions before about k, draw the rest afresh;
//   - window: flip a few decisions within a window around k (a zero, the
//     boring answer, becomes a small choice: another process, a fault
//     that fires; a choice becomes zero or another value);
//   - fault: make a fault fire at k: set the first zero of a process's step
//     stream (where its crash, stop and global fault draws are) at or after
//     k to yes, or enable a fault the plan has off (crash, power loss,
//     rename race, ...) and draw afresh from k on;
//   - splice: each stream answers as the parent's up to k, then as another
//     entry's from there on;
//   - pct: the PCT scheduler with one more change point (depth), from k on;
//
// and one mutation in guidedReknobOdds also redraws a workload knob
// (reknob). Besides the mutations, a candidate may be a plain seed (as
// random search's) or a plain seed with one or two knobs redrawn (swarm
// testing over the world's size: a new world, not a default one).

// window sizes, in decisions (a default lease step draws about five).
var guidedWindows = []int{4, 16, 64}

// The operators, as indices of guidedSearch.tried and .kept; opFresh is a
// plain seed (no parent).
const (
	opFresh = iota
	opTail
	opWindow
	opFault
	opSplice
	opPCT
	opFreshKnobs
	opCount
)

// chooseOp draws an operator (a bandit over them, in the manner of MOpt's
// operator schedule): each operator's rate is its new points per decision
// drawn (a deterministic measure of its CPU cost), both decayed so that
// recent candidates count most, with a prior of guidedGainPrior points in
// guidedCostPrior decisions; the operators are drawn in proportion to the
// cube of their rates (so the best one runs most, not merely more),
// mixed with guidedExplore of uniform draws so that none starves. The
// reward is new points per cost, not the share of candidates that found
// any: on a wide signal most candidates find some (73% on dirlease),
// so that share hardly tells the operators apart. It depends only
// on earlier absorbed results, so it stays deterministic.
func (g *guidedSearch) chooseOp() int {
	var weights [opCount]float64
	total := 0.0
	for op := range opCount {
		rate := (g.gain[op] + guidedGainPrior) / (g.cost[op] + guidedCostPrior)
		weights[op] = rate * rate * rate
		total += weights[op]
	}
	for op := range opCount {
		weights[op] = (1-guidedExplore)*weights[op]/total + guidedExplore/opCount
	}
	x := g.rng.Float64()
	for op := range opCount {
		if x < weights[op] {
			return op
		}
		x -= weights[op]
	}
	return opFresh
}

// reward books one absorbed candidate of operator op: its new points and
// the decisions its run drew. Every operator's figures decay by
// guidedDecay per candidate (a half-life of about 350 candidates), since
// what pays changes as the search covers more.
func (g *guidedSearch) reward(op, gained, decisions int) {
	for i := range opCount {
		g.gain[i] *= guidedDecay
		g.cost[i] *= guidedDecay
	}
	g.gain[op] += float64(gained)
	g.cost[op] += float64(decisions + guidedRunCost)
}

// The operator bandit's parameters (chooseOp, reward): guidedRunCost is
// a run's fixed cost in decisions (a default run draws thousands).
const (
	guidedDecay     = 0.998
	guidedRunCost   = 200
	guidedGainPrior = 5
	guidedCostPrior = 500
	guidedExplore   = 0.1
)

// mutate picks an entry and applies operator op.
func (g *guidedSearch) mutate(op int) Spec {
	parent := g.pick()
	spec := parent.spec.clone()
	k := g.point(parent)
	w := guidedWindows[g.rng.IntN(len(guidedWindows))]
	switch op {
	case opTail:
		spec.truncate(clamp(k+g.rng.IntN(2*w+1)-w, 0, len(spec.Decisions)))
	case opWindow:
		g.window(&spec, k, w)
	case opFault:
		g.fault(&spec, k, w)
	case opSplice:
		g.splice(&spec, g.pick().spec, k)
	default:
		g.pct(&spec, k)
	}
	if g.rng.IntN(guidedReknobOdds) == 0 {
		g.reknob(&spec, 1)
	}
	spec.ThenDraw, spec.Seed = true, g.rng.Uint64()
	return spec
}

// guidedReknobOdds: one mutation in this many also redraws a workload knob.
const guidedReknobOdds = 2

// reknob redraws n of the workload's knobs that the campaign left free
// (not set by Options.Params, not Fixed), each to a value in [Min, Max]:
// the number of processes, operations per process, respawns. Random
// search runs every seed at the defaults; guided search varies the
// world's size as swarm testing varies its faults, so it reaches layouts
// and counts a default world does not (a plain seed with redrawn
// knobs is the most productive operator per decision on every engine).
// The candidate's spec records its knobs, so it replays and shrinks (the
// shrinker lowers knobs).
func (g *guidedSearch) reknob(spec *Spec, n int) {
	var free []Param
	for _, p := range g.e.Params {
		if _, set := g.o.Params[p.Name]; !set && !p.Fixed {
			free = append(free, p)
		}
	}
	for range n {
		if len(free) == 0 {
			return
		}
		i := g.rng.IntN(len(free))
		p := free[i]
		free = slices.Delete(free, i, i+1)
		spec.Params[p.Name] = p.Min + g.rng.IntN(p.Max-p.Min+1)
	}
	spec.StepsMax = scaledStepsMax(g.e, spec.Params)
}

// stepsMaxScaleMax bounds how far a redrawn world's step budget grows.
const stepsMaxScaleMax = 64

// scaledStepsMax is the step budget of a world with knobs params: the
// engine's budget, which is sized for its default world, times how much
// larger this one is (the product, over the knobs above their defaults,
// of value / default, rounded up; at most stepsMaxScaleMax). A redrawn
// world of 8 processes with 59 operations each needs more than the
// default world's 100,000 steps, and a run that ran out of them was a
// false liveness finding ("step budget exhausted" with every process
// still working; found as a confounded detection of a guided hunt).
func scaledStepsMax(e *Engine, params Params) int {
	budget := e.StepsMax
	if budget == 0 {
		budget = stepsMaxDefault
	}
	scale := 1
	for _, p := range e.Params {
		if v, ok := params[p.Name]; ok && p.Default > 0 && v > p.Default {
			scale *= (v + p.Default - 1) / p.Default
		}
		scale = min(scale, stepsMaxScaleMax)
	}
	return budget * scale
}

// pick chooses an entry: half the time among the 4 newest, a quarter among
// the 32 newest (recent finds are the frontier), else any.
func (g *guidedSearch) pick() guidedEntry {
	n := len(g.entries)
	switch g.rng.IntN(4) {
	case 0, 1:
		return g.entries[n-1-g.rng.IntN(min(n, 4))]
	case 2:
		return g.entries[n-1-g.rng.IntN(min(n, 32))]
	}
	return g.entries[g.rng.IntN(n)]
}

// point chooses k: mostly one of the entry's novel points, else anywhere.
func (g *guidedSearch) point(e guidedEntry) int {
	n := len(e.spec.Decisions)
	if len(e.novel) > 0 && g.rng.IntN(4) != 0 {
		return clamp(e.novel[g.rng.IntN(len(e.novel))], 0, n)
	}
	return g.rng.IntN(n + 1)
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// window flips about a quarter of the decisions in [k-w, k+w); half the
// time it also drops what follows the window.
func (g *guidedSearch) window(spec *Spec, k, w int) {
	lo, hi := clamp(k-w, 0, len(spec.Decisions)), clamp(k+w, 0, len(spec.Decisions))
	flipped := false
	for i := lo; i < hi; i++ {
		if g.rng.IntN(4) != 0 {
			continue
		}
		flipped = true
		if spec.Decisions[i] == 0 {
			spec.Decisions[i] = uint32(1 + g.rng.IntN(3))
		} else if g.rng.IntN(2) == 0 {
			spec.Decisions[i] = 0
		} else {
			spec.Decisions[i] = g.rng.Uint32N(16)
		}
	}
	if !flipped && lo < hi {
		spec.Decisions[lo+g.rng.IntN(hi-lo)] ^= 1
	}
	if g.rng.IntN(2) == 0 {
		spec.truncate(hi)
	}
}

// guidedFaults are the faults the fault operator enables, the ones that
// break a protocol in the middle: kills, power cuts, renames under a
// reader, pauses, failed and garbled I/O.
var guidedFaults = []string{sim.FaultCrash, sim.FaultPowerLoss, sim.FaultRenameRace, sim.FaultStop,
	sim.FaultFSError, sim.FaultEACCES, sim.FaultCorrupt, sim.FaultPIDChurn}

// fault makes a fault fire at about k.
func (g *guidedSearch) fault(spec *Spec, k, w int) {
	name := guidedFaults[g.rng.IntN(len(guidedFaults))]
	if spec.Faults.Get(name) == 0 || g.rng.IntN(3) == 0 {
		if spec.Faults.Get(name) == 0 {
			spec.Faults.Set(name, sim.AllFaultsPlan(g.rng.Uint64()).Get(name))
		}
		spec.truncate(clamp(k, 0, len(spec.Decisions)))
		return
	}
	var zeros []int
	for i := k; i < len(spec.Decisions) && i < k+4*w; i++ {
		if spec.Decisions[i] == 0 && spec.Keys != nil && strings.HasPrefix(spec.Keys[spec.Tags[i]], "step/") {
			zeros = append(zeros, i)
		}
	}
	if len(zeros) == 0 {
		spec.truncate(clamp(k, 0, len(spec.Decisions)))
		return
	}
	spec.Decisions[zeros[g.rng.IntN(len(zeros))]] = 1
}

// splice answers each stream as spec did before k, then as other does from
// that stream's same position on.
func (g *guidedSearch) splice(spec *Spec, other Spec, k int) {
	if spec.Keys == nil || other.Keys == nil {
		spec.truncate(clamp(k, 0, len(spec.Decisions)))
		return
	}
	k = clamp(k, 0, len(spec.Decisions))
	mine := streamLists(spec.Decisions[:k], spec.Tags[:k], spec.Keys)
	theirs := streamLists(other.Decisions, other.Tags, other.Keys)
	keys := slices.Clone(spec.Keys)
	for _, key := range other.Keys {
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	spec.Decisions, spec.Tags, spec.Keys = nil, nil, keys
	for id, key := range keys {
		list := mine[key]
		if rest := theirs[key]; len(rest) > len(list) {
			list = append(slices.Clone(list), rest[len(list):]...)
		}
		for _, v := range list {
			spec.Decisions = append(spec.Decisions, v)
			spec.Tags = append(spec.Tags, uint16(id))
		}
	}
}

// streamLists splits a keyed list into each stream's answers.
func streamLists(list []uint32, tags []uint16, keys []string) map[string][]uint32 {
	streams := map[string][]uint32{}
	for i, v := range list {
		key := keys[tags[i]]
		streams[key] = append(streams[key], v)
	}
	return streams
}

// pct switches to the PCT scheduler one depth deeper, drawing its
// priorities and change points afresh (the scheduler stream is dropped),
// and keeps the other streams' decisions before k.
func (g *guidedSearch) pct(spec *Spec, k int) {
	spec.truncate(clamp(k, 0, len(spec.Decisions)))
	if spec.Scheduler == sim.SchedulerPCT {
		spec.PCTDepth = min(spec.PCTDepth+1, 12)
	} else {
		spec.Scheduler = sim.SchedulerPCT
	}
	if spec.Keys == nil {
		return
	}
	sched := slices.Index(spec.Keys, "sched")
	if sched < 0 {
		return
	}
	var decisions []uint32
	var tags []uint16
	for i, tag := range spec.Tags {
		if int(tag) != sched {
			decisions, tags = append(decisions, spec.Decisions[i]), append(tags, tag)
		}
	}
	spec.Decisions, spec.Tags = decisions, tags
}
