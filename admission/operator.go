package admission

import (
	"context"
	"strconv"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
)

// The operator path. Acquire refuses an admission it cannot prove free
// (indeterminate: a dead parent whose helper may have left descendants, an
// owner that cannot be inspected, cleanup-unsafe) or cannot read as a record
// (corrupt, legacy), and only a reboot would change its mind. An operator
// who has checked that the export and everything its helper started are
// gone resolves it with Quarantine: the file is moved, never deleted, into
// QuarantineDir, and the slot is free.

// QuarantineDir is the operator's quarantine, under the admission
// directory (a leasekit addition: the original has no operator path).
const QuarantineDir = "quarantine"

// DispositionCorrupt is InspectState's verdict on a file that is not a
// valid admission record. Acquire refuses it (ErrCorrupt) until an operator
// quarantines it.
const DispositionCorrupt Disposition = "corrupt"

// State is what InspectState found.
type State struct {
	// Path is the admission file.
	Path string
	// Present is false when there is no admission file: the slot is free.
	Present bool
	// ContentSHA256 is the SHA-256 of the file's bytes: the token Quarantine
	// must be given, so that it moves exactly what the operator judged.
	ContentSHA256 string
	// Claim is the record, nil when the file is corrupt.
	Claim *Claim
	// Disposition is what Acquire would make of it: active, indeterminate,
	// recoverable, or DispositionCorrupt.
	Disposition Disposition
	// Problem says why a corrupt file is refused.
	Problem string
	// OperatorNeeded reports that only an operator (Quarantine) or a reboot
	// frees the slot: the disposition is indeterminate or corrupt, and
	// nothing the record names still runs here.
	OperatorNeeded bool
	// Waiting says what an indeterminate record waits on before an
	// operator can act: a helper it names that still runs on this host is
	// an active export that Quarantine refuses (ErrActive), so the operator
	// waits for it to end. Empty otherwise.
	Waiting string
}

// InspectState reads the admission file without changing anything and
// reports its state, a corrupt file included (Inspect refuses one).
func InspectState(ctx context.Context, config Config) (state State, err error) {
	defer func() { err = label(config, err) }()
	if err := ctx.Err(); err != nil {
		return State{}, err
	}
	current, err := currentIdentity(config)
	if err != nil {
		return State{}, err
	}
	state.Path = admissionFile(config)
	// The directories first, as Acquire checks them: a state home Acquire
	// refuses (ErrUnsafe: not private, a symlink, another owner) is that
	// same refusal here, never "no admission".
	uid := uint32(current.UID)
	complete, err := checkInspectable(config, uid)
	if err != nil {
		return state, err
	}
	if !complete {
		return state, nil
	}
	content, present, err := statecas.ReadIfPresent(config.Env(uint32(current.UID)), state.Path, statecas.FileBytesMax)
	if err != nil || !present {
		return state, err
	}
	state.Present, state.ContentSHA256 = true, statefile.SHA256Hex(content)
	claim, parseErr := parseBounded(content, state.Path)
	if parseErr != nil {
		state.Disposition, state.Problem, state.OperatorNeeded = DispositionCorrupt, parseErr.Msg, true
		return state, nil
	}
	state.Claim = &claim
	status := statusFunc(config, current)
	state.Disposition = dispose(claim, status, statecas.BootDigest(current.BootID))
	switch {
	case state.Disposition != DispositionIndeterminate:
	case helperLive(state.Claim, status):
		// Quarantine refuses a live helper (ErrActive): the operator
		// waits for it, and only then judges the record.
		state.Waiting = "its helper (PID " + strconv.Itoa(claim.HelperOwner.PID) + ") still runs: once it has ended, " +
			"only a reboot or an operator frees the slot"
	default:
		state.OperatorNeeded = true
	}
	return state, nil
}

// parseBounded is Parse with the record's size bound.
func parseBounded(content []byte, path string) (Claim, *Error) {
	if len(content) > RecordBytesMax {
		return Claim{}, fail(ErrCorrupt, path, "export admission exceeds its size bound ("+strconv.Itoa(len(content))+" bytes)", nil)
	}
	claim, err := Parse(content, path)
	if err != nil {
		return Claim{}, err.(*Error)
	}
	return claim, nil
}

// truncate keeps at most n bytes of s, for quoting hostile input in a
// refusal.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// helperLive reports whether the helper claim records is alive. A
// cleanup-unsafe record (or one whose helper ran on another boot) is
// indeterminate whatever its helper's fate, since only a reboot proves its
// descendants gone; but a helper the record names that is still running
// is an active export that an operator's move must never take the slot
// from.
func helperLive(claim *Claim, status func(statecas.Owner) statecas.Status) bool {
	return claim != nil && claim.HelperOwner != nil && status(*claim.HelperOwner) == statecas.StatusLive
}

// Quarantined is what Quarantine moved.
type Quarantined struct {
	// Path is where the admission file now is.
	Path string
	// State is the admission as judged before the move.
	State State
}

// Quarantine is the operator's resolution of an admission Acquire refuses:
// it moves the admission file into StateHome/recovery/<root>/quarantine/
// (never deleting it), provided its bytes still hash to contentSHA256 (the
// State.ContentSHA256 the operator judged; anything else is ErrChanged and
// nothing moves) and it is not active: a live owner, or a live helper the
// record names (even in an indeterminate, cleanup-unsafe record), is
// ErrActive (its holder must release it, its helper end). Indeterminate, recoverable,
// legacy and corrupt files are moved. The move runs under the file's
// mutation claim, so no Acquire, lifecycle write or Release interleaves.
func Quarantine(ctx context.Context, config Config, contentSHA256 string) (moved Quarantined, err error) {
	defer func() { err = label(config, err) }()
	if !statefile.IsSHA256Hex(contentSHA256) {
		return Quarantined{}, fail(ErrInvalidRequest, admissionFile(config),
			"the confirmation is not a SHA-256 (64 lowercase hex digits): "+strconv.QuoteToASCII(truncate(contentSHA256, 80)), nil)
	}
	state, err := InspectState(ctx, config)
	if err != nil {
		return Quarantined{}, err
	}
	if !state.Present {
		return Quarantined{}, fail(ErrChanged, state.Path, "export admission is absent: nothing to quarantine", nil)
	}
	if state.ContentSHA256 != contentSHA256 {
		return Quarantined{}, fail(ErrMismatch, state.Path, "export admission's SHA-256 is "+state.ContentSHA256+
			", not the given "+contentSHA256+": inspect again and judge the file as it is now", ErrChanged)
	}
	if state.Disposition == DispositionActive {
		return Quarantined{}, fail(ErrActive, state.Path, "another export is active", nil)
	}
	current, err := currentIdentity(config)
	if err != nil {
		return Quarantined{}, err
	}
	if helperLive(state.Claim, statusFunc(config, current)) {
		return Quarantined{}, fail(ErrActive, state.Path, "another export's helper is still running (PID "+
			strconv.Itoa(state.Claim.HelperOwner.PID)+"): stop it before quarantining its admission", nil)
	}
	uid := uint32(current.UID)
	const message = "export admission could not be quarantined safely"
	parts := append(append([]string{}, RootDir...), QuarantineDir)
	dir, err := statecas.EnsurePrivateDir(config.Env(uid), uid, config.StateHome, parts...)
	if err != nil {
		return Quarantined{}, wrapUnexpected(err, config.StateHome, message)
	}
	target := fspath.Join(dir, "active."+strconv.FormatInt(config.Clock.Now().UnixMilli(), 10)+"."+config.IDs.NewID()+".json")
	done, err := statecas.MoveIfUnchanged(config.Env(uid), state.Path, contentSHA256, target)
	if err != nil {
		return Quarantined{}, wrapUnexpected(err, state.Path, message)
	}
	if !done {
		return Quarantined{}, fail(ErrChanged, state.Path, "export admission changed before quarantine", nil)
	}
	return Quarantined{Path: target, State: state}, nil
}
