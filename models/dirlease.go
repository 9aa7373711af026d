package models

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The directory lease model (engine `dirlease`): claims on private working
// directories, and recovery of abandoned ones.
//
// State: up to MaxDirClaims claims, sorted by Path. A claim is keyed by the
// Path of its directory (the simulator never creates two claims on one path
// at once) and records what the claim file says (claim ID, role, phase,
// owner, child, recoverAfterMs) beside the ground truth the engine can only
// inspect: whether the owner and child are alive, and what is at the path
// now (the claimed directory, another directory swapped in by a rename race,
// nothing, or, for a bundle stage, nothing because it was published to its
// output root).
//
// Recovery crosses every claim, so the model is not partitioned.
//
// Legal outcomes at the linearization point:
//
//	Create     created(id)        no claim on Path.
//	Update     invalid            iff DirTransitionValid says no (the caller's
//	                              view; no effect).
//	           ok                 the claim file holds the caller's claim
//	                              with FromPhase and FromChild.
//	           changed            it does not.
//	Release    released / changed  as for Update; released removes the claim
//	                              file (the directory stays with its owner).
//	Use        present / foreign / missing: what is at Path, exactly, while
//	           a claim on Path exists (untracked otherwise).
//	Recover    succeeded(counts)  some set S of claims was recovered, each
//	                              "recoverable" (below) and not foreign; a
//	                              claim in S with its directory present adds
//	                              to Recovered, published adds to Published,
//	                              absent adds to Recovered or nothing. Every
//	                              claim in S is removed, with its directory.
//	           failed / unknown   any such S, where a claim's directory may
//	                              also be removed while its claim file stays.
//
// A claim is recoverable, following the seed's recovery on ground truth:
// its owner is dead and it is a bundle stage, or a raw working directory
// that is preparing or settled, running with a dead child, or launching
// with NowMs >= RecoverAfterMs. A recovery that removes anything else is the
// bug "a live directory removed": it shows as counts no legal S explains,
// or as a later Use, Update or Release that finds the claim or directory
// gone. A foreign directory (another identity) must never be removed.
//
// What the model does not check: the Active and Indeterminate counts.
// Recovery reads the claim files in one batch and then inspects each owner
// at its own instant, while claims are released and owners die; no single
// instant explains those two counts in general, and they carry no effect.

// MaxDirClaims bounds the claims standing at once (in any branch the model
// explores). Exceeding it is a workload too big for the model: the check
// panics with that message rather than give a wrong verdict. Size the
// workload so that recovery keeps up (6 clients stay far below it).
const MaxDirClaims = 16

// DirRole is the role of a directory lease.
type DirRole uint8

const (
	RoleRawWorking DirRole = iota + 1
	RoleBundleStage
)

func (r DirRole) String() string {
	switch r {
	case RoleRawWorking:
		return "raw-working"
	case RoleBundleStage:
		return "bundle-stage"
	}
	return fmt.Sprintf("DirRole(%d)", int(r))
}

// DirPhase is the lifecycle phase of a raw working directory lease.
type DirPhase uint8

const (
	DirPreparing DirPhase = iota + 1
	DirLaunching
	DirRunning
	DirSettled
)

func (p DirPhase) String() string {
	switch p {
	case DirPreparing:
		return "preparing"
	case DirLaunching:
		return "launching"
	case DirRunning:
		return "running"
	case DirSettled:
		return "settled"
	}
	return fmt.Sprintf("DirPhase(%d)", int(p))
}

// DirTransitionValid is the seed's transition table
// (updateBeeperMessageLikeMeDirectoryLease), restated for the model: only a
// raw working lease changes phase; launching from preparing or settled,
// running from launching, settled from launching or running; a child
// process is given exactly when entering running.
func DirTransitionValid(role DirRole, current, next DirPhase, child bool) bool {
	if role != RoleRawWorking || child != (next == DirRunning) {
		return false
	}
	switch next {
	case DirLaunching:
		return current == DirPreparing || current == DirSettled
	case DirRunning:
		return current == DirLaunching
	case DirSettled:
		return current == DirLaunching || current == DirRunning
	}
	return false
}

// DirCreate is the input of a directory lease creation on Path (a
// directory the caller made beforehand).
type DirCreate struct {
	Proc           int
	Host           string
	Path           string
	Role           DirRole
	RecoverAfterMs int64
}

// DirCreateResult is the output of a creation (or Unknown{}).
type DirCreateResult struct {
	ClaimID string
}

// DirUpdate is the input of a phase change, as the caller's handle sees
// the claim. Child is the child process recorded when entering running
// (0 = none); FromChild the one the handle holds.
type DirUpdate struct {
	Proc      int
	Path      string
	ClaimID   string
	Role      DirRole
	FromPhase DirPhase
	ToPhase   DirPhase
	FromChild int
	Child     int
	ChildHost string
	// childFate is filled by CheckDirLease from the history: whether Child
	// had already died, or died while this update ran.
	childFate childFate
}

type childFate uint8

const (
	childAliveAtReturn childFate = iota
	childDeadBeforeCall
	childDiedDuring
)

// DirUpdateResult is the output of a phase change (or Unknown{}).
type DirUpdateResult struct {
	Kind CASKind
}

// DirRelease is the input of a release, as the caller's handle sees the
// claim.
type DirRelease struct {
	Proc    int
	Path    string
	ClaimID string
	Phase   DirPhase
	Child   int
}

// DirReleaseResult is the output of a release (or Unknown{}); CASOK means
// released. Release never answers CASInvalid.
type DirReleaseResult struct {
	Kind CASKind
}

// DirRecover is the input of a recovery pass run at wall time NowMs (the
// engine takes the time as a parameter, like the seed's nowMs).
type DirRecover struct {
	Proc  int
	Host  string
	NowMs int64
}

// DirRecoverResult is the output of a recovery pass (or Unknown{}).
// Failed: the pass stopped with an error (after possibly recovering some
// claims); the counts are then ignored.
type DirRecoverResult struct {
	Failed        bool
	Recovered     int
	Published     int
	Active        int
	Indeterminate int
}

// DirUse is the input of "Proc looks at Path" (stat and identity check),
// done by the owner, its child, or a co-tenant whose directory was swapped
// in. It is how a removed live directory becomes visible in the history.
type DirUse struct {
	Proc int
	Path string
}

// DirUseKind is what DirUse found at the path.
type DirUseKind uint8

const (
	// UsePresent: the claimed directory (same device, inode, birth time).
	UsePresent DirUseKind = iota + 1
	// UseForeign: a directory with another identity.
	UseForeign
	// UseMissing: nothing.
	UseMissing
)

// DirUseResult is the output of DirUse.
type DirUseResult struct {
	Kind DirUseKind
}

// DirSwap is the environment event "a rename race put another directory at
// Path" (the claimed one moved away).
type DirSwap struct{ Path string }

// DirPublish is the environment event "the bundle stage at Path was renamed
// to its output root" (the owner's publication step).
type DirPublish struct{ Path string }

// DirRemove is the environment event "the directory at Path was removed"
// (by its owner, or externally).
type DirRemove struct{ Path string }

type dirAt uint8

const (
	dirPresent dirAt = iota
	dirForeign
	dirAbsent
	dirPublished
)

// dirClaim is one claim of the state. Comparable.
type dirClaim struct {
	path           string
	claimID        string // "" = unknown (created by an operation of unknown outcome)
	role           DirRole
	phase          DirPhase
	ownerProc      int
	ownerHost      string
	ownerAlive     bool
	childProc      int
	childHost      string
	childAlive     bool
	recoverAfterMs int64
	dir            dirAt
}

// dirState is one possible state: claims[:count], sorted by path. Comparable.
type dirState struct {
	count  int
	claims [MaxDirClaims]dirClaim
}

func (s dirState) find(path string) int {
	for i := 0; i < s.count; i++ {
		if s.claims[i].path == path {
			return i
		}
	}
	return -1
}

func (s dirState) with(c dirClaim) dirState {
	if s.count == MaxDirClaims {
		panic(fmt.Sprintf("models: more than MaxDirClaims (%d) directory claims at once: shrink the workload", MaxDirClaims))
	}
	s.claims[s.count] = c
	s.count++
	sort.Slice(s.claims[:s.count], func(i, j int) bool { return s.claims[i].path < s.claims[j].path })
	return s
}

func (s dirState) without(i int) dirState {
	copy(s.claims[i:s.count], s.claims[i+1:s.count])
	s.count--
	s.claims[s.count] = dirClaim{}
	return s
}

// recoverable reports whether recovery may remove claim c at nowMs.
func (c dirClaim) recoverable(nowMs int64) bool {
	if c.ownerAlive {
		return false
	}
	if c.role == RoleBundleStage {
		return true
	}
	switch c.phase {
	case DirPreparing, DirSettled:
		return true
	case DirRunning:
		return !c.childAlive
	case DirLaunching:
		return nowMs >= c.recoverAfterMs
	}
	return false
}

func dirStep(state, input, output any) []any {
	s := state.(dirState)
	switch in := input.(type) {
	case DirCreate:
		return dirStepCreate(s, in, output)
	case DirUpdate:
		return dirStepUpdate(s, in, output)
	case DirRelease:
		return dirStepRelease(s, in, output)
	case DirRecover:
		return dirStepRecover(s, in, output)
	case DirUse:
		return dirStepUse(s, in, output)
	case ProcessDeath:
		for i := 0; i < s.count; i++ {
			c := &s.claims[i]
			c.ownerAlive = c.ownerAlive && c.ownerProc != in.Proc
			c.childAlive = c.childAlive && c.childProc != in.Proc
		}
		return []any{s}
	case Reboot:
		for i := 0; i < s.count; i++ {
			c := &s.claims[i]
			c.ownerAlive = c.ownerAlive && c.ownerHost != in.Host
			c.childAlive = c.childAlive && c.childHost != in.Host
		}
		return []any{s}
	case PIDReuse:
		return []any{s}
	case DirSwap:
		return []any{s.moveDir(in.Path, dirForeign)}
	case DirPublish:
		return []any{s.moveDir(in.Path, dirPublished)}
	case DirRemove:
		return []any{s.moveDir(in.Path, dirAbsent)}
	}
	panic(fmt.Sprintf("models: dirlease model got input %T", input))
}

func (s dirState) moveDir(path string, to dirAt) dirState {
	if i := s.find(path); i >= 0 {
		s.claims[i].dir = to
	}
	return s
}

func dirStepCreate(s dirState, in DirCreate, output any) []any {
	fresh := s.find(in.Path) < 0
	claim := dirClaim{
		path: in.Path, role: in.Role, phase: DirPreparing, ownerProc: in.Proc, ownerHost: in.Host,
		ownerAlive: true, recoverAfterMs: in.RecoverAfterMs, dir: dirPresent,
	}
	out, known := output.(DirCreateResult)
	if !known {
		mustUnknown(output)
		if fresh {
			return []any{s, s.with(claim)}
		}
		return []any{s}
	}
	if !fresh || out.ClaimID == "" {
		return nil
	}
	claim.claimID = out.ClaimID
	return []any{s.with(claim)}
}

// holds reports the index of the claim whose file holds exactly what the
// caller's handle holds, or -1.
func (s dirState) holds(path, claimID string, proc int, phase DirPhase, child int) int {
	i := s.find(path)
	if i < 0 {
		return -1
	}
	c := s.claims[i]
	if c.claimID == "" || c.claimID != claimID || c.ownerProc != proc || c.phase != phase || c.childProc != child {
		return -1
	}
	return i
}

func (s dirState) updated(i int, in DirUpdate, childAlive bool) dirState {
	c := &s.claims[i]
	c.phase, c.childProc, c.childHost, c.childAlive = in.ToPhase, in.Child, in.ChildHost, in.Child != 0 && childAlive
	return s
}

func dirStepUpdate(s dirState, in DirUpdate, output any) []any {
	valid := DirTransitionValid(in.Role, in.FromPhase, in.ToPhase, in.Child != 0)
	i := s.holds(in.Path, in.ClaimID, in.Proc, in.FromPhase, in.FromChild)
	applied := func() []any {
		switch in.childFate {
		case childDeadBeforeCall:
			return []any{s.updated(i, in, false)}
		case childDiedDuring:
			return []any{s.updated(i, in, true), s.updated(i, in, false)}
		}
		return []any{s.updated(i, in, true)}
	}
	out, known := output.(DirUpdateResult)
	if !known {
		mustUnknown(output)
		if valid && i >= 0 {
			return append([]any{s}, applied()...)
		}
		return []any{s}
	}
	switch out.Kind {
	case CASInvalid:
		if !valid {
			return []any{s}
		}
	case CASOK:
		if valid && i >= 0 {
			return applied()
		}
	case CASChanged:
		if valid && i < 0 {
			return []any{s}
		}
	}
	return nil
}

func dirStepRelease(s dirState, in DirRelease, output any) []any {
	i := s.holds(in.Path, in.ClaimID, in.Proc, in.Phase, in.Child)
	out, known := output.(DirReleaseResult)
	if !known {
		mustUnknown(output)
		if i >= 0 {
			return []any{s, s.without(i)}
		}
		return []any{s}
	}
	switch out.Kind {
	case CASOK:
		if i >= 0 {
			return []any{s.without(i)}
		}
	case CASChanged:
		if i < 0 {
			return []any{s}
		}
	}
	return nil
}

func dirStepUse(s dirState, in DirUse, output any) []any {
	out, known := output.(DirUseResult)
	if !known {
		mustUnknown(output)
		return []any{s}
	}
	i := s.find(in.Path)
	if i < 0 {
		return []any{s} // untracked path: anything may be there
	}
	want := UseMissing
	switch s.claims[i].dir {
	case dirPresent:
		want = UsePresent
	case dirForeign:
		want = UseForeign
	}
	if out.Kind == want {
		return []any{s}
	}
	return nil
}

// recoveryOutcome is one way a recovery pass could have ended.
type recoveryOutcome struct {
	state                dirState
	recovered, published int
}

// recoveryOutcomes enumerates the outcomes of a pass at nowMs. partial
// allows a claim's directory to be removed while its claim file stays (a
// pass cut short between the two).
func recoveryOutcomes(s dirState, nowMs int64, partial bool) []recoveryOutcome {
	outcomes := []recoveryOutcome{{state: dirState{}}}
	for i := 0; i < s.count; i++ {
		c := s.claims[i]
		var next []recoveryOutcome
		for _, o := range outcomes {
			next = append(next, recoveryOutcome{o.state.with(c), o.recovered, o.published}) // left alone
			if !c.recoverable(nowMs) || c.dir == dirForeign {
				continue
			}
			switch c.dir {
			case dirPresent:
				next = append(next, recoveryOutcome{o.state, o.recovered + 1, o.published})
				if partial {
					gone := c
					gone.dir = dirAbsent
					next = append(next, recoveryOutcome{o.state.with(gone), o.recovered + 1, o.published})
				}
			case dirPublished:
				next = append(next, recoveryOutcome{o.state, o.recovered, o.published + 1})
			case dirAbsent:
				next = append(next, recoveryOutcome{o.state, o.recovered, o.published},
					recoveryOutcome{o.state, o.recovered + 1, o.published})
			}
		}
		outcomes = next
	}
	return outcomes
}

func dirStepRecover(s dirState, in DirRecover, output any) []any {
	out, known := output.(DirRecoverResult)
	if !known {
		mustUnknown(output)
	}
	partial := !known || out.Failed
	var next []any
	for _, o := range recoveryOutcomes(s, in.NowMs, partial) {
		if partial || (o.recovered == out.Recovered && o.published == out.Published) {
			next = append(next, o.state)
		}
	}
	return next
}

func dirHash(state any) uint64 {
	s := state.(dirState)
	h := newHasher()
	h.int(int64(s.count))
	for i := 0; i < s.count; i++ {
		c := s.claims[i]
		h.string(c.path)
		h.string(c.claimID)
		h.int(int64(c.phase))
		h.bool(c.ownerAlive)
		h.int(int64(c.childProc))
		h.bool(c.childAlive)
		h.int(int64(c.dir))
	}
	return h.sum
}

// DirLeaseModel returns the directory lease model (unpartitioned).
func DirLeaseModel() porcupine.Model {
	nondeterministic := porcupine.NondeterministicModel{
		Init:              func() []any { return []any{dirState{}} },
		Step:              dirStep,
		Hash:              dirHash,
		DescribeOperation: DescribeDirLeaseOperation,
		DescribeState:     DescribeDirLeaseState,
	}
	return nondeterministic.ToModel()
}

// ValidateDirLeaseHistory checks the history contract (see the package
// comment) for a directory lease history.
func ValidateDirLeaseHistory(ops []porcupine.Operation) error {
	err := validateHistory(ops, func(input any) (procOp, bool) {
		switch in := input.(type) {
		case DirCreate:
			return procOp{proc: in.Proc, host: in.Host}, in.Proc > 0 && in.Path != "" && in.Role != 0
		case DirUpdate:
			return procOp{proc: in.Proc}, in.Proc > 0 && (in.Child == 0 || in.ChildHost != "")
		case DirRelease:
			return procOp{proc: in.Proc}, in.Proc > 0
		case DirRecover:
			return procOp{proc: in.Proc, host: in.Host}, in.Proc > 0
		case DirUse:
			return procOp{proc: in.Proc}, in.Proc > 0
		case ProcessDeath:
			return procOp{deathProc: in.Proc}, in.Proc > 0
		case Reboot:
			return procOp{rebootHost: in.Host}, in.Host != ""
		case PIDReuse, DirSwap, DirPublish, DirRemove:
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
	return check(DirLeaseModel(), annotateChildFates(ops), timeout)
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
		return fmt.Sprintf("recovered %d, published %d, active %d, indeterminate %d",
			out.Recovered, out.Published, out.Active, out.Indeterminate)
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
	s := state.(dirState)
	if s.count == 0 {
		return "no claims"
	}
	parts := make([]string, 0, s.count)
	for i := 0; i < s.count; i++ {
		c := s.claims[i]
		text := fmt.Sprintf("%s: claim %s %s %s, owner p%d %s", c.path, orUnknown(c.claimID), c.role, c.phase,
			c.ownerProc, liveness(c.ownerAlive))
		if c.childProc != 0 {
			text += fmt.Sprintf(", child p%d %s", c.childProc, liveness(c.childAlive))
		}
		text += ", dir " + [...]string{"present", "foreign", "absent", "published"}[c.dir]
		parts = append(parts, text)
	}
	return escape(strings.Join(parts, "; "))
}
