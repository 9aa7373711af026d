package realstress

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// runTree is the span in which one run's process tree worked.
type runTree struct {
	run        int
	enter, end int64
	epoch      string
	pids       []int
}

// CheckRunMarks checks the marks of an EngineRun campaign: no two runs'
// trees work at once, and each run's epoch is above the epoch of every run
// whose tree started before it. It returns one line per violation.
func CheckRunMarks(marks []JobMark) []string {
	trees := runTrees(marks)
	var violations []string
	var last, top *runTree // the tree that ends last, and the highest epoch, among those started so far
	for i := range trees {
		t := &trees[i]
		if last != nil && t.enter <= last.end {
			violations = append(violations, fmt.Sprintf("run %d (epoch %s, pids %v) started at %s while run %d's tree (epoch %s, pids %v) worked until %s",
				t.run, t.epoch, t.pids, sinceFirst(t.enter, trees), last.run, last.epoch, last.pids, sinceFirst(last.end, trees)))
		}
		if top != nil && !epochAbove(t.epoch, top.epoch) {
			violations = append(violations, fmt.Sprintf("run %d has epoch %s, not above run %d's epoch %s, which started before it",
				t.run, t.epoch, top.run, top.epoch))
		}
		if last == nil || t.end > last.end {
			last = t
		}
		if top == nil || epochAbove(t.epoch, top.epoch) {
			top = t
		}
	}
	return violations
}

// runTrees gathers the marks by run, in the order the runs' trees started.
func runTrees(marks []JobMark) []runTree {
	byRun := map[int]*runTree{}
	for _, m := range marks {
		t := byRun[m.Run]
		if t == nil {
			t = &runTree{run: m.Run, enter: m.Ns, end: m.Ns, epoch: m.Epoch}
			byRun[m.Run] = t
		}
		t.enter, t.end = min(t.enter, m.Ns), max(t.end, m.Ns)
		if m.Event == "enter" && !slices.Contains(t.pids, m.PID) {
			t.pids = append(t.pids, m.PID)
		}
	}
	trees := make([]runTree, 0, len(byRun))
	for _, t := range byRun {
		trees = append(trees, *t)
	}
	sort.Slice(trees, func(i, j int) bool { return trees[i].enter < trees[j].enter })
	return trees
}

// epochAbove reports whether epoch a is a number above b's.
func epochAbove(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x > y
}

// sinceFirst renders ns relative to the first tree's start.
func sinceFirst(ns int64, trees []runTree) string {
	return fmt.Sprintf("+%.3fms", float64(ns-trees[0].enter)/1e6)
}
