package models

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// The directory lease model (engine `dirlease`): claims on private working
// directories, and recovery of abandoned ones.
//
// State: the claims, sorted by Path (see dirWorld). A claim
// is keyed by the Path of its directory (every DirCreate names a fresh
// path) and records what the claim file says (claim ID, role, phase, owner,
// child, recoverAfterMs) beside the ground truth the engine can only
// inspect: whether the owner and child are alive, and what is at the path
// now (the claimed directory, another directory swapped in by a rename
// race, nothing, or, for a bundle stage, nothing because it was published
// to its output root).
//
// Recovery crosses every claim, so the model is not partitioned. Unlike the
// lease and admission models it is deterministic: an unknown outcome marks
// the claim "maybe gone" or adds a possible content to it, instead of
// forking whole states (their number multiplied with every crash and made
// checks take seconds). The marks are per claim, which only forgets
// correlations between claims: sound, slightly weaker.
//
// Legal outcomes at the linearization point:
//
//	Create     created(id)        no claim on Path.
//	Update     invalid            iff DirTransitionValid says no (the caller's
//	                              view; no effect).
//	           ok                 the claim file may hold the caller's claim
//	                              with FromPhase and FromChild.
//	           changed            it may not (the state keeps what it may hold).
//	Release    released / changed  as for Update; released removes the claim
//	                              file (the directory stays with its owner).
//	Use        present / foreign / missing: what is at Path while a claim on
//	           Path exists (missing also allowed if the claim may be gone);
//	           untracked otherwise.
//	Recover    succeeded(counts)  some set S of claims was recovered, each
//	                              "recoverable" (below) and not foreign; a
//	                              claim in S with its directory present adds
//	                              to Recovered, published adds to Published,
//	                              absent adds to Recovered or nothing. Every
//	                              claim in S is removed, with its directory.
//	                              A claim in some explaining S but not all
//	                              becomes "maybe gone".
//	           failed / unknown   any recoverable claim not foreign becomes
//	                              "maybe gone" (its directory too).
//
// A claim is recoverable, following the seed's recovery on ground truth:
// its owner is dead and it is a bundle stage, or a raw working directory
// that is preparing or settled, running with a dead child, or launching
// with NowMs >= RecoverAfterMs. A recovery that removes anything else is the
// bug "a live directory removed": it shows as counts no legal S explains,
// or as a later Use, Update or Release that finds the claim or directory
// gone. A foreign directory (another identity) must never be removed.
//
// What the model does not check:
//   - the Active and Indeterminate counts. Recovery reads the claim files in
//     one batch and then inspects each owner at its own instant, while
//     claims are released and owners die; no single instant explains those
//     two counts in general, and they have no effect;
//   - completeness: a pass may leave a recoverable claim (the inspector may
//     answer "unknown"); liveness is the simulator's check;
//   - the path of a phantom (a maybe-gone claim of a dead owner, see
//     dirWorld) is untracked, and a pass may count a phantom any way;
//   - a recovery is linearized at one instant. A rename race on one claim's
//     path between the instants the pass handles two claims could, in
//     principle, make a correct pass look wrong; none has been seen in the
//     generated histories.

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

// childLife is the ground truth about a recorded child process.
type childLife uint8

const (
	childNone childLife = iota
	childAlive
	childDead
	// childMaybeAlive: the child died while the update recording it ran,
	// before or after the update took effect; a later ProcessDeath cannot
	// come, so "maybe" stays until a reboot of its host.
	childMaybeAlive
)

// dirContent is what a claim file may hold beyond its fixed fields.
type dirContent struct {
	phase     DirPhase
	childProc int
	childHost string
	child     childLife
}

// recoverable reports whether a pass at nowMs may remove a claim of role
// holding c whose owner is dead (the seed's rules on ground truth).
func (c dirContent) recoverable(role DirRole, recoverAfterMs, nowMs int64) bool {
	if role == RoleBundleStage {
		return true
	}
	switch c.phase {
	case DirPreparing, DirSettled:
		return true
	case DirRunning:
		return c.child != childAlive
	case DirLaunching:
		return nowMs >= recoverAfterMs
	}
	return false
}

// dirClaim is one claim of the state.
type dirClaim struct {
	path           string
	claimID        string // "" = unknown (created by an operation of unknown outcome)
	role           DirRole
	ownerProc      int
	ownerHost      string
	ownerAlive     bool
	recoverAfterMs int64
	dir            dirAt
	// maybeGone: the claim file (and, if a recovery removed it, the
	// directory) may already be gone. Set by operations of unknown outcome
	// and by recoveries whose counts do not say which claims they took.
	maybeGone bool
	// contents: what the claim file may hold, sorted, never empty; more
	// than one after an update of unknown outcome.
	contents []dirContent
}

// dirWorld is one state of the model, decoded: the claims, sorted by path,
// and the phantoms. The model is deterministic: each uncertainty is kept
// inside the state (maybeGone, several contents, a child maybe alive,
// phantoms) instead of forking states, whose number would multiply with
// every crash. Step functions treat a dirWorld as a value: every change
// copies first.
//
// A phantom is a claim that may be gone, whose owner is dead and which has
// no child that may be alive: nothing but a recovery pass can still act on
// it. The model stops tracking its path and keeps only how many there may
// be; a later pass may count each phantom as recovered, as published, or
// not at all. Without that, such claims would pile up and slow every step
// (a 1000-operation history took 130 ms to check). Lost with the path:
// Use of it is untracked, so a pass that wrongly removes a directory
// swapped onto a phantom's path is not seen; and a phantom may be counted
// before its recoverAfterMs.
type dirWorld struct {
	claims   []dirClaim
	phantoms int
}

// dirState is the porcupine state: a dirWorld encoded into a string, so it
// is a comparable value of any size.
type dirState struct {
	encoded string
}

func (s dirWorld) clone() dirWorld {
	s.claims = append([]dirClaim(nil), s.claims...)
	return s
}

func (s dirWorld) find(path string) int {
	for i := range s.claims {
		if s.claims[i].path == path {
			return i
		}
	}
	return -1
}

func (s dirWorld) with(c dirClaim) dirWorld {
	at := sort.Search(len(s.claims), func(i int) bool { return s.claims[i].path >= c.path })
	claims := make([]dirClaim, 0, len(s.claims)+1)
	s.claims = append(append(append(claims, s.claims[:at]...), c), s.claims[at:]...)
	return s
}

func (s dirWorld) without(i int) dirWorld {
	claims := make([]dirClaim, 0, len(s.claims)-1)
	s.claims = append(append(claims, s.claims[:i]...), s.claims[i+1:]...)
	return s
}

// replaced returns s with claim i replaced by c.
func (s dirWorld) replaced(i int, c dirClaim) dirWorld {
	s = s.clone()
	s.claims[i] = c
	return s
}

// recoverable reports whether a pass at nowMs may remove c.
func (c dirClaim) recoverable(nowMs int64) bool {
	if c.ownerAlive {
		return false
	}
	for _, content := range c.contents {
		if content.recoverable(c.role, c.recoverAfterMs, nowMs) {
			return true
		}
	}
	return false
}

// withContents returns c holding contents, sorted and without duplicates.
func (c dirClaim) withContents(contents []dirContent) dirClaim {
	sorted := append([]dirContent(nil), contents...)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.phase != b.phase {
			return a.phase < b.phase
		}
		if a.childProc != b.childProc {
			return a.childProc < b.childProc
		}
		return a.child < b.child
	})
	c.contents = sorted[:0]
	for i, content := range sorted {
		if i == 0 || content != sorted[i-1] {
			c.contents = append(c.contents, content)
		}
	}
	if len(c.contents) == 0 {
		panic("models: a directory claim with no possible contents")
	}
	return c
}

// matching splits c's contents by whether they equal the caller's view.
func (c dirClaim) matching(phase DirPhase, child int) (matched, others []dirContent) {
	for _, content := range c.contents {
		if content.phase == phase && content.childProc == child {
			matched = append(matched, content)
		} else {
			others = append(others, content)
		}
	}
	return matched, others
}

// dirStep is the deterministic step: ok=false if no state explains the
// output.
func dirStep(state, input, output any) (bool, any) {
	next, ok := dirStepWorld(decodeDirState(state.(dirState)), input, output)
	if !ok {
		return false, state
	}
	return true, encodeDirWorld(next.normalized())
}

// normalized turns every claim that only a recovery pass can still act on,
// and that may already be gone, into a phantom.
func (s dirWorld) normalized() dirWorld {
	for i := 0; i < len(s.claims); {
		if !s.claims[i].phantomable() {
			i++
			continue
		}
		s = s.without(i)
		s.phantoms++
	}
	return s
}

func (c dirClaim) phantomable() bool {
	if !c.maybeGone || c.ownerAlive {
		return false
	}
	for _, content := range c.contents {
		if content.child == childAlive || content.child == childMaybeAlive {
			return false
		}
	}
	return true
}

func dirStepWorld(s dirWorld, input, output any) (dirWorld, bool) {
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
		return s.killed(func(proc int, _ string) bool { return proc == in.Proc }), true
	case Reboot:
		return s.killed(func(_ int, host string) bool { return host == in.Host }), true
	case PIDReuse:
		return s, true
	case DirSwap:
		return s.moveDir(in.Path, dirForeign), true
	case DirPublish:
		return s.moveDir(in.Path, dirPublished), true
	case DirRemove:
		return s.moveDir(in.Path, dirAbsent), true
	}
	panic(fmt.Sprintf("models: dirlease model got input %T", input))
}

// killed marks dead every owner and child that dies.
func (s dirWorld) killed(dies func(proc int, host string) bool) dirWorld {
	s = s.clone()
	for i := range s.claims {
		c := s.claims[i]
		c.ownerAlive = c.ownerAlive && !dies(c.ownerProc, c.ownerHost)
		contents := append([]dirContent(nil), c.contents...)
		for j := range contents {
			if contents[j].childProc != 0 && dies(contents[j].childProc, contents[j].childHost) {
				contents[j].child = childDead
			}
		}
		s.claims[i] = c.withContents(contents)
	}
	return s
}

func (s dirWorld) moveDir(path string, to dirAt) dirWorld {
	if i := s.find(path); i >= 0 {
		c := s.claims[i]
		c.dir = to
		return s.replaced(i, c)
	}
	return s
}

func dirStepCreate(s dirWorld, in DirCreate, output any) (dirWorld, bool) {
	if s.find(in.Path) >= 0 {
		return s, false // ValidateDirLeaseHistory rules out a second claim on a path
	}
	claim := dirClaim{
		path: in.Path, role: in.Role, ownerProc: in.Proc, ownerHost: in.Host,
		ownerAlive: true, recoverAfterMs: in.RecoverAfterMs, dir: dirPresent,
		contents: []dirContent{{phase: DirPreparing}},
	}
	out, known := output.(DirCreateResult)
	if !known {
		mustUnknown(output)
		claim.maybeGone = true // may never have been written
		return s.with(claim), true
	}
	if out.ClaimID == "" {
		return s, false
	}
	claim.claimID = out.ClaimID
	return s.with(claim), true
}

// handle finds the claim a caller's handle names (same path, claim ID and
// owner), or -1.
func (s dirWorld) handle(path, claimID string, proc int) int {
	i := s.find(path)
	if i < 0 || s.claims[i].claimID == "" || s.claims[i].claimID != claimID || s.claims[i].ownerProc != proc {
		return -1
	}
	return i
}

// refused applies a compare-and-swap refused as "changed" to claim i: the
// file does not hold the caller's view, so only the other contents remain,
// or, if none, the claim must be gone.
func (s dirWorld) refused(i int, others []dirContent) (dirWorld, bool) {
	c := s.claims[i]
	switch {
	case len(others) > 0:
		return s.replaced(i, c.withContents(others)), true
	case c.maybeGone:
		return s.without(i), true
	}
	return s, false
}

func dirStepUpdate(s dirWorld, in DirUpdate, output any) (dirWorld, bool) {
	valid := DirTransitionValid(in.Role, in.FromPhase, in.ToPhase, in.Child != 0)
	i := s.handle(in.Path, in.ClaimID, in.Proc)
	var matched, others []dirContent
	if i >= 0 {
		matched, others = s.claims[i].matching(in.FromPhase, in.FromChild)
	}
	next := dirContent{phase: in.ToPhase, childProc: in.Child, childHost: in.ChildHost}
	if in.Child != 0 {
		next.child = [...]childLife{childAliveAtReturn: childAlive, childDeadBeforeCall: childDead, childDiedDuring: childMaybeAlive}[in.childFate]
	}
	out, known := output.(DirUpdateResult)
	if !known {
		mustUnknown(output)
		if valid && len(matched) > 0 {
			c := s.claims[i]
			return s.replaced(i, c.withContents(append(append([]dirContent(nil), c.contents...), next))), true
		}
		return s, true
	}
	switch out.Kind {
	case CASInvalid:
		return s, !valid
	case CASOK:
		if !valid || len(matched) == 0 {
			return s, false
		}
		c := s.claims[i]
		c.maybeGone = false // the swap proves the file exists
		return s.replaced(i, c.withContents([]dirContent{next})), true
	case CASChanged:
		if !valid {
			return s, false
		}
		if i < 0 {
			return s, true
		}
		return s.refused(i, others)
	}
	return s, false
}

func dirStepRelease(s dirWorld, in DirRelease, output any) (dirWorld, bool) {
	i := s.handle(in.Path, in.ClaimID, in.Proc)
	var matched, others []dirContent
	if i >= 0 {
		matched, others = s.claims[i].matching(in.Phase, in.Child)
	}
	out, known := output.(DirReleaseResult)
	if !known {
		mustUnknown(output)
		if len(matched) > 0 {
			c := s.claims[i]
			c.maybeGone = true
			return s.replaced(i, c), true
		}
		return s, true
	}
	switch out.Kind {
	case CASOK:
		if len(matched) > 0 {
			return s.without(i), true
		}
	case CASChanged:
		if i < 0 {
			return s, true
		}
		return s.refused(i, others)
	}
	return s, false
}

func dirStepUse(s dirWorld, in DirUse, output any) (dirWorld, bool) {
	out, known := output.(DirUseResult)
	if !known {
		mustUnknown(output)
		return s, true
	}
	i := s.find(in.Path)
	if i < 0 {
		return s, true // untracked path: anything may be there
	}
	c := s.claims[i]
	want := UseMissing
	switch c.dir {
	case dirPresent:
		want = UsePresent
	case dirForeign:
		want = UseForeign
	}
	// A claim that may be gone may have taken its directory with it.
	return s, out.Kind == want || (c.maybeGone && out.Kind == UseMissing)
}

// recoveryOption is one thing a pass may have done to one claim.
type recoveryOption struct {
	remove               bool
	recovered, published int
}

// recoveryOptions lists what a pass at nowMs may have done to c. Leaving
// it alone is always possible: the pass may have read the claims before c
// was created, or the inspector may have answered "unknown".
func recoveryOptions(c dirClaim, nowMs int64) []recoveryOption {
	options := []recoveryOption{{}}
	if c.maybeGone {
		options = append(options, recoveryOption{remove: true}) // it was already gone
	}
	if !c.recoverable(nowMs) {
		return options
	}
	switch c.dir {
	case dirPresent:
		options = append(options, recoveryOption{remove: true, recovered: 1})
	case dirPublished:
		options = append(options, recoveryOption{remove: true, published: 1})
	case dirAbsent:
		// An absent directory is counted when the pass completes an
		// interrupted quarantine, and not counted otherwise.
		options = append(options, recoveryOption{remove: true}, recoveryOption{remove: true, recovered: 1})
	}
	return options
}

// countSums is the set of (recovered, published) totals, up to a target,
// reachable by some choice of options over a run of claims.
type countSums struct {
	recovered, published int // the target, the largest totals kept
	reachable            []bool
}

func newCountSums(recovered, published int) countSums {
	return countSums{recovered, published, make([]bool, (recovered+1)*(published+1))}
}

func (sums countSums) at(r, p int) bool {
	return r >= 0 && p >= 0 && r <= sums.recovered && p <= sums.published && sums.reachable[r*(sums.published+1)+p]
}

func (sums countSums) set(r, p int) {
	if r <= sums.recovered && p <= sums.published {
		sums.reachable[r*(sums.published+1)+p] = true
	}
}

// add marks every total of from plus option.
func (sums countSums) add(from countSums, option recoveryOption) {
	for r := 0; r <= sums.recovered; r++ {
		for p := 0; p <= sums.published; p++ {
			if from.at(r, p) {
				sums.set(r+option.recovered, p+option.published)
			}
		}
	}
}

// dirRecovered returns the state after a pass at nowMs that reported
// (recovered, published), or ok=false if no choice of options explains the
// counts. A claim every explaining choice removes is removed; one that some
// choices remove and others keep becomes maybeGone; the rest are untouched.
// Each phantom may add one to either count, or nothing.
func dirRecovered(s dirWorld, nowMs int64, recovered, published int) (dirWorld, bool) {
	if recovered < 0 || published < 0 {
		return s, false
	}
	options := make([][]recoveryOption, len(s.claims))
	prefix := make([]countSums, len(s.claims)+1)
	suffix := make([]countSums, len(s.claims)+1)
	for i := range prefix {
		prefix[i], suffix[i] = newCountSums(recovered, published), newCountSums(recovered, published)
	}
	prefix[0].set(0, 0)
	for r := 0; r <= s.phantoms; r++ {
		for p := 0; r+p <= s.phantoms; p++ {
			suffix[len(s.claims)].set(r, p)
		}
	}
	for i := 0; i < len(s.claims); i++ {
		options[i] = recoveryOptions(s.claims[i], nowMs)
		for _, option := range options[i] {
			prefix[i+1].add(prefix[i], option)
		}
	}
	for i := len(s.claims) - 1; i >= 0; i-- {
		for _, option := range options[i] {
			suffix[i].add(suffix[i+1], option)
		}
	}
	if !suffix[0].at(recovered, published) {
		return s, false
	}
	next := dirWorld{}
	for i := range s.claims {
		keep, remove := false, false
		for _, option := range options[i] {
			if explains(prefix[i], suffix[i+1], option, recovered, published) {
				keep = keep || !option.remove
				remove = remove || option.remove
			}
		}
		c := s.claims[i]
		switch {
		case keep && remove:
			c.maybeGone = true
			next = next.with(c)
		case keep:
			next = next.with(c)
		}
	}
	// The phantoms left: at most the bound minus the fewest any
	// explanation needs.
	used := recovered + published + 1
	for r := 0; r <= recovered; r++ {
		for p := 0; p <= published; p++ {
			if phantoms := recovered - r + published - p; prefix[len(s.claims)].at(r, p) && phantoms <= s.phantoms {
				used = min(used, phantoms)
			}
		}
	}
	if used > s.phantoms {
		panic("models: recovery counts explained without a phantom split")
	}
	next.phantoms = s.phantoms - used
	return next, true
}

// explains reports whether option for one claim, with some choice before
// it (prefix) and after it (suffix), sums to the reported counts.
func explains(prefix, suffix countSums, option recoveryOption, recovered, published int) bool {
	for r := 0; r <= recovered-option.recovered; r++ {
		for p := 0; p <= published-option.published; p++ {
			if prefix.at(r, p) && suffix.at(recovered-option.recovered-r, published-option.published-p) {
				return true
			}
		}
	}
	return false
}

func dirStepRecover(s dirWorld, in DirRecover, output any) (dirWorld, bool) {
	out, known := output.(DirRecoverResult)
	if !known {
		mustUnknown(output)
	}
	if known && !out.Failed {
		return dirRecovered(s, in.NowMs, out.Recovered, out.Published)
	}
	// Failed or cut short: any recoverable claim may be gone, or only its
	// directory (removed before its claim file).
	s = s.clone()
	for i := range s.claims {
		if s.claims[i].recoverable(in.NowMs) && s.claims[i].dir != dirForeign {
			s.claims[i].maybeGone = true
		}
	}
	return s, true
}

func dirHash(state any) uint64 {
	h := newHasher()
	h.string(state.(dirState).encoded)
	return h.sum
}

// encodeDirWorld writes w as a string: uvarint-length-prefixed strings and
// varints, field by field, so two worlds are equal iff their encodings are.
func encodeDirWorld(w dirWorld) dirState {
	buffer := binary.AppendVarint(nil, int64(w.phantoms))
	appendString := func(s string) {
		buffer = binary.AppendUvarint(buffer, uint64(len(s)))
		buffer = append(buffer, s...)
	}
	appendInt := func(v int64) { buffer = binary.AppendVarint(buffer, v) }
	for _, c := range w.claims {
		appendString(c.path)
		appendString(c.claimID)
		appendString(c.ownerHost)
		appendInt(int64(c.role))
		appendInt(int64(c.ownerProc))
		appendInt(c.recoverAfterMs)
		appendInt(int64(c.dir))
		flags := int64(0)
		if c.ownerAlive {
			flags |= 1
		}
		if c.maybeGone {
			flags |= 2
		}
		appendInt(flags)
		appendInt(int64(len(c.contents)))
		for _, content := range c.contents {
			appendInt(int64(content.phase))
			appendInt(int64(content.childProc))
			appendString(content.childHost)
			appendInt(int64(content.child))
		}
	}
	return dirState{encoded: string(buffer)}
}

// decodeDirState reads what encodeDirWorld wrote. A malformed encoding is a
// bug in this file: it panics.
func decodeDirState(s dirState) dirWorld {
	r := stateReader{data: s.encoded}
	var w dirWorld
	if r.data != "" {
		w.phantoms = int(r.int())
	}
	for r.data != "" {
		c := dirClaim{path: r.string(), claimID: r.string(), ownerHost: r.string()}
		c.role, c.ownerProc = DirRole(r.int()), int(r.int())
		c.recoverAfterMs, c.dir = r.int(), dirAt(r.int())
		flags := r.int()
		c.ownerAlive, c.maybeGone = flags&1 != 0, flags&2 != 0
		c.contents = make([]dirContent, r.int())
		for j := range c.contents {
			c.contents[j].phase, c.contents[j].childProc = DirPhase(r.int()), int(r.int())
			c.contents[j].childHost, c.contents[j].child = r.string(), childLife(r.int())
		}
		w.claims = append(w.claims, c)
	}
	return w
}

// stateReader reads varints and length-prefixed strings from a string
// without copying it (substrings share its bytes).
type stateReader struct {
	data string
}

func (r *stateReader) uint() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if r.data == "" {
			panic("models: corrupt dirlease state encoding")
		}
		b := r.data[0]
		r.data = r.data[1:]
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
	panic("models: corrupt dirlease state encoding")
}

// int undoes binary.AppendVarint's zig-zag encoding.
func (r *stateReader) int() int64 {
	u := r.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *stateReader) string() string {
	length := r.uint()
	if uint64(len(r.data)) < length {
		panic("models: corrupt dirlease state encoding")
	}
	text := r.data[:length]
	r.data = r.data[length:]
	return text
}

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
