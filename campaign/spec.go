package campaign

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// Spec is the complete input of one run: with it a run is a pure function.
// A seed file stores exactly a Spec.
type Spec struct {
	Engine    string
	Seed      uint64
	Scheduler sim.SchedulerKind
	PCTDepth  int
	// PCTSteps is pinned (not left to default to StepsMax) so that
	// shrinking StepsMax does not change the meaning of PCT's change-point
	// decisions.
	PCTSteps int
	StepsMax int
	Faults   sim.FaultPlan
	Params   Params
	// Decisions, when not nil, is replayed instead of drawing from Seed.
	Decisions []uint32
	// Tags and Keys give each decision's stream (sim Result.DecisionTags,
	// StreamKeys); nil Keys replays Decisions as one single-stream list.
	Tags []uint16
	Keys []string
	// ThenDraw, with Decisions, draws from Seed past the list's end
	// (sim.Config.ReplayThenDraw): a search candidate only, never stored.
	ThenDraw bool
}

// pctStepsDefault is PCT's expected run length: the order of a workload run.
const pctStepsDefault = 2_000

// Finding is what a run found: the outcome, a stable class naming the
// failure (the shrinker keeps it), and the full message.
type Finding struct {
	Outcome sim.Outcome
	Class   string
	Message string
}

// OK reports whether the run found nothing.
func (f Finding) OK() bool { return f.Outcome == sim.OutcomeOK }

// Same reports whether g is the same kind of failure as f.
func (f Finding) Same(g Finding) bool { return f.Outcome == g.Outcome && f.Class == g.Class }

// CheckTimeoutMessage begins the Verdict message of a history check that
// ran out of time: every engine's Check uses it, so CheckTimedOut knows it.
const CheckTimeoutMessage = "porcupine timeout"

// CheckTimedOut reports whether the finding is a history check that ran
// out of time (a Verdict message that begins CheckTimeoutMessage): no verdict,
// never a pass, and not reproducible either, since whether a check ends
// in time depends on the machine's load. A hunt does not credit it to a
// mutant, and a shrink whose final rerun checks in time reports it as an
// error, not as a broken determinism invariant.
func (f Finding) CheckTimedOut() bool {
	return f.Outcome == sim.OutcomeViolation && strings.HasPrefix(f.Class, "history: "+CheckTimeoutMessage)
}

func (f Finding) String() string {
	if f.OK() {
		return "ok"
	}
	return fmt.Sprintf("%v (%s)", f.Outcome, f.Class)
}

// Config returns the simulator configuration of the spec.
func (s Spec) Config(e *Engine, trace io.Writer) sim.Config {
	faults := s.Faults
	params := Params{}
	for name, value := range e.DefaultParams() {
		params[name] = value
	}
	for name, value := range s.Params {
		params[name] = value
	}
	return sim.Config{
		Seed:           s.Seed,
		Replay:         s.Decisions,
		ReplayThenDraw: s.ThenDraw,
		ReplayTags:     s.Tags,
		ReplayKeys:     s.Keys,
		StepsMax:       s.StepsMax,
		Scheduler:      s.Scheduler,
		PCTDepth:       s.PCTDepth,
		PCTSteps:       s.PCTSteps,
		Faults:         &faults,
		Setup:          e.Setup(params),
		Trace:          trace,
	}
}

// Execute runs the spec once and judges it. visualize asks the engine's
// check for porcupine's visualization.
func (c *Catalog) Execute(spec Spec, trace io.Writer, visualize bool) (sim.Result, Finding, Verdict, error) {
	e, err := c.Lookup(spec.Engine)
	if err != nil {
		return sim.Result{}, Finding{}, Verdict{}, err
	}
	result := sim.Run(spec.Config(e, trace))
	finding, verdict := judge(e, result, visualize)
	return result, finding, verdict, nil
}

// judge classifies a result: the simulator's own finding first, then the
// engine's history check (porcupine) on a run without a violation.
func judge(e *Engine, result sim.Result, visualize bool) (Finding, Verdict) {
	verdict := Verdict{OK: true}
	if result.Outcome != sim.OutcomeViolation && result.Outcome != sim.OutcomeNondeterminism && e.Check != nil {
		verdict = e.Check(result, visualize)
		if !verdict.OK {
			return Finding{Outcome: sim.OutcomeViolation, Class: "history: " + Class(verdict.Message),
				Message: "history check: " + verdict.Message}, verdict
		}
	}
	return Finding{Outcome: result.Outcome, Class: Class(result.Message), Message: result.Message}, verdict
}

var (
	stepPrefix  = regexp.MustCompile(`^step \d+: `)
	panicPhrase = regexp.MustCompile(`^(process \S+|the harness) panicked at step \d+: `)
)

// Class reduces a failure message to what must stay the same while
// shrinking: the step number, process names and values after the first
// colon are dropped ("step 12: invariant one-holder: 2 holders" becomes
// "invariant one-holder"; a panic keeps its panic value's first line, and
// a panic of the harness's own code says so).
func Class(message string) string {
	if message == "" {
		return ""
	}
	message = stepPrefix.ReplaceAllString(message, "")
	if panicPhrase.MatchString(message) {
		value := panicPhrase.ReplaceAllString(message, "")
		value, _, _ = strings.Cut(value, "\n")
		head, _, _ := strings.Cut(value, ":")
		if strings.HasPrefix(message, "the harness") {
			return "harness panic: " + strings.TrimSpace(head)
		}
		return "panic: " + strings.TrimSpace(head)
	}
	if strings.HasPrefix(message, "step budget") {
		return "step budget exhausted"
	}
	head, _, _ := strings.Cut(message, ":")
	head, _, _ = strings.Cut(head, "\n")
	return strings.TrimSpace(head)
}

// knobLines renders the spec's knobs as key=value lines in print order
// (without the decisions).
func (s Spec) knobLines() []string {
	lines := []string{
		"engine=" + s.Engine,
		fmt.Sprintf("seed=%d", s.Seed),
		"scheduler=" + s.Scheduler.String(),
		fmt.Sprintf("pct_depth=%d", s.PCTDepth),
		fmt.Sprintf("pct_steps=%d", s.PCTSteps),
		fmt.Sprintf("steps_max=%d", s.StepsMax),
		"faults=" + formatPlan(s.Faults),
	}
	names := make([]string, 0, len(s.Params))
	for name := range s.Params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		lines = append(lines, fmt.Sprintf("param.%s=%d", name, s.Params[name]))
	}
	return lines
}

// clone returns a deep copy, so shrinking candidates never alias.
func (s Spec) clone() Spec {
	c := s
	c.Params = Params{}
	for k, v := range s.Params {
		c.Params[k] = v
	}
	if s.Decisions != nil {
		c.Decisions = append([]uint32{}, s.Decisions...)
	}
	c.Tags, c.Keys = slices.Clone(s.Tags), slices.Clone(s.Keys)
	return c
}

// adopt makes the spec replay what result recorded (trailing zeros cut).
func (s *Spec) adopt(result sim.Result) {
	s.Decisions = trimZeros(result.Decisions)
	s.Tags, s.Keys = nil, nil
	if result.StreamKeys != nil {
		s.Tags = slices.Clone(result.DecisionTags[:len(s.Decisions)])
		s.Keys = slices.Clone(result.StreamKeys)
	}
}

// truncate keeps the first n decisions (and their stream tags).
func (s *Spec) truncate(n int) {
	s.Decisions = s.Decisions[:n]
	if s.Tags != nil {
		s.Tags = s.Tags[:n]
	}
}

// cut deletes decisions [start, end) (and their stream tags).
func (s *Spec) cut(start, end int) {
	s.Decisions = append(append([]uint32{}, s.Decisions[:start]...), s.Decisions[end:]...)
	if s.Tags != nil {
		s.Tags = append(append([]uint16{}, s.Tags[:start]...), s.Tags[end:]...)
	}
}

// seeded drops the recorded list: the spec draws from its seed again.
func (s *Spec) seeded() { s.Decisions, s.Tags, s.Keys = nil, nil, nil }

// parseScheduler parses a scheduler name.
func parseScheduler(name string) (sim.SchedulerKind, error) {
	switch name {
	case "random":
		return sim.SchedulerRandom, nil
	case "pct":
		return sim.SchedulerPCT, nil
	case "sticky":
		return sim.SchedulerSticky, nil
	}
	return 0, &UsageError{Message: fmt.Sprintf("unknown scheduler %q (random, pct or sticky)", name)}
}

// faultsPrintedWhenOn are the faults added after seed format v1.
var faultsPrintedWhenOn = []string{sim.FaultProcfs, sim.FaultStop, sim.FaultCotenant}

// formatPlan prints a fault plan exactly (sim's String rounds to 4 places,
// which would change a swarm plan's probabilities in a seed file). A fault
// newer than the seed files' format (faultsPrintedWhenOn) is printed only
// when on, so a spec without it keeps its text, hence its hash and its seed
// file's name (a missing fault parses as off).
func formatPlan(plan sim.FaultPlan) string {
	fields := make([]string, 0, len(faultNames))
	for _, name := range faultNames {
		if plan.Get(name) == 0 && slices.Contains(faultsPrintedWhenOn, name) {
			continue
		}
		fields = append(fields, name+"="+strconv.FormatFloat(plan.Get(name), 'g', -1, 64))
	}
	return strings.Join(fields, " ")
}
