package leasecli

// Verdict is inspect's one-word answer for a state home: what a run
// started now meets. `leasereal inspect` prints it for every engine, and
// the simulated operators act on it, so both judge a state by this code.
type Verdict string

const (
	// VerdictFree: a run gets the lease (stale records are taken over).
	VerdictFree Verdict = "free"
	// VerdictHeld: a live holder has it; a run is busy or waits.
	VerdictHeld Verdict = "held"
	// VerdictWaiting: time or a process ending resolves it; no operator yet.
	VerdictWaiting Verdict = "waiting"
	// VerdictOperator: only an operator's command resolves it.
	VerdictOperator Verdict = "operator-needed"
	// VerdictRefused: the engine will not read the state safely.
	VerdictRefused Verdict = "refused"
)

// verdictRank orders verdicts by what an operator must look at first.
var verdictRank = map[Verdict]int{VerdictFree: 0, VerdictHeld: 1, VerdictWaiting: 2, VerdictOperator: 3, VerdictRefused: 4}

// Worse is the verdict of a state home holding states judged a and b.
func Worse(a, b Verdict) Verdict {
	if verdictRank[b] > verdictRank[a] {
		return b
	}
	return a
}

// OperatorAction is one thing an operator resolves: the path it concerns,
// why it blocks, and the command inspect prints for it. An operator who
// follows inspect runs exactly Command.
type OperatorAction struct {
	Path    string `json:"path"`
	Why     string `json:"why"`
	Command string `json:"command"`
}
