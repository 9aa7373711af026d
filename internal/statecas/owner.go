package statecas

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// Owner is the process identity that admission and dirlease records carry:
// the originals' {pid, bootId, processStartId} digests, extended (schema 3) with
// the hostname and PID namespace that the digests cannot express. Legacy
// records (Legacy true) have only the original's three keys; they are read
// as if written on this host and in this PID namespace, as the original
// assumed.
type Owner struct {
	PID int
	// BootID is BootDigest of the raw kernel boot id.
	BootID string
	// ProcessStartID is StartDigest of the process's start identity.
	ProcessStartID string
	Hostname       string
	PIDNamespace   string
	// Legacy marks an original-implementation owner (three keys). Its digests were made by
	// the original's process-identity module, whose preimage is not ours.
	Legacy bool
}

// OwnerKeys and LegacyOwnerKeys are the exact key sets of the owner object.
var (
	OwnerKeys       = []string{"bootId", "hostname", "pid", "pidNamespace", "processStartId"}
	LegacyOwnerKeys = []string{"bootId", "pid", "processStartId"}
)

// PIDMax is the largest PID a record may hold (the originals' 2^31-1).
const PIDMax = 2_147_483_647

// hostnameBytesMax and namespaceBytesMax bound the free-text owner fields.
const (
	hostnameBytesMax  = 255
	namespaceBytesMax = 64
)

// UnknownBootDigest is the digest of an empty boot id: a host that does not
// expose one. Boot comparisons involving it prove nothing.
var UnknownBootDigest = statefile.SHA256Hex(nil)

// BootDigest is the bootId of a record: the lower-case hex SHA-256 of the
// raw boot id text (for Linux, /proc/sys/kernel/random/boot_id without its
// newline). An empty boot id gives UnknownBootDigest.
func BootDigest(rawBootID string) string {
	slot := &bootDigests[bootDigestSlot(rawBootID)]
	if last := slot.Load(); last != nil && last.raw == rawBootID {
		return last.digest
	}
	digest := statefile.SHA256Hex([]byte(rawBootID))
	slot.Store(&bootDigest{raw: rawBootID, digest: digest})
	return digest
}

// bootDigests remember BootDigest's recent answers: a host has one boot id
// per boot, and every owner captured or checked on it hashed that id again
// (two allocations and a SHA-256 each, a twentieth of an admission run's
// allocations). The digest is a pure function of the id, so a kept one is
// what hashing would give. Slots are atomic pointers to immutable entries,
// for concurrent callers.
var bootDigests [bootDigestSlots]atomic.Pointer[bootDigest]

const bootDigestSlots = 8

type bootDigest struct{ raw, digest string }

// bootDigestSlot picks a boot id's slot by its last byte (boot ids end in
// random hex digits).
func bootDigestSlot(rawBootID string) int {
	if rawBootID == "" {
		return 0
	}
	return int(rawBootID[len(rawBootID)-1]) % bootDigestSlots
}

// StartDigest is the processStartId of a record: the SHA-256 of
//
//	"leasekit-process-start-v1\n" + startTicks + "\n" + executableDev + "\n" +
//	executableIno + "\n" + uid + "\n"
//
// all decimal. It binds the PID to one incarnation (start time) of one
// executable inode (an upgrade that replaced the binary's path keeps the old
// inode, so it keeps the digest) run by one user.
func StartDigest(p lease.ProcessIdentity) string {
	var buf [startPreimageBytes]byte
	return statefile.SHA256Hex(appendStartPreimage(buf[:0], p))
}

// startPreimageBytes holds a preimage with a start time of up to 20 digits
// on the stack; a longer one grows onto the heap.
const startPreimageBytes = 128

// appendStartPreimage appends StartDigest's preimage of p to dst.
func appendStartPreimage(dst []byte, p lease.ProcessIdentity) []byte {
	dst = append(dst, "leasekit-process-start-v1\n"...)
	dst = append(append(dst, p.StartTime...), '\n')
	dst = append(strconv.AppendUint(dst, p.ExecutableDev, 10), '\n')
	dst = append(strconv.AppendUint(dst, p.ExecutableIno, 10), '\n')
	return append(strconv.AppendInt(dst, int64(p.UID), 10), '\n')
}

// OwnerOf is the schema-3 owner record of a captured process identity.
func OwnerOf(p lease.ProcessIdentity) Owner {
	return Owner{
		PID:            p.PID,
		BootID:         BootDigest(p.BootID),
		ProcessStartID: StartDigest(p),
		Hostname:       p.Hostname,
		PIDNamespace:   p.PIDNamespace,
	}
}

// WriteCanonical writes the owner as the object-valued field key of object:
// the members of Wire, written without a map (what the engines' records
// use; their tests compare it with Wire's encoding).
func (o Owner) WriteCanonical(object *statefile.CanonicalObject, key string) {
	object.Open(key)
	object.String("bootId", o.BootID)
	if !o.Legacy {
		object.String("hostname", o.Hostname)
	}
	object.Int("pid", int64(o.PID))
	if !o.Legacy {
		object.String("pidNamespace", o.PIDNamespace)
	}
	object.String("processStartId", o.ProcessStartID)
	object.Close()
}

// Wire is the owner as the JSON object written to disk, as a map: the
// reference WriteCanonical's encoding is checked against.
func (o Owner) Wire() map[string]any {
	if o.Legacy {
		return map[string]any{"pid": o.PID, "bootId": o.BootID, "processStartId": o.ProcessStartID}
	}
	return map[string]any{
		"pid": o.PID, "bootId": o.BootID, "processStartId": o.ProcessStartID,
		"hostname": o.Hostname, "pidNamespace": o.PIDNamespace,
	}
}

// ParseOwner decodes an owner object. legacy selects the original's
// three-key shape; otherwise the five-key schema-3 shape is required exactly.
func ParseOwner(raw []byte, record string, legacy bool) (Owner, error) {
	keys := OwnerKeys
	if legacy {
		keys = LegacyOwnerKeys
	}
	object, err := statefile.ObjectFrom(raw, record, keys, nil)
	if err != nil {
		return Owner{}, err
	}
	owner := Owner{Legacy: legacy}
	owner.PID = int(object.Int("pid", 1, PIDMax))
	owner.BootID = object.String("bootId")
	owner.ProcessStartID = object.String("processStartId")
	if object.Err() == nil && (!statefile.IsSHA256Hex(owner.BootID) || !statefile.IsSHA256Hex(owner.ProcessStartID)) {
		object.Fail("bootId and processStartId must be 64 lower-case hex digits")
	}
	if !legacy {
		owner.Hostname = object.NonEmptyString("hostname")
		owner.PIDNamespace = object.String("pidNamespace")
		if object.Err() == nil && (len(owner.Hostname) > hostnameBytesMax || len(owner.PIDNamespace) > namespaceBytesMax) {
			object.Fail("hostname or pidNamespace is too long")
		}
	}
	if err := object.Err(); err != nil {
		return Owner{}, err
	}
	return owner, nil
}

// Status is an owner's liveness: the originals' ProcessOwnerStatus.
type Status int

const (
	// StatusLive is the originals' "exact-live-owner".
	StatusLive Status = iota + 1
	// StatusDead: the recorded process is provably gone.
	StatusDead
	// StatusUnknown: liveness cannot be decided (remote host, another PID
	// namespace, inspection failed); never reclaim.
	StatusUnknown
)

func (s Status) String() string {
	switch s {
	case StatusLive:
		return "exact-live-owner"
	case StatusDead:
		return "dead"
	case StatusUnknown:
		return "unknown"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// OwnerState is a Status with the reason for it.
type OwnerState struct {
	Status Status
	Reason string
}

// ErrNotCapturable says a PID cannot be bound as an owner: it is absent, a
// dead zombie, or cannot be inspected.
var ErrNotCapturable = errors.New("process identity cannot be captured")

// Capture inspects pid and returns its schema-3 owner record. Only a live
// process with a valid identity can be captured.
func Capture(inspector lease.Inspector, pid int) (Owner, error) {
	if pid < 1 || pid > PIDMax {
		return Owner{}, fmt.Errorf("PID %d: %w", pid, ErrNotCapturable)
	}
	inspection := inspector.Inspect(pid)
	if inspection.Kind != lease.InspectLive {
		return Owner{}, fmt.Errorf("PID %d is %v: %w", pid, inspection.Kind, ErrNotCapturable)
	}
	if inspection.State == lease.StateZombie && inspection.Threads <= 1 {
		return Owner{}, fmt.Errorf("PID %d is a zombie: %w", pid, ErrNotCapturable)
	}
	if err := inspection.Identity.Validate(); err != nil || inspection.Identity.PID != pid {
		return Owner{}, fmt.Errorf("PID %d has an invalid identity (%v): %w", pid, err, ErrNotCapturable)
	}
	return OwnerOf(inspection.Identity), nil
}

// OwnerStatus classifies a recorded owner against the process table, with
// the rules of lease.ClassifyRecord restated over digests:
//
//  1. another hostname: unknown (remote; never recover from here);
//  2. another PID namespace: unknown;
//  3. another boot digest (both known): dead;
//  4. inspect(pid): absent is dead, unknown is unknown;
//  5. a zombie with one thread is dead;
//  6. StartDigest of the observed identity equal: live; else dead (PID
//     reuse, another executable inode, another user).
//
// A legacy owner is taken to be on this host and namespace. Its
// processStartId was made by the original's own preimage, which cannot be
// recomputed, so a live PID under a legacy record is unknown, never dead
// and never live: only absence, a dead zombie or a reboot proves it gone.
func OwnerStatus(owner Owner, current lease.ProcessIdentity, inspector lease.Inspector) OwnerState {
	if !owner.Legacy && owner.Hostname != current.Hostname {
		return OwnerState{StatusUnknown, fmt.Sprintf("owner is on remote host %q", owner.Hostname)}
	}
	if !owner.Legacy && owner.PIDNamespace != current.PIDNamespace {
		return OwnerState{StatusUnknown, fmt.Sprintf("owner PID %d is in PID namespace %q, this process is in %q",
			owner.PID, owner.PIDNamespace, current.PIDNamespace)}
	}
	if ProvablyOtherBoot(owner.BootID, BootDigest(current.BootID)) {
		return OwnerState{StatusDead, lease.StaleBootChanged}
	}
	inspection := inspector.Inspect(owner.PID)
	switch inspection.Kind {
	case lease.InspectAbsent:
		return OwnerState{StatusDead, lease.StalePIDAbsent}
	case lease.InspectUnknown:
		return OwnerState{StatusUnknown, fmt.Sprintf("owner PID %d cannot be inspected: %s", owner.PID, inspection.Diagnostic)}
	case lease.InspectLive:
	default:
		panic(fmt.Sprintf("statecas: inspector returned %v for PID %d", inspection.Kind, owner.PID))
	}
	if inspection.State == lease.StateZombie && inspection.Threads <= 1 {
		return OwnerState{StatusDead, lease.StaleZombie}
	}
	if StartDigest(inspection.Identity) == owner.ProcessStartID {
		return OwnerState{StatusLive, ""}
	}
	if owner.Legacy {
		return OwnerState{StatusUnknown, fmt.Sprintf(
			"legacy owner PID %d is live and its seed-era start digest cannot be verified", owner.PID)}
	}
	return OwnerState{StatusDead, lease.StaleStartChanged}
}

// ProvablyOtherBoot reports whether two boot digests prove different boots:
// both known and unequal.
func ProvablyOtherBoot(a, b string) bool {
	return a != UnknownBootDigest && b != UnknownBootDigest && a != b
}
