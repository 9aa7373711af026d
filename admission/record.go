package admission

import (
	"bytes"
	"encoding/json"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
)

// On-disk names and limits, kept from the original.
const (
	// RecordKind is the record's "kind".
	RecordKind = "beeper-message-like-me-export-admission"
	// SchemaVersion is what Acquire writes: the original's schema 2 with
	// revision, whose owner objects gain hostname and pidNamespace.
	SchemaVersion = 3
	FileName      = "active.json"
	// AcquireAttemptsMax is the original's MAX_EXPORT_ADMISSION_ACQUIRE_ATTEMPTS.
	AcquireAttemptsMax = 8
	// RecordBytesMax is the original's MAX_CLAIM_BYTES.
	RecordBytesMax = 16 * 1024
)

// Phase is the helper lifecycle phase of an admission.
type Phase string

const (
	PhaseParentOwned     Phase = "parent-owned"
	PhaseHelperLaunching Phase = "helper-launching"
	PhaseHelperActive    Phase = "helper-active"
	PhaseCleanupUnsafe   Phase = "cleanup-unsafe"
)

// Claim is a parsed admission record of any supported schema:
//
//   - 1: {schemaVersion, kind, id, owner} (no phase: read as Phase "");
//   - 2 without revision: + helperOwner, phase;
//   - 2 with revision: + revision;
//   - 3: as 2 with revision, owners with hostname and pidNamespace.
type Claim struct {
	SchemaVersion int
	ID            string
	Owner         statecas.Owner
	HelperOwner   *statecas.Owner
	Phase         Phase
	// Revision is "" for schema 1 and revision-less schema 2.
	Revision string
}

// Current reports whether the claim is one this package writes (schema 3).
func (c Claim) Current() bool { return c.SchemaVersion == SchemaVersion }

// Bytes is the canonical encoding: canonical JSON plus a newline.
func (c Claim) Bytes() []byte {
	object := statefile.NewCanonicalObject(512)
	if c.SchemaVersion != 1 {
		if c.HelperOwner != nil {
			c.HelperOwner.WriteCanonical(object, "helperOwner")
		} else {
			object.Null("helperOwner")
		}
	}
	object.String("id", c.ID)
	object.String("kind", RecordKind)
	c.Owner.WriteCanonical(object, "owner")
	if c.SchemaVersion != 1 {
		object.String("phase", string(c.Phase))
	}
	if c.Revision != "" {
		object.String("revision", c.Revision)
	}
	object.Int("schemaVersion", int64(c.SchemaVersion))
	return object.Bytes()
}

var (
	keysV1         = []string{"id", "kind", "owner", "schemaVersion"}
	keysV2         = []string{"helperOwner", "id", "kind", "owner", "phase", "schemaVersion"}
	keysV2Revision = []string{"helperOwner", "id", "kind", "owner", "phase", "revision", "schemaVersion"}
)

// Parse decodes and validates an admission file, and requires its bytes to
// be exactly the canonical encoding of what it holds.
func Parse(content []byte, path string) (Claim, error) {
	if claim, ok := cachedParse(content); ok {
		return claim, nil
	}
	claim, err := parseJSON(content, path)
	// A record that parses equals its canonical encoding, which is valid
	// JSON; so only a refusal asks whether the bytes were JSON at all, and
	// words it so, as a check ahead of the parse would.
	if err != nil && !json.Valid(content) {
		return Claim{}, fail(ErrCorrupt, path, "export admission is not valid JSON", nil)
	}
	if err == nil {
		rememberClaim(content, claim)
	}
	return claim, err
}

// parseJSON is Parse of content that is valid JSON; any other content it
// refuses, with some error.
func parseJSON(content []byte, path string) (Claim, error) {
	probe, err := statefile.DecodeObject(content, "export admission", nil,
		[]string{"helperOwner", "id", "kind", "owner", "phase", "revision", "schemaVersion"})
	if err != nil {
		return Claim{}, fail(ErrCorrupt, path, "export admission has an unsupported shape", err)
	}
	version := probe.Int("schemaVersion", 1, SchemaVersion)
	if probe.Err() != nil {
		return Claim{}, fail(ErrCorrupt, path, "export admission identity is invalid", probe.Err())
	}
	keys := keysV2
	switch {
	case version == 1:
		keys = keysV1
	case version == 3 || probe.Has("revision"):
		keys = keysV2Revision
	}
	if err := probe.CheckKeys(keys, nil); err != nil {
		return Claim{}, fail(ErrCorrupt, path, "export admission has an unsupported shape", err)
	}
	object := probe
	claim := Claim{SchemaVersion: int(version), ID: object.String("id")}
	if object.String("kind") != RecordKind || !statefile.IsUUIDv4(claim.ID) || object.Err() != nil {
		return Claim{}, fail(ErrCorrupt, path, "export admission identity is invalid", object.Err())
	}
	legacyOwner := version != SchemaVersion
	if claim.Owner, err = statecas.ParseOwner(object.Raw("owner"), "export admission owner", legacyOwner); err != nil {
		return Claim{}, fail(ErrCorrupt, path, "export admission owner is invalid", err)
	}
	if version != 1 {
		if err := parseLifecycle(object, &claim, legacyOwner, path); err != nil {
			return Claim{}, err
		}
	}
	if object.Has("revision") {
		claim.Revision = object.String("revision")
		if !statefile.IsUUIDv4(claim.Revision) {
			return Claim{}, fail(ErrCorrupt, path, "export admission revision is invalid", object.Err())
		}
	}
	if !bytes.Equal(content, claim.Bytes()) {
		return Claim{}, fail(ErrCorrupt, path, "export admission is not canonical", nil)
	}
	return claim, nil
}

func parseLifecycle(object *statefile.Object, claim *Claim, legacyOwner bool, path string) error {
	claim.Phase = Phase(object.String("phase"))
	valid := object.Err() == nil
	switch claim.Phase {
	case PhaseParentOwned, PhaseHelperLaunching:
		valid = valid && object.IsNull("helperOwner")
	case PhaseHelperActive:
		valid = valid && !object.IsNull("helperOwner")
	case PhaseCleanupUnsafe:
	default:
		valid = false
	}
	if !valid {
		return fail(ErrCorrupt, path, "export admission lifecycle is invalid", object.Err())
	}
	if object.IsNull("helperOwner") {
		return nil
	}
	helper, err := statecas.ParseOwner(object.Raw("helperOwner"), "export admission helper owner", legacyOwner)
	if err != nil {
		return fail(ErrCorrupt, path, "export admission helper owner is invalid", err)
	}
	claim.HelperOwner = &helper
	return nil
}

// Disposition is what a prior admission means for a new Acquire.
type Disposition string

const (
	DispositionActive        Disposition = "active"
	DispositionIndeterminate Disposition = "indeterminate"
	DispositionRecoverable   Disposition = "recoverable"
)

// dispose is the original's exportAdmissionDisposition, rule for rule. status
// gives an owner's liveness; currentBoot is this host's boot digest.
// "Same boot" below means "not provably another boot", so an unknown boot
// id never proves a reboot.
func dispose(claim Claim, status func(statecas.Owner) statecas.Status, currentBoot string) Disposition {
	switch status(claim.Owner) {
	case statecas.StatusLive:
		return DispositionActive
	case statecas.StatusUnknown:
		return DispositionIndeterminate
	}
	rebooted := statecas.ProvablyOtherBoot(claim.Owner.BootID, currentBoot)
	if claim.SchemaVersion == 1 {
		// The v1 admission recorded only the parent, though its detached
		// helper could outlive it: only a reboot proves that helper gone.
		return recoverableIf(rebooted)
	}
	if claim.HelperOwner != nil && claim.HelperOwner.BootID != claim.Owner.BootID {
		return DispositionIndeterminate
	}
	if claim.Phase == PhaseCleanupUnsafe {
		// The recorded helper is not a complete ownership proof (a
		// descendant may survive it): only a reboot proves all are gone.
		return recoverableIf(rebooted)
	}
	if claim.Phase == PhaseParentOwned {
		return DispositionRecoverable
	}
	// An unjoined helper, its streams and its process group may outlive the
	// supervising parent: only a reboot, or the recorded helper itself,
	// decides.
	if rebooted {
		return DispositionRecoverable
	}
	if claim.HelperOwner == nil {
		return DispositionIndeterminate
	}
	if status(*claim.HelperOwner) == statecas.StatusLive {
		return DispositionActive
	}
	return DispositionIndeterminate
}

func recoverableIf(rebooted bool) Disposition {
	if rebooted {
		return DispositionRecoverable
	}
	return DispositionIndeterminate
}
