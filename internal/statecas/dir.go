package statecas

import (
	"errors"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// DirMode says how strictly CheckDir judges a directory's permissions.
type DirMode int

const (
	// DirPrivate requires exactly mode 0700.
	DirPrivate DirMode = iota + 1
	// DirNotShared requires no group or world write bit.
	DirNotShared
)

// CheckDir verifies that info (from Lstat) is a real directory, not a
// symlink, owned by uid, with the permissions mode asks for, and that it has
// a physical identity (dev+ino+birth time). It returns that identity.
func CheckDir(info lease.FileInfo, name string, uid uint32, mode DirMode) (lease.FileIdentity, error) {
	if info.IsSymlink() || !info.IsDir() {
		return lease.FileIdentity{}, newError(ErrUnsafe, name, "not a physical directory", nil)
	}
	if info.UID != uid {
		return lease.FileIdentity{}, newError(ErrUnsafe, name, "directory is owned by uid "+strconv.FormatUint(uint64(info.UID), 10), nil)
	}
	switch mode {
	case DirPrivate:
		if info.Perm() != statefile.DirMode {
			return lease.FileIdentity{}, newError(ErrUnsafe, name, "directory mode is "+info.Perm().String()+", not 0700", nil)
		}
	case DirNotShared:
		if info.Perm()&0o022 != 0 {
			return lease.FileIdentity{}, newError(ErrUnsafe, name, "directory is group- or world-writable", nil)
		}
	default:
		panic("statecas: unknown DirMode")
	}
	identity, ok := info.Identity()
	if !ok {
		return lease.FileIdentity{}, newError(ErrUnsafe, name, "directory has no birth time, so no physical identity", nil)
	}
	return identity, nil
}

// EnsurePrivateDir makes home/parts... exist, each created part mode 0700,
// every part's parent fsynced (a part found existing too), and checks every part is a private directory of
// uid (home itself must exist and not be group- or world-writable). It
// returns the full path.
func EnsurePrivateDir(env Env, uid uint32, home string, parts ...string) (string, error) {
	if !path.IsAbs(home) || fspath.Clean(home) != home {
		return "", newError(ErrUnsafe, home, "state home must be an absolute clean path", nil)
	}
	info, err := env.FS.Lstat(home)
	if err != nil {
		return "", err
	}
	if _, err := CheckDir(info, home, uid, DirNotShared); err != nil {
		return "", err
	}
	dir := home
	for _, part := range parts {
		if part == "" || strings.Contains(part, "/") || part == "." || part == ".." {
			panic("statecas: invalid directory part " + strconv.Quote(part))
		}
		parent := dir
		dir = fspath.Join(dir, part)
		// The parent is fsynced also when the part already exists: its
		// creator may have crashed (or failed to fsync) between its mkdir
		// and that fsync, and a record written inside a directory whose
		// entry is still volatile vanishes with it at a power loss.
		if err := env.FS.Mkdir(dir, statefile.DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if err := statefile.SyncDir(env.FS, parent); err != nil {
			return "", err
		}
		info, err := env.FS.Lstat(dir)
		if err != nil {
			return "", err
		}
		if _, err := CheckDir(info, dir, uid, DirPrivate); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// Entry is one name of a snapshot.
type Entry struct {
	Name string
	// Type holds the type bits (0 for a regular file), as lease.DirEntry.
	Type fs.FileMode
}

// IsRegular reports whether the entry is a regular file.
func (e Entry) IsRegular() bool { return e.Type.Type() == 0 }

// SnapshotOptions tunes Snapshot.
type SnapshotOptions struct {
	// EntriesMax bounds the entries reported (machinery entries of this
	// package excluded); more is ErrBound.
	EntriesMax int
	// RecoverOrphanedClaims removes mutation claims, orphan quarantines and
	// temps whose owner is provably dead.
	RecoverOrphanedClaims bool
}

// DirSnapshot is a listing bound to the directory's physical identity.
type DirSnapshot struct {
	Identity lease.FileIdentity
	// Entries are sorted by name and exclude this package's machinery
	// (mutation claims, orphan quarantines, its temps).
	Entries []Entry
	// ClaimsActive counts mutation claims of live or uninspectable owners.
	ClaimsActive int
	// Recovered counts machinery entries of dead owners removed.
	Recovered int
}

type machinery int

const (
	notMachinery machinery = iota
	machineryClaim
	machineryOrphan
	machineryClaimTemp
	machineryDataTemp
)

func classifyName(name string) machinery {
	switch {
	case strings.HasPrefix(name, statefile.TempPrefix+claimTempTag+"-"):
		return machineryClaimTemp
	case strings.HasPrefix(name, statefile.TempPrefix+dataTempTagPrefix):
		return machineryDataTemp
	case strings.HasPrefix(name, ".") && strings.HasSuffix(name, claimSuffix):
		return machineryClaim
	case strings.HasPrefix(name, ".") && strings.HasSuffix(name, orphanSuffix) && strings.Contains(name, claimSuffix+"."):
		return machineryOrphan
	}
	return notMachinery
}

// Snapshot lists dir, a private (0700) directory of uid, bound to its
// identity: the identity is read before and after the listing and must not
// change. With RecoverOrphanedClaims, it first clears this package's
// machinery left by dead processes; a corrupt claim fails closed.
func Snapshot(env Env, uid uint32, dir string, options SnapshotOptions) (DirSnapshot, error) {
	if options.EntriesMax <= 0 || options.EntriesMax > dirEntriesMax {
		panic("statecas: Snapshot needs EntriesMax in (0, dirEntriesMax]")
	}
	identity, err := privateDirIdentity(env, uid, dir)
	if err != nil {
		return DirSnapshot{}, err
	}
	listing, err := readDirBounded(env, dir)
	if err != nil {
		return DirSnapshot{}, err
	}
	snapshot := DirSnapshot{Identity: identity}
	var machineryNames []lease.DirEntry
	for i, entry := range listing {
		// Each list is made at its first entry, room for the rest of the
		// listing: one allocation, where appending grew it several times.
		if classifyName(entry.Name) == notMachinery {
			snapshot.Entries = appendSized(snapshot.Entries, Entry{Name: entry.Name, Type: entry.Type}, len(listing)-i)
		} else {
			machineryNames = appendSized(machineryNames, entry, len(listing)-i)
		}
	}
	if len(snapshot.Entries) > options.EntriesMax {
		return DirSnapshot{}, newError(ErrBound, dir, "directory holds more than "+strconv.Itoa(options.EntriesMax)+" entries", nil)
	}
	if err := sweepMachinery(env, dir, machineryNames, options.RecoverOrphanedClaims, &snapshot); err != nil {
		return DirSnapshot{}, err
	}
	after, err := privateDirIdentity(env, uid, dir)
	if err != nil {
		return DirSnapshot{}, err
	}
	if after != identity {
		return DirSnapshot{}, newError(ErrChanged, dir, "directory was replaced during its snapshot", nil)
	}
	return snapshot, nil
}

// appendSized appends item to list, first making list with room for
// room items when it is nil (so a list nothing is appended to stays nil).
func appendSized[T any](list []T, item T, room int) []T {
	if list == nil {
		list = make([]T, 0, room)
	}
	return append(list, item)
}

func privateDirIdentity(env Env, uid uint32, dir string) (lease.FileIdentity, error) {
	info, err := env.FS.Lstat(dir)
	if err != nil {
		return lease.FileIdentity{}, err
	}
	return CheckDir(info, dir, uid, DirPrivate)
}

// sweepMachinery counts live claims and, when recover is set, removes what
// dead owners left: claims (through recoverOrphan), orphan quarantines and
// claim temps of dead owners, and data temps whose claim no longer exists.
func sweepMachinery(env Env, dir string, names []lease.DirEntry, recover bool, snapshot *DirSnapshot) error {
	current, err := currentIdentity(env)
	if err != nil {
		return err
	}
	liveClaimIDs := make(map[string]bool)
	var dataTemps []string
	for _, entry := range names {
		name := fspath.Join(dir, entry.Name)
		kind := classifyName(entry.Name)
		if kind == machineryDataTemp {
			dataTemps = append(dataTemps, name)
			continue
		}
		observed, inode, err := readClaim(env, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil && kind == machineryClaimTemp && KindOf(err) == ErrCorrupt {
			// A claim temp is written in place and may be mid-write by a
			// live claimant (or torn by a crash): it proves nothing, and is
			// left alone.
			continue
		}
		if err != nil {
			return err
		}
		state := lease.ClassifyRecord(observed.Owner, current, env.Inspector)
		if state.Kind != lease.OwnerStale || !recover {
			liveClaimIDs[observed.ID] = true
			if kind == machineryClaim {
				snapshot.ClaimsActive++
			}
			continue
		}
		if kind == machineryClaim {
			err = recoverOrphan(env, name, observed, inode)
		} else {
			err = removeOrphanClaim(env, name, observed.ID)
		}
		if err != nil {
			return err
		}
		snapshot.Recovered++
	}
	if !recover {
		return nil
	}
	for _, name := range dataTemps {
		if liveClaimIDs[dataTempClaimID(path.Base(name))] {
			continue
		}
		// Only our own uid's temps are ours to remove.
		if info, err := env.FS.Lstat(name); err == nil && info.UID != env.UID {
			return newError(ErrUnsafe, name, "file is owned by uid "+strconv.FormatUint(uint64(info.UID), 10)+
				", not by this process's uid "+strconv.FormatUint(uint64(env.UID), 10), nil)
		}
		if err := removeIfPresent(env, name); err != nil {
			return err
		}
		snapshot.Recovered++
	}
	return statefile.SyncDir(env.FS, dir)
}

// dataTempClaimID extracts <claim id> from ".tmp-cas-<claim id>-<uuid>".
func dataTempClaimID(name string) string {
	rest := strings.TrimPrefix(name, statefile.TempPrefix+dataTempTagPrefix)
	const uuidLength = 36
	if len(rest) < uuidLength {
		return ""
	}
	return rest[:uuidLength]
}

// BatchFile is one file of ReadBatch.
type BatchFile struct {
	Name    string
	Present bool
	Content []byte
}

// BatchLimits bounds ReadBatch.
type BatchLimits struct {
	BytesPerFileMax int64
	BytesTotalMax   int64
}

// ReadBatch reads the named files of dir (base names), each bounded, in
// order, never following a symlink, and verifies that dir kept the identity
// expected (from a Snapshot) before and after. A missing file is reported
// Present false.
func ReadBatch(env Env, uid uint32, dir string, names []string, limits BatchLimits, expected lease.FileIdentity) ([]BatchFile, error) {
	if limits.BytesPerFileMax <= 0 || limits.BytesTotalMax <= 0 || len(names) > dirEntriesMax {
		panic("statecas: ReadBatch needs positive limits and at most dirEntriesMax names")
	}
	if env.UID != uid {
		panic("statecas: ReadBatch uid differs from env.UID")
	}
	if err := expectIdentity(env, uid, dir, expected); err != nil {
		return nil, err
	}
	files := make([]BatchFile, 0, len(names))
	var total int64
	for _, name := range names {
		if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
			panic("statecas: ReadBatch name must be a base name: " + strconv.Quote(name))
		}
		full := fspath.Join(dir, name)
		content, present, err := ReadIfPresent(env, full, limits.BytesPerFileMax)
		if err != nil {
			return nil, err
		}
		total += int64(len(content))
		if total > limits.BytesTotalMax {
			return nil, newError(ErrBound, dir, "batch read exceeds its total byte bound", nil)
		}
		files = append(files, BatchFile{Name: name, Present: present, Content: content})
	}
	if err := expectIdentity(env, uid, dir, expected); err != nil {
		return nil, err
	}
	return files, nil
}

func expectIdentity(env Env, uid uint32, dir string, expected lease.FileIdentity) error {
	identity, err := privateDirIdentity(env, uid, dir)
	if err != nil {
		return err
	}
	if identity != expected {
		return newError(ErrChanged, dir, "directory is not the one snapshotted", nil)
	}
	return nil
}

// CheckPrivateDirs is EnsurePrivateDir's check without its effects: it
// creates and syncs nothing, checks home and every part that exists as
// EnsurePrivateDir would (the same typed refusals), and stops at the first
// part that does not exist yet (complete false). An inspection calls it so
// that a state home a mutation refuses never inspects as free.
func CheckPrivateDirs(env Env, uid uint32, home string, parts ...string) (complete bool, err error) {
	if !path.IsAbs(home) || fspath.Clean(home) != home {
		return false, newError(ErrUnsafe, home, "state home must be an absolute clean path", nil)
	}
	info, err := env.FS.Lstat(home)
	if err != nil {
		return false, err
	}
	if _, err := CheckDir(info, home, uid, DirNotShared); err != nil {
		return false, err
	}
	dir := home
	for _, part := range parts {
		dir = fspath.Join(dir, part)
		info, err := env.FS.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if _, err := CheckDir(info, dir, uid, DirPrivate); err != nil {
			return false, err
		}
	}
	return true, nil
}
