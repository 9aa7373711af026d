package models

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// The directory lease model as porcupine runs it: the memoized model, the
// history contract, the check and the operation report.

// DirLeaseModel returns the directory lease model (unpartitioned). It is a
// deterministic porcupine.Model: every uncertainty lives inside the state.
// Each model value memoizes its steps (porcupine's search revisits the same
// state and operation many times); use a fresh one per history.
func DirLeaseModel() porcupine.Model {
	memo := &dirStepMemo{results: map[dirStepKey]dirStepResult{}}
	return porcupine.Model{
		Init:              func() any { return encodeDirWorld(dirWorld{}) },
		Step:              memo.step,
		Hash:              dirHash,
		DescribeOperation: DescribeDirLeaseOperation,
		DescribeState:     DescribeDirLeaseState,
	}
}

// dirWalkModel is DirLeaseModel's steps on decoded worlds, for the order
// walks (checkWitnessFirst): a walk visits each state once, so the memo
// only costs there, and decoding and encoding the world around every step
// was most of a walk (4% of a dirlease campaign). dirStep's state is
// encodeDirWorld of this one's at every step
// (TestDirWalkModelStepsAsDirLeaseModel): the encoding keeps every field.
// It has no Hash or Equal: porcupine never runs it.
func dirWalkModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return dirWorld{} },
		Step: func(state, input, output any) (bool, any) {
			next, ok := dirStepWorld(state.(dirWorld), input, output)
			if !ok {
				return false, state
			}
			return true, next.normalized()
		},
	}
}

// dirStepMemo caches dirStep. Step stays a pure function: the cache only
// remembers its answers. Inputs and outputs of this model are comparable.
type dirStepMemo struct {
	mutex   sync.Mutex
	results map[dirStepKey]dirStepResult
}

type dirStepKey struct {
	state         dirState
	input, output any
}

type dirStepResult struct {
	ok   bool
	next any
}

// dirStepMemoMax bounds the cache; past it, steps are computed afresh.
const dirStepMemoMax = 1 << 16

func (m *dirStepMemo) step(state, input, output any) (bool, any) {
	key := dirStepKey{state.(dirState), input, output}
	m.mutex.Lock()
	result, hit := m.results[key]
	m.mutex.Unlock()
	if hit {
		return result.ok, result.next
	}
	ok, next := dirStep(state, input, output)
	m.mutex.Lock()
	if len(m.results) < dirStepMemoMax {
		m.results[key] = dirStepResult{ok, next}
	}
	m.mutex.Unlock()
	return ok, next
}

// ValidateDirLeaseHistory checks the history contract (see the package
// comment) for a directory lease history, and that every DirCreate names
// a fresh Path (claims are keyed by path).
func ValidateDirLeaseHistory(ops []porcupine.Operation) error {
	paths := map[string]bool{}
	for i, op := range ops {
		if in, ok := op.Input.(DirCreate); ok {
			if paths[in.Path] {
				return fmt.Errorf("operation %d: a second DirCreate on path %q; give every creation a fresh path", i, in.Path)
			}
			paths[in.Path] = true
		}
	}
	err := validateHistory(ops, func(input any) (procOp, bool) {
		switch in := input.(type) {
		case DirCreate:
			return procOp{output: DirCreateResult{}, proc: in.Proc, host: in.Host}, in.Proc > 0 && in.Host != "" && in.Path != "" && in.Role != 0
		case DirUpdate:
			return procOp{output: DirUpdateResult{}, proc: in.Proc}, in.Proc > 0 && in.ClaimID != "" && (in.Child == 0 || in.ChildHost != "")
		case DirRelease:
			return procOp{output: DirReleaseResult{}, proc: in.Proc}, in.Proc > 0 && in.ClaimID != ""
		case DirRecover:
			return procOp{output: DirRecoverResult{}, proc: in.Proc, host: in.Host}, in.Proc > 0
		case DirUse:
			return procOp{output: DirUseResult{}, proc: in.Proc}, in.Proc > 0
		case ProcessDeath:
			return procOp{deathProc: in.Proc}, in.Proc > 0
		case Reboot:
			return procOp{rebootHost: in.Host}, in.Host != ""
		case PIDReuse, DirSwap, DirPublish, DirRemove, DirRestore, DirClaimSwap, DirClaimReturn:
			return procOp{}, true
		}
		return procOp{}, false
	})
	return err
}

// annotateChildFates fills DirUpdate.childFate from the ProcessDeath events
// of the history, so the model knows whether a child it records had
// already died. It returns a copy; ops is not modified.
func annotateChildFates(ops []porcupine.Operation) []porcupine.Operation {
	deathAt := map[int]int64{}
	for _, op := range ops {
		if in, ok := op.Input.(ProcessDeath); ok {
			deathAt[in.Proc] = op.Call
		}
	}
	annotated := append([]porcupine.Operation(nil), ops...)
	for i, op := range annotated {
		in, ok := op.Input.(DirUpdate)
		if !ok || in.Child == 0 {
			continue
		}
		at, dead := deathAt[in.Child]
		switch {
		case !dead || at > op.Return:
			in.childFate = childAliveAtReturn
		case at < op.Call:
			in.childFate = childDeadBeforeCall
		default:
			in.childFate = childDiedDuring
		}
		annotated[i].Input = in
	}
	return annotated
}

// CheckDirLease validates ops and checks them against DirLeaseModel. See
// CheckLease for the meaning of the results; it panics on an invalid history.
func CheckDirLease(ops []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	if err := ValidateDirLeaseHistory(ops); err != nil {
		panic("models: invalid dirlease history: " + err.Error())
	}
	return checkWitnessFirst(dirWalkModel(), DirLeaseModel(), annotateChildFates(ops), timeout)
}

// DescribeDirLeaseOperation renders one dirlease operation for the report.
func DescribeDirLeaseOperation(input, output any) string {
	if text, ok := describeEnvironment(input); ok {
		return escape(text)
	}
	var call string
	switch in := input.(type) {
	case DirCreate:
		call = fmt.Sprintf("p%d Create(%s, %s, recover after %d)", in.Proc, in.Path, in.Role, in.RecoverAfterMs)
	case DirUpdate:
		call = fmt.Sprintf("p%d Update(%s claim %s, %s -> %s, child p%d)", in.Proc, in.Path, in.ClaimID, in.FromPhase, in.ToPhase, in.Child)
	case DirRelease:
		call = fmt.Sprintf("p%d Release(%s claim %s, %s)", in.Proc, in.Path, in.ClaimID, in.Phase)
	case DirRecover:
		call = fmt.Sprintf("p%d Recover(now %d)", in.Proc, in.NowMs)
	case DirUse:
		call = fmt.Sprintf("p%d Use(%s)", in.Proc, in.Path)
	case DirSwap:
		return escape("Swap(" + in.Path + ")")
	case DirPublish:
		return escape("Publish(" + in.Path + ")")
	case DirRemove:
		return escape("Remove(" + in.Path + ")")
	case DirRestore:
		return escape(fmt.Sprintf("Restore(%s, %s, child p%d)", in.Path, in.Phase, in.ChildProc))
	case DirClaimSwap:
		return escape("ClaimSwappedIn(" + in.Path + ")")
	case DirClaimReturn:
		return escape("ClaimReturned(" + in.Path + ")")
	default:
		call = fmt.Sprintf("%T", input)
	}
	return escape(call + " -> " + describeDirOutput(output))
}

func describeDirOutput(output any) string {
	switch out := output.(type) {
	case Unknown:
		return "unknown"
	case DirCreateResult:
		return "created(" + out.ClaimID + ")"
	case DirUpdateResult:
		return describeCAS(out.Kind)
	case DirReleaseResult:
		if out.Kind == CASOK {
			return "released"
		}
		return describeCAS(out.Kind)
	case DirRecoverResult:
		if out.Failed {
			return "failed"
		}
		text := fmt.Sprintf("recovered %d, published %d, active %d, indeterminate %d",
			out.Recovered, out.Published, out.Active, out.Indeterminate)
		if out.ReadSwapped {
			text += " (read a swapped claim)"
		}
		return text
	case DirUseResult:
		switch out.Kind {
		case UsePresent:
			return "present"
		case UseForeign:
			return "foreign"
		case UseMissing:
			return "missing"
		}
	}
	return fmt.Sprintf("%+v", output)
}

// DescribeDirLeaseState renders one dirlease state for the report.
func DescribeDirLeaseState(state any) string {
	s := decodeDirState(state.(dirState))
	parts := make([]string, 0, len(s.claims)+1)
	if s.phantoms > 0 {
		parts = append(parts, fmt.Sprintf("up to %d phantom claims", s.phantoms))
	}
	for _, c := range s.claims {
		var contents []string
		for _, content := range c.contents {
			text := content.phase.String()
			if content.childProc != 0 {
				text += fmt.Sprintf(" child p%d %s", content.childProc, [...]string{"", "alive", "dead", "maybe alive"}[content.child])
			}
			contents = append(contents, text)
		}
		text := fmt.Sprintf("%s: claim %s %s %s, owner p%d %s, dir %s", c.path, orUnknown(c.claimID), c.role,
			strings.Join(contents, " | "), c.ownerProc, liveness(c.ownerAlive),
			[...]string{"present", "foreign", "absent", "published"}[c.dir])
		if c.maybeGone {
			text += " (maybe gone)"
		}
		parts = append(parts, text)
	}
	if len(parts) == 0 {
		return "no claims"
	}
	return escape(strings.Join(parts, "; "))
}
