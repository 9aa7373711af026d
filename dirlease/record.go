package dirlease

import (
	"bytes"
	"encoding/json"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// On-disk names and limits, kept from the original.
const (
	ClaimKind = "beeper-message-like-me-directory-lease"
	// SchemaVersion is what Create writes: the original's schema 2 with owner
	// objects that gain hostname and pidNamespace (schema 3), plus a
	// revision rotated on every write and the creation time on the boot
	// clock (schema 4). Schemas 2 and 3 are still read, as legacy claims.
	SchemaVersion = 4
	// schemaLegacyOwners is the last schema with the original's owner objects.
	schemaLegacyOwners = 2
	// NoBootTime is Claim.CreatedAtBootMs when the creator had no boot
	// clock (null on disk), and in every legacy claim.
	NoBootTime = -1
	// ClaimsMax and ClaimBytesMax are the original's MAX_CLAIMS and
	// MAX_CLAIM_BYTES.
	ClaimsMax     = 64
	ClaimBytesMax = 16 * 1024
	pathBytesMax  = 4096
	// safeIntegerMax is JavaScript's Number.MAX_SAFE_INTEGER, the original's
	// bound on millisecond times.
	safeIntegerMax = 1<<53 - 1
)

// Role says what a leased directory is for.
type Role string

const (
	RoleRawWorking  Role = "raw-working"
	RoleBundleStage Role = "bundle-stage"
)

// Phase is a raw-working lease's lifecycle phase.
type Phase string

const (
	PhasePreparing Phase = "preparing"
	PhaseLaunching Phase = "launching"
	PhaseRunning   Phase = "running"
	PhaseSettled   Phase = "settled"
)

// Identity is a directory's physical identity as recorded: decimal
// strings of st_dev, st_ino and the birth time in nanoseconds.
type Identity struct {
	Device      string
	Inode       string
	BirthtimeNs string
}

// IdentityOf records a physical identity. The three numbers are
// substrings of one string, one allocation where formatting each made
// its own: every Create and every look after it records identities.
func IdentityOf(id lease.FileIdentity) Identity {
	var buf [identityDigitsMax]byte
	digits := strconv.AppendUint(buf[:0], id.Dev, 10)
	deviceEnd := len(digits)
	digits = strconv.AppendUint(digits, id.Ino, 10)
	inodeEnd := len(digits)
	all := string(strconv.AppendInt(digits, id.BirthNs, 10))
	return Identity{Device: all[:deviceEnd], Inode: all[deviceEnd:inodeEnd], BirthtimeNs: all[inodeEnd:]}
}

// identityDigitsMax holds two uint64s and a signed int64 in decimal.
const identityDigitsMax = 20 + 20 + 20

// FileIdentity parses the recorded identity; Parse guarantees it parses.
func (i Identity) FileIdentity() lease.FileIdentity {
	dev, errDev := strconv.ParseUint(i.Device, 10, 64)
	ino, errIno := strconv.ParseUint(i.Inode, 10, 64)
	birth, errBirth := strconv.ParseInt(i.BirthtimeNs, 10, 64)
	if errDev != nil || errIno != nil || errBirth != nil {
		panic("dirlease: unparsable identity passed validation")
	}
	return lease.FileIdentity{Dev: dev, Ino: ino, BirthNs: birth}
}

// writeCanonical writes the identity as the object-valued field key.
func (i Identity) writeCanonical(object *statefile.CanonicalObject, key string) {
	object.Open(key)
	object.String("birthtimeNs", i.BirthtimeNs)
	object.String("device", i.Device)
	object.String("inode", i.Inode)
	object.Close()
}

// wire is the identity as a map: the reference writeCanonical's encoding is
// checked against.
func (i Identity) wire() map[string]any {
	return map[string]any{"device": i.Device, "inode": i.Inode, "birthtimeNs": i.BirthtimeNs}
}

// Claim is a parsed directory lease claim: schema 2 (the original's), 3
// (5-key owners) or 4 (3 with revision and createdAtBootMs).
type Claim struct {
	SchemaVersion     int
	ID                string
	Role              Role
	Path              string
	ParentPath        string
	ParentIdentity    Identity
	DirectoryIdentity Identity
	// OutputRoot is "" for null.
	OutputRoot     string
	Owner          statecas.Owner
	ChildOwner     *statecas.Owner
	Phase          Phase
	CreatedAtMs    int64
	RecoverAfterMs int64
	// Revision is a v4 UUID that every write rotates, so that the bytes of
	// a claim never repeat (no ABA for a stale compare-and-swap); "" in a
	// legacy claim (schema 2 or 3), which the original wrote without one.
	Revision string
	// CreatedAtBootMs is Config.BootClock at creation, in milliseconds, in
	// the owner's boot: the launching window is measured from it, as
	// RecoverAfterMs-CreatedAtMs on the boot clock. NoBootTime if none.
	CreatedAtBootMs int64
}

// Legacy reports whether the claim is of a schema this package only reads.
func (c Claim) Legacy() bool { return c.SchemaVersion != SchemaVersion }

// LaunchWindowMs is how long after its creation a launching lease of a dead
// owner is protected (RecoverAfterMs-CreatedAtMs).
func (c Claim) LaunchWindowMs() int64 { return c.RecoverAfterMs - c.CreatedAtMs }

// Bytes is the canonical encoding: canonical JSON plus a newline.
func (c Claim) Bytes() []byte {
	object := statefile.NewCanonicalObject(1024)
	if c.ChildOwner != nil {
		c.ChildOwner.WriteCanonical(object, "childOwner")
	} else {
		object.Null("childOwner")
	}
	if !c.Legacy() {
		if c.CreatedAtBootMs != NoBootTime {
			object.Int("createdAtBootMs", c.CreatedAtBootMs)
		} else {
			object.Null("createdAtBootMs")
		}
	}
	object.Int("createdAtMs", c.CreatedAtMs)
	c.DirectoryIdentity.writeCanonical(object, "directoryIdentity")
	object.String("id", c.ID)
	object.String("kind", ClaimKind)
	object.NullableString("outputRoot", c.OutputRoot)
	c.Owner.WriteCanonical(object, "owner")
	c.ParentIdentity.writeCanonical(object, "parentIdentity")
	object.String("parentPath", c.ParentPath)
	object.String("path", c.Path)
	object.String("phase", string(c.Phase))
	object.Int("recoverAfterMs", c.RecoverAfterMs)
	if !c.Legacy() {
		object.String("revision", c.Revision)
	}
	object.String("role", string(c.Role))
	object.Int("schemaVersion", int64(c.SchemaVersion))
	return object.Bytes()
}

var (
	claimKeys       = []string{"childOwner", "createdAtMs", "directoryIdentity", "id", "kind", "outputRoot", "owner", "parentIdentity", "parentPath", "path", "phase", "recoverAfterMs", "role", "schemaVersion"}
	claimKeysV4     = []string{"childOwner", "createdAtBootMs", "createdAtMs", "directoryIdentity", "id", "kind", "outputRoot", "owner", "parentIdentity", "parentPath", "path", "phase", "recoverAfterMs", "revision", "role", "schemaVersion"}
	identityKeys    = []string{"birthtimeNs", "device", "inode"}
	errNotCanonical = "directory lease is not canonical"
)

// validPath is the original's boundedPath: absolute, already resolved (clean),
// at most 4096 bytes, no NUL, CR or LF.
func validPath(value string) bool {
	return path.IsAbs(value) && fspath.Clean(value) == value && len(value) <= pathBytesMax &&
		!strings.ContainsAny(value, "\x00\r\n")
}

// Parse decodes and validates a claim file named name (a base name), and
// requires its bytes to be exactly the canonical encoding of what it holds.
func Parse(content []byte, name, file string) (Claim, error) {
	if claim, ok := cachedParse(content, name); ok {
		return claim, nil
	}
	claim, err := parseJSON(content, name, file)
	// A claim that parses equals its canonical encoding, which is valid
	// JSON; so only a refusal asks whether the bytes were JSON at all, and
	// words it so, as a check ahead of the parse would.
	if err != nil && !json.Valid(content) {
		return Claim{}, fail(ErrCorrupt, file, "directory lease is not valid JSON", nil)
	}
	if err == nil {
		rememberClaim(content, name, claim)
	}
	return claim, err
}

// parseJSON is Parse of content that is valid JSON; any other content it
// refuses, with some error.
func parseJSON(content []byte, name, file string) (Claim, error) {
	probe, err := statefile.DecodeObject(content, "directory lease", nil, claimKeysV4)
	if err != nil {
		return Claim{}, fail(ErrCorrupt, file, "directory lease has an unsupported shape", err)
	}
	version := int(probe.Int("schemaVersion", schemaLegacyOwners, SchemaVersion))
	if probe.Err() != nil {
		return Claim{}, fail(ErrCorrupt, file, "directory lease identity is invalid", probe.Err())
	}
	keys := claimKeysV4
	if version != SchemaVersion {
		keys = claimKeys
	}
	if err := probe.CheckKeys(keys, nil); err != nil {
		return Claim{}, fail(ErrCorrupt, file, "directory lease has an unsupported shape", err)
	}
	object := probe
	claim := Claim{
		SchemaVersion:   version,
		ID:              object.String("id"),
		Role:            Role(object.String("role")),
		Phase:           Phase(object.String("phase")),
		CreatedAtBootMs: NoBootTime,
	}
	if object.Err() != nil || object.String("kind") != ClaimKind || !statefile.IsUUIDv4(claim.ID) ||
		(claim.Role != RoleRawWorking && claim.Role != RoleBundleStage) || !validPhase(claim.Phase) {
		return Claim{}, fail(ErrCorrupt, file, "directory lease identity is invalid", object.Err())
	}
	if err := parseCoordinates(object, &claim, file); err != nil {
		return Claim{}, err
	}
	if err := parseOwners(object, &claim, file); err != nil {
		return Claim{}, err
	}
	if err := parseRevision(object, &claim, file); err != nil {
		return Claim{}, err
	}
	if name != claim.ID+".json" || !bytes.Equal(content, claim.Bytes()) {
		return Claim{}, fail(ErrCorrupt, file, errNotCanonical, nil)
	}
	return claim, nil
}

// parseRevision reads the schema-4 revision and boot-clock creation time.
func parseRevision(object *statefile.Object, claim *Claim, file string) error {
	if claim.Legacy() {
		return nil
	}
	claim.Revision = object.String("revision")
	if object.Err() != nil || !statefile.IsUUIDv4(claim.Revision) {
		return fail(ErrCorrupt, file, "directory lease revision is invalid", object.Err())
	}
	if !object.IsNull("createdAtBootMs") {
		claim.CreatedAtBootMs = object.Int("createdAtBootMs", 0, safeIntegerMax)
		if object.Err() != nil {
			return fail(ErrCorrupt, file, "directory lease time is invalid", object.Err())
		}
	}
	return nil
}

func validPhase(phase Phase) bool {
	return phase == PhasePreparing || phase == PhaseLaunching || phase == PhaseRunning || phase == PhaseSettled
}

func parseCoordinates(object *statefile.Object, claim *Claim, file string) error {
	claim.Path = object.String("path")
	claim.ParentPath = object.String("parentPath")
	if object.Err() != nil || !validPath(claim.Path) || !validPath(claim.ParentPath) {
		return fail(ErrCorrupt, file, "directory lease path is invalid", object.Err())
	}
	if !object.IsNull("outputRoot") {
		claim.OutputRoot = object.String("outputRoot")
		if object.Err() != nil || !validPath(claim.OutputRoot) {
			return fail(ErrCorrupt, file, "directory lease output is invalid", object.Err())
		}
	}
	claim.CreatedAtMs = object.Int("createdAtMs", 0, safeIntegerMax)
	claim.RecoverAfterMs = object.Int("recoverAfterMs", 0, safeIntegerMax)
	if object.Err() != nil {
		return fail(ErrCorrupt, file, "directory lease time is invalid", object.Err())
	}
	bundle := claim.Role == RoleBundleStage
	if fspath.Dir(claim.Path) != claim.ParentPath || claim.RecoverAfterMs < claim.CreatedAtMs ||
		bundle != (claim.OutputRoot != "") ||
		(claim.OutputRoot != "" && fspath.Dir(claim.OutputRoot) != claim.ParentPath) ||
		(bundle && claim.Phase != PhasePreparing) ||
		(bundle && !object.IsNull("childOwner")) ||
		(claim.Phase == PhaseRunning) != !object.IsNull("childOwner") {
		return fail(ErrCorrupt, file, "directory lease coordinates are inconsistent", nil)
	}
	var err error
	if claim.ParentIdentity, err = parseIdentity(object.Raw("parentIdentity"), "directory lease parent identity"); err != nil {
		return fail(ErrCorrupt, file, "directory lease parent identity is invalid", err)
	}
	if claim.DirectoryIdentity, err = parseIdentity(object.Raw("directoryIdentity"), "directory lease directory identity"); err != nil {
		return fail(ErrCorrupt, file, "directory lease directory identity is invalid", err)
	}
	return nil
}

func parseIdentity(raw json.RawMessage, record string) (Identity, error) {
	object, err := statefile.ObjectFrom(raw, record, identityKeys, nil)
	if err != nil {
		return Identity{}, err
	}
	identity := Identity{Device: object.String("device"), Inode: object.String("inode"), BirthtimeNs: object.String("birthtimeNs")}
	if object.Err() != nil {
		return Identity{}, object.Err()
	}
	_, errDev := strconv.ParseUint(identity.Device, 10, 64)
	_, errIno := strconv.ParseUint(identity.Inode, 10, 64)
	birth, errBirth := strconv.ParseInt(identity.BirthtimeNs, 10, 64)
	if !isDecimal(identity.Device) || !isDecimal(identity.Inode) ||
		!isDecimal(identity.BirthtimeNs) || identity.BirthtimeNs[0] == '0' || errDev != nil || errIno != nil || errBirth != nil ||
		birth <= 0 || birth == math.MaxInt64 {
		return Identity{}, &statefile.SchemaError{Record: record, Problem: "device, inode or birthtimeNs is invalid"}
	}
	return identity, nil
}

// isDecimal reports whether s is 1 to 40 ASCII digits, no sign (the original's
// /^\d{1,40}$/).
func isDecimal(s string) bool {
	if len(s) < 1 || len(s) > 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func parseOwners(object *statefile.Object, claim *Claim, file string) error {
	legacy := claim.SchemaVersion == schemaLegacyOwners
	owner, err := statecas.ParseOwner(object.Raw("owner"), "directory lease owner", legacy)
	if err != nil {
		return fail(ErrCorrupt, file, "directory lease owner is invalid", err)
	}
	claim.Owner = owner
	if object.IsNull("childOwner") {
		return nil
	}
	child, err := statecas.ParseOwner(object.Raw("childOwner"), "directory lease child owner", legacy)
	if err != nil {
		return fail(ErrCorrupt, file, "directory lease child owner is invalid", err)
	}
	claim.ChildOwner = &child
	return nil
}
