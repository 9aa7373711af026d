package lease

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
)

// Record schemas. docs/FORMAT-lease.md describes every field.
const (
	// ownerSchemaLegacy is the original's owner format: no executable inode, no
	// PID namespace, no epoch, no uid. Still read and honoured.
	ownerSchemaLegacy = 1
	// OwnerSchema is the owner format this package writes.
	OwnerSchema = 2
	// guardSchemaLegacy is the original's guard and intent format.
	guardSchemaLegacy = 1
	// GuardSchema is the guard and intent format this package writes.
	GuardSchema = 2
	// EpochSchema is the format of the epoch counter file.
	EpochSchema = 1
)

// Size bounds of the records: far above any valid record, far below what
// could hurt to read.
const (
	ownerBytesMax = 64 << 10
	guardBytesMax = 16 << 10
	epochBytesMax = 4 << 10
)

// timestampLayout is JavaScript's Date.toISOString, as the original writes it.
const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// Owner is the record in receiver.lock/owner.json: who holds the lease.
type Owner struct {
	// Schema is 2 for records this package writes, 1 for the original's.
	Schema int
	// Generation is a fresh UUID per acquire: the release capability.
	Generation string
	// SessionID and SessionFile are the acquirer's piSessionId and
	// piSessionFile (absolute).
	SessionID   string
	SessionFile string
	// PID ... UID identify the owning process; see ProcessIdentity.
	PID                  int
	ProcessStartIdentity string
	// BootIdentity is "" when the host exposed none (JSON null).
	BootIdentity string
	Executable   string
	// ExecutableDev and ExecutableIno are 0 in schema 1.
	ExecutableDev uint64
	ExecutableIno uint64
	// PIDNamespace is "" when unknown (JSON null) and in schema 1.
	PIDNamespace string
	Hostname     string
	RootID       string
	CreatedAt    string
	// Epoch is the fencing token: strictly larger than every epoch issued
	// before in this namespace. 0 in schema 1.
	Epoch uint64
	// UID is the owner's real user id; -1 in schema 1 (unknown).
	UID int
}

// Identity returns the process identity the owner record names.
func (o Owner) Identity() ProcessIdentity {
	return ProcessIdentity{
		PID:           o.PID,
		StartTime:     o.ProcessStartIdentity,
		BootID:        o.BootIdentity,
		Executable:    o.Executable,
		ExecutableDev: o.ExecutableDev,
		ExecutableIno: o.ExecutableIno,
		Hostname:      o.Hostname,
		PIDNamespace:  o.PIDNamespace,
		UID:           o.UID,
	}
}

// legacy reports whether the record predates executable inodes and PID
// namespaces (schema 1): the original's identity rules apply to it.
func (o Owner) legacy() bool { return o.Schema == ownerSchemaLegacy }

var (
	ownerKeysLegacy = []string{"schema", "generation", "piSessionId", "piSessionFile", "pid",
		"processStartIdentity", "bootIdentity", "executable", "hostname", "rootId", "createdAt"}
	ownerKeys = append(append([]string(nil), ownerKeysLegacy...),
		"executableDevice", "executableInode", "pidNamespace", "uid", "epoch")
	guardKeysLegacy = []string{"schema", "generation", "pid", "processStartIdentity", "bootIdentity",
		"executable", "hostname", "createdAt"}
	guardKeys = append(append([]string(nil), guardKeysLegacy...),
		"executableDevice", "executableInode", "pidNamespace", "uid")
	epochKeys = []string{"schema", "epoch"}
)

// ownerJSON is the on-disk shape of a schema-2 owner.
type ownerJSON struct {
	Schema               int     `json:"schema"`
	Generation           string  `json:"generation"`
	PISessionID          string  `json:"piSessionId"`
	PISessionFile        string  `json:"piSessionFile"`
	PID                  int     `json:"pid"`
	ProcessStartIdentity string  `json:"processStartIdentity"`
	BootIdentity         *string `json:"bootIdentity"`
	Executable           string  `json:"executable"`
	ExecutableDevice     string  `json:"executableDevice"`
	ExecutableInode      string  `json:"executableInode"`
	PIDNamespace         *string `json:"pidNamespace"`
	UID                  int     `json:"uid"`
	Epoch                uint64  `json:"epoch"`
	Hostname             string  `json:"hostname"`
	RootID               string  `json:"rootId"`
	CreatedAt            string  `json:"createdAt"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// encodeOwner returns the canonical bytes of a schema-2 owner, after
// checking that they parse back to the same owner (validate before write,
// the pair of the check after read).
func encodeOwner(o Owner) []byte {
	if o.Schema != OwnerSchema || o.Epoch == 0 || o.UID < 0 {
		panic(fmt.Sprintf("lease: encoding an invalid owner: %+v", o))
	}
	data := canonicalOwner(o)
	if back, err := parseOwner(data); err != nil || back != o {
		panic(fmt.Sprintf("lease: owner does not round-trip: %v", err))
	}
	return data
}

// canonicalOwner writes the canonical bytes of ownerJSON (keys in byte
// order) field by field; TestCanonicalRecordsEqualStructEncoding holds them
// to statefile.Canonical of the ownerJSON struct.
func canonicalOwner(o Owner) []byte {
	object := statefile.NewCanonicalObject(512)
	object.NullableString("bootIdentity", o.BootIdentity)
	object.String("createdAt", o.CreatedAt)
	object.Uint("epoch", o.Epoch)
	object.String("executable", o.Executable)
	object.String("executableDevice", strconv.FormatUint(o.ExecutableDev, 10))
	object.String("executableInode", strconv.FormatUint(o.ExecutableIno, 10))
	object.String("generation", o.Generation)
	object.String("hostname", o.Hostname)
	object.String("piSessionFile", o.SessionFile)
	object.String("piSessionId", o.SessionID)
	object.Int("pid", int64(o.PID))
	object.NullableString("pidNamespace", o.PIDNamespace)
	object.String("processStartIdentity", o.ProcessStartIdentity)
	object.String("rootId", o.RootID)
	object.Int("schema", int64(o.Schema))
	object.Int("uid", int64(o.UID))
	return object.Bytes()
}

// ownerDocument is the ownerJSON of o: the struct whose statefile.Canonical
// bytes canonicalOwner must equal.
func ownerDocument(o Owner) ownerJSON {
	return ownerJSON{
		Schema: o.Schema, Generation: o.Generation, PISessionID: o.SessionID, PISessionFile: o.SessionFile,
		PID: o.PID, ProcessStartIdentity: o.ProcessStartIdentity, BootIdentity: nullable(o.BootIdentity),
		Executable: o.Executable, ExecutableDevice: strconv.FormatUint(o.ExecutableDev, 10),
		ExecutableInode: strconv.FormatUint(o.ExecutableIno, 10), PIDNamespace: nullable(o.PIDNamespace),
		UID: o.UID, Epoch: o.Epoch, Hostname: o.Hostname, RootID: o.RootID, CreatedAt: o.CreatedAt,
	}
}

// parseOwner strictly decodes an owner record of schema 1 or 2.
func parseOwner(data []byte) (Owner, error) {
	object, schema, err := decodeVersioned(data, "receiver owner", ownerSchemas)
	if err != nil {
		return Owner{}, err
	}
	owner := Owner{
		Schema:               int(schema),
		Generation:           object.NonEmptyString("generation"),
		SessionID:            object.NonEmptyString("piSessionId"),
		SessionFile:          absolutePath(object, "piSessionFile"),
		PID:                  int(object.Int("pid", 1, math.MaxInt32)),
		Executable:           absolutePath(object, "executable"),
		Hostname:             object.NonEmptyString("hostname"),
		RootID:               object.NonEmptyString("rootId"),
		CreatedAt:            timestamp(object, "createdAt", schema),
		UID:                  -1,
		ProcessStartIdentity: object.NonEmptyString("processStartIdentity"),
	}
	owner.BootIdentity, _ = object.NullableString("bootIdentity")
	if schema == OwnerSchema {
		owner.ExecutableDev = decimalString(object, "executableDevice")
		owner.ExecutableIno = decimalString(object, "executableInode")
		owner.PIDNamespace, _ = object.NullableString("pidNamespace")
		owner.UID = int(object.Int("uid", 0, math.MaxUint32))
		owner.Epoch = uint64(object.Int("epoch", 1, math.MaxInt64))
	}
	if err := object.Err(); err != nil {
		return Owner{}, err
	}
	return owner, nil
}

// schemaKeys is the key set of one schema a reader knows.
type schemaKeys struct {
	schema int64
	keys   []string
}

// ownerSchemas and guardSchemas list the schemas of each record, oldest
// first; the last one's keys include every older one's (TestVersionedKeySetsNest).
var (
	ownerSchemas = []schemaKeys{{ownerSchemaLegacy, ownerKeysLegacy}, {OwnerSchema, ownerKeys}}
	guardSchemas = []schemaKeys{{guardSchemaLegacy, guardKeysLegacy}, {GuardSchema, guardKeys}}
)

// keysOf returns schema's key set among schemas.
func keysOf(schemas []schemaKeys, schema int64, record string) ([]string, error) {
	for _, known := range schemas {
		if known.schema == schema {
			return known.keys, nil
		}
	}
	return nil, unsupportedSchema(schema, record)
}

func unsupportedSchema(schema int64, record string) error {
	return &statefile.SchemaError{Record: record, Problem: fmt.Sprintf(
		"unsupported schema %d (this leasekit reads 1 and 2)", schema)}
}

// decodeVersioned decodes a record whose key set depends on its schema,
// with exactly the errors, in the same order, of decodeVersionedSlowly:
// keys outside the newest schema's (allowed), then a bad schema, then an
// unknown schema, then keys outside the schema's own set. A good record
// (the common case) has its key set checked once: passing its schema's
// check implies passing the allowed one, since every schema's keys include
// "schema" and lie within the newest's (TestVersionedKeySetsNest).
func decodeVersioned(data []byte, record string, schemas []schemaKeys) (*statefile.Object, int64, error) {
	if err := validUTF8(data, record); err != nil {
		return nil, 0, err
	}
	object, err := statefile.DecodeMembers(data, record)
	if err != nil {
		// DecodeObject of the same bytes fails with this very error (both
		// split them with the same decodeFields first): not decoding a torn
		// or garbled record twice halves the cost of reading one.
		return nil, 0, err
	}
	schema := object.Int("schema", 1, math.MaxInt32)
	if object.Err() == nil {
		if keys, err := keysOf(schemas, schema, record); err == nil && object.CheckKeys(keys, nil) == nil {
			return object, schema, nil
		}
	}
	return decodeVersionedSlowly(data, record, schemas)
}

// decodeVersionedSlowly is decodeVersioned step by step, for its errors.
func decodeVersionedSlowly(data []byte, record string, schemas []schemaKeys) (*statefile.Object, int64, error) {
	allowed := schemas[len(schemas)-1].keys
	object, err := statefile.DecodeObject(data, record, []string{"schema"}, allowed)
	if err != nil {
		return nil, 0, err
	}
	schema := object.Int("schema", 1, math.MaxInt32)
	if err := object.Err(); err != nil {
		return nil, 0, err
	}
	keys, err := keysOf(schemas, schema, record)
	if err != nil {
		return nil, 0, err
	}
	if err := object.CheckKeys(keys, nil); err != nil {
		return nil, 0, err
	}
	return object, schema, nil
}

// validUTF8 refuses a record that is not UTF-8 (RFC 8259, section 8.1).
// The JSON decoder would turn each invalid byte into U+FFFD, so a record
// would parse to fields that are not its bytes (and two different files
// to one record). Nothing valid is lost: the original's JSON.stringify and
// this package's writer only ever write UTF-8. Non-canonical JSON, by
// contrast, is read: every record the original wrote is non-canonical
// (docs/FORMAT-lease.md, "Records").
func validUTF8(data []byte, record string) error {
	if utf8.Valid(data) {
		return nil
	}
	return &statefile.SchemaError{Record: record, Problem: "is not valid UTF-8"}
}

func absolutePath(object *statefile.Object, key string) string {
	value := object.NonEmptyString(key)
	if object.Err() == nil && !path.IsAbs(value) {
		object.Fail("%s must be an absolute path", key)
	}
	return fspath.Clean(value)
}

func decimalString(object *statefile.Object, key string) uint64 {
	value := object.NonEmptyString(key)
	if object.Err() != nil {
		return 0
	}
	number, err := strconv.ParseUint(value, 10, 64)
	if err != nil || strconv.FormatUint(number, 10) != value {
		object.Fail("%s must be a decimal string without leading zeros", key)
		return 0
	}
	return number
}

// guardRecord is the lifecycle guard file and, with the same shape, every
// reclaim intent: which process holds (or is reclaiming) the guard.
type guardRecord struct {
	Schema     int
	Generation string
	Identity   ProcessIdentity
	CreatedAt  string
}

func (g guardRecord) legacy() bool { return g.Schema == guardSchemaLegacy }

type guardJSON struct {
	Schema               int     `json:"schema"`
	Generation           string  `json:"generation"`
	PID                  int     `json:"pid"`
	ProcessStartIdentity string  `json:"processStartIdentity"`
	BootIdentity         *string `json:"bootIdentity"`
	Executable           string  `json:"executable"`
	ExecutableDevice     string  `json:"executableDevice"`
	ExecutableInode      string  `json:"executableInode"`
	PIDNamespace         *string `json:"pidNamespace"`
	UID                  int     `json:"uid"`
	Hostname             string  `json:"hostname"`
	CreatedAt            string  `json:"createdAt"`
}

func encodeGuard(g guardRecord) []byte {
	id := g.Identity
	if g.Schema != GuardSchema || id.Validate() != nil {
		panic(fmt.Sprintf("lease: encoding an invalid guard: %+v", g))
	}
	data := canonicalGuard(g)
	if back, err := parseGuard(data, "receiver lifecycle guard"); err != nil || back != g {
		panic(fmt.Sprintf("lease: guard does not round-trip: %v", err))
	}
	return data
}

// canonicalGuard writes the canonical bytes of guardJSON (keys in byte
// order) field by field, as canonicalOwner.
func canonicalGuard(g guardRecord) []byte {
	id := g.Identity
	object := statefile.NewCanonicalObject(384)
	object.NullableString("bootIdentity", id.BootID)
	object.String("createdAt", g.CreatedAt)
	object.String("executable", id.Executable)
	object.String("executableDevice", strconv.FormatUint(id.ExecutableDev, 10))
	object.String("executableInode", strconv.FormatUint(id.ExecutableIno, 10))
	object.String("generation", g.Generation)
	object.String("hostname", id.Hostname)
	object.Int("pid", int64(id.PID))
	object.NullableString("pidNamespace", id.PIDNamespace)
	object.String("processStartIdentity", id.StartTime)
	object.Int("schema", int64(g.Schema))
	object.Int("uid", int64(id.UID))
	return object.Bytes()
}

// guardDocument is the guardJSON of g (see ownerDocument).
func guardDocument(g guardRecord) guardJSON {
	id := g.Identity
	return guardJSON{
		Schema: g.Schema, Generation: g.Generation, PID: id.PID, ProcessStartIdentity: id.StartTime,
		BootIdentity: nullable(id.BootID), Executable: id.Executable,
		ExecutableDevice: strconv.FormatUint(id.ExecutableDev, 10),
		ExecutableInode:  strconv.FormatUint(id.ExecutableIno, 10),
		PIDNamespace:     nullable(id.PIDNamespace), UID: id.UID, Hostname: id.Hostname, CreatedAt: g.CreatedAt,
	}
}

// parseGuard strictly decodes a guard or intent of schema 1 or 2; record
// names which, for the diagnostics.
func parseGuard(data []byte, record string) (guardRecord, error) {
	object, schema, err := decodeVersioned(data, record, guardSchemas)
	if err != nil {
		return guardRecord{}, err
	}
	g := guardRecord{
		Schema:     int(schema),
		Generation: object.NonEmptyString("generation"),
		Identity: ProcessIdentity{
			PID:        int(object.Int("pid", 1, math.MaxInt32)),
			StartTime:  object.NonEmptyString("processStartIdentity"),
			Executable: absolutePath(object, "executable"),
			Hostname:   object.NonEmptyString("hostname"),
			UID:        -1,
		},
		CreatedAt: timestamp(object, "createdAt", schema),
	}
	g.Identity.BootID, _ = object.NullableString("bootIdentity")
	if schema == GuardSchema {
		g.Identity.ExecutableDev = decimalString(object, "executableDevice")
		g.Identity.ExecutableIno = decimalString(object, "executableInode")
		g.Identity.PIDNamespace, _ = object.NullableString("pidNamespace")
		g.Identity.UID = int(object.Int("uid", 0, math.MaxUint32))
	}
	if err := object.Err(); err != nil {
		return guardRecord{}, err
	}
	return g, nil
}

type epochJSON struct {
	Schema int    `json:"schema"`
	Epoch  uint64 `json:"epoch"`
}

func encodeEpoch(epoch uint64) []byte {
	if epoch == 0 || epoch > math.MaxInt64 {
		panic(fmt.Sprintf("lease: encoding epoch %d", epoch))
	}
	object := statefile.NewCanonicalObject(32)
	object.Uint("epoch", epoch)
	object.Int("schema", EpochSchema)
	return object.Bytes()
}

func parseEpoch(data []byte) (uint64, error) {
	const record = "receiver epoch counter"
	if err := validUTF8(data, record); err != nil {
		return 0, err
	}
	object, err := statefile.DecodeObject(data, record, epochKeys, nil)
	if err != nil {
		return 0, err
	}
	if schema := object.Int("schema", 1, math.MaxInt32); object.Err() == nil && schema != EpochSchema {
		object.Fail("unsupported schema %d (this leasekit reads %d)", schema, EpochSchema)
	}
	epoch := uint64(object.Int("epoch", 1, math.MaxInt64))
	return epoch, object.Err()
}

// formatTimestamp renders t as the original's Date.toISOString does.
func formatTimestamp(t time.Time) string { return t.UTC().Format(timestampLayout) }
