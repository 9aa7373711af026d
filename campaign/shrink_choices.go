package campaign

import (
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// The passes of this file work on the choices (non-zero decisions) rather
// than on positions in the list. A long list is mostly zeros, so chunking
// positions spends most runs on chunks that hold nothing, or one choice
// each; and at chunk size one a pass over positions spends a run on every
// position of a list of thousands. These take the choices as the set to minimise.
//
// What keeps a shrunk list large is mostly time. A step takes
// 1 + d µs of virtual time, where d is a decision of the stepping
// process's "step/" stream, drawn below 50; a failure that needs a guard
// to grow old, a wait to run out or a pause to outlast a check needs the
// clock to move by milliseconds, that is by hundreds of drawn decisions,
// no single one of which can go (the rest then fall short). A replayed
// clock decision may ask for up to sim.StepTimeLong µs
// (sim.Decisions.IntnOrLong), so passConcentrate puts the same time into
// fewer steps: one, unless the failure needs the time spread out.

// stepClockLimit bounds a replayed step's clock decision, so
// stepClockLimit-1 is the longest step one decision buys.
const stepClockLimit = sim.StepTimeLong

// stepStreamPrefix names the streams that hold the clock decisions (and
// the chosen process's crash and stop draws, which are 0 or 1).
const stepStreamPrefix = "step/"

// choiceIndices lists the positions of the current list's choices that
// keep passes: all of them, or only those where keep says so.
func (s *shrinker) choiceIndices(keep func(i int, v uint32) bool) []int {
	var indices []int
	for i, v := range s.current.Decisions {
		if v != 0 && (keep == nil || keep(i, v)) {
			indices = append(indices, i)
		}
	}
	return indices
}

// passChoices is delta debugging over the choices: it zeroes a part of
// them at a time, in parts of half of them, then a quarter, down to one
// choice. After a part is zeroed the scan goes on at the same place with
// the same size (ddmin would start over, which costs a run per choice per
// success when most choices are needed), so one pass costs about two runs
// per choice plus one per success, and k needed choices among n far
// fewer. Zeroing keeps every stream's later decisions aligned.
func (s *shrinker) passChoices() bool {
	progress := false
	for size := (len(s.choiceIndices(nil)) + 1) / 2; size >= 1 && !s.exhausted(); size /= 2 {
		for start := 0; !s.exhausted(); {
			indices := s.choiceIndices(nil)
			if start >= len(indices) {
				break
			}
			c := s.current.clone()
			for _, i := range indices[start:min(start+size, len(indices))] {
				c.Decisions[i] = 0
			}
			if s.try(c) {
				progress = true
				continue // the next part now starts where this one did
			}
			start += size
		}
	}
	return progress
}

// isClock reports whether decision i is (very likely) a step's clock
// decision: a value above 1 in a "step/" stream (a crash or stop draw
// answers 0 or 1). Without stream keys (a version 1 list) nothing is.
func (s *shrinker) isClock(i int, v uint32) bool {
	if s.current.Keys == nil || v < 2 || v >= stepClockLimit {
		return false
	}
	return strings.HasPrefix(s.current.Keys[s.current.Tags[i]], stepStreamPrefix)
}

// passConcentrate moves the virtual time that a group of clock decisions
// buys onto as few of them as it fits. It first merges neighbours
// (mergePairs), which keeps the time where it was to within a step; then,
// in each group (the whole list's
// clock decisions first, then halves, quarters, down to pairs) the sum of
// their values is given, stepClockLimit-1 at a time, to the group's first
// decisions, and the rest are zeroed. Each group is one candidate; it
// keeps the time spent in the group's window, spent earlier in it.
func (s *shrinker) passConcentrate() bool {
	progress := s.mergePairs()
	for size := len(s.choiceIndices(s.isClock)); size >= 2 && !s.exhausted(); size /= 2 {
		for start := 0; !s.exhausted(); start += size {
			clocks := s.choiceIndices(s.isClock)
			if start >= len(clocks) {
				break
			}
			group := clocks[start:min(start+size, len(clocks))]
			c := s.current.clone()
			if concentrate(c.Decisions, group) && s.try(c) {
				progress = true
			}
		}
	}
	return progress
}

// mergePairs merges each clock decision with the next one (concentrate of
// the pair), over all of the list at once, as long as that still fails:
// each success about halves the clock choices in one run. When the whole
// list does not take it, its halves are tried, then their halves, down to
// a sixteenth of it.
func (s *shrinker) mergePairs() bool {
	progress := false
	for spans := 1; spans <= mergePairsSpans && !s.exhausted(); {
		clocks := s.choiceIndices(s.isClock)
		pairs := len(clocks) / 2
		if pairs == 0 {
			break
		}
		merged := false
		per := (pairs + spans - 1) / spans
		for first := 0; first < pairs && !s.exhausted(); first += per {
			c := s.current.clone()
			changed := false
			for pair := first; pair < min(first+per, pairs); pair++ {
				if concentrate(c.Decisions, clocks[2*pair:2*pair+2]) {
					changed = true
				}
			}
			if changed && s.try(c) {
				merged, progress = true, true
				break
			}
		}
		if merged {
			spans = 1 // the whole list again
		} else {
			spans *= 2
		}
	}
	return progress
}

// mergePairsSpans bounds how finely mergePairs splits the list.
const mergePairsSpans = 16

// concentrate rewrites list at the positions of group so that their sum is
// unchanged and held by as few of them (the first) as it fits. It reports
// whether that takes fewer positions than before.
func concentrate(list []uint32, group []int) bool {
	sum := uint32(0)
	for _, i := range group {
		sum += list[i]
	}
	const most = stepClockLimit - 1
	needed := int((sum + most - 1) / most)
	if needed >= len(group) {
		return false
	}
	for _, i := range group {
		v := min(sum, most)
		list[i], sum = v, sum-v
	}
	return true
}

// shrinkSize is what a shrink lowers, in order of importance: the workload
// knobs and enabled faults, then the choices, the list's length, and the
// sum of its values. A round made progress only if it lowered one.
type shrinkSize struct {
	knobs, faults, choices, decisions int
	sum                               uint64
}

func (s *shrinker) size() shrinkSize { return sizeOf(s.current) }

// sizeOf is spec's shrinkSize.
func sizeOf(spec Spec) shrinkSize {
	z := shrinkSize{choices: Choices(spec.Decisions), decisions: len(spec.Decisions)}
	for _, value := range spec.Params {
		z.knobs += value
	}
	for _, name := range faultNames {
		if spec.Faults.Get(name) > 0 {
			z.faults++
		}
	}
	for _, v := range spec.Decisions {
		z.sum += uint64(v)
	}
	return z
}

// less orders sizes lexicographically.
func (z shrinkSize) less(o shrinkSize) bool {
	switch {
	case z.knobs != o.knobs:
		return z.knobs < o.knobs
	case z.faults != o.faults:
		return z.faults < o.faults
	case z.choices != o.choices:
		return z.choices < o.choices
	case z.decisions != o.decisions:
		return z.decisions < o.decisions
	}
	return z.sum < o.sum
}
