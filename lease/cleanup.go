package lease

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
)

// Leftovers of crashed operations, and why removing each is provably safe.
// cleanLeftovers runs only while holding the lifecycle guard, after a clear
// intent scan and a verified guard, so no other Manager is inside its
// guarded section.
//
//   - .receiver.prepare-* and .receiver.released-* directories, and
//     .tmp-epoch-* files, are only ever created by a guard holder. One that
//     exists while we hold the guard belongs to a holder that crashed (or
//     whose guard was reclaimed as provably dead). A leftover directory is
//     removed only when it holds nothing but regular files (owner.json and
//     its temps); anything else is left for an operator.
//   - .tmp-lg.* files (temps of guard and intent writes) are written by
//     processes that do NOT hold the guard. Their tag names the writer; one
//     is removed only when ClassifyRecord says that writer is stale. The tag
//     carries no executable or boot id, so the check is conservative: an
//     upgraded or rebooted writer's temp may stay for one more round, never
//     the reverse.
//   - .receiver.lifecycle.released-<generation>.json is a guard its holder
//     renamed away to release it (releaseGuardFile) and crashed before
//     removing; it is removed once it parses as the guard of that
//     generation and ClassifyRecord says its holder is stale.
//   - quarantine/ is never cleaned: it is evidence.
func (m *Manager) cleanLeftovers(c *call) error {
	removedTotal := 0
	for _, dir := range []string{m.namespace, m.reclaimsPath()} {
		removed, err := m.cleanDirectory(c, dir, leftoverRemovalsMax-removedTotal)
		if err != nil {
			return err
		}
		if removed > 0 {
			if err := statefile.SyncDir(m.fs, dir); err != nil {
				return err
			}
		}
		removedTotal += removed
	}
	return nil
}

func (m *Manager) cleanDirectory(c *call, dir string, budget int) (removed int, err error) {
	entries, err := m.fs.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("lease: listing %s for leftovers: %w", dir, err)
	}
	for _, entry := range entries {
		if removed >= budget {
			break
		}
		// The entry's path is joined only for an entry the cleanup acts on:
		// most of a namespace's entries are live records it passes over.
		var ok bool
		switch {
		case dir == m.namespace && entry.Type.IsDir() &&
			(strings.HasPrefix(entry.Name, preparePrefix) || strings.HasPrefix(entry.Name, releasedPrefix)):
			ok, err = m.removeLeftoverDir(c, fspath.Join(dir, entry.Name), nil)
		case dir == m.namespace && entry.Type.IsRegular() && strings.HasPrefix(entry.Name, guardReleasedPrefix):
			ok, err = m.removeReleasedGuard(c, fspath.Join(dir, entry.Name))
		case dir == m.namespace && entry.Type.IsRegular() &&
			strings.HasPrefix(entry.Name, statefile.TempPrefix+epochTempTag+"-"):
			ok, err = m.removeLeftoverFile(fspath.Join(dir, entry.Name))
		case entry.Type.IsRegular() && strings.HasPrefix(entry.Name, statefile.TempPrefix+tempTagPrefix):
			writer, parsed := parseTempTag(entry.Name)
			if parsed && m.writerStale(writer, c.current) {
				ok, err = m.removeLeftoverFile(fspath.Join(dir, entry.Name))
			}
		}
		if err != nil {
			return removed, err
		}
		if ok {
			removed++
		}
	}
	return removed, nil
}

// removeLeftoverDir removes dir if it is a real directory of the caller's
// uid (and, if expected is not nil, the inode expected names) holding at
// most leftoverEntriesMax regular files of that uid and nothing else.
// removed is false when it was left alone.
//
// It works through a handle: dir is opened O_DIRECTORY|O_NOFOLLOW and
// fstat-ed, and its entries are listed, checked (fstatat, no follow) and
// unlinked relative to that handle, so a symlink or another directory
// swapped in at the path, before or during the removal, is never followed:
// at worst its own name is unlinked, never what it points at.
func (m *Manager) removeLeftoverDir(c *call, dir string, expected *FileInfo) (removed bool, err error) {
	handle, err := m.fs.OpenFile(dir, O_RDONLY|O_DIRECTORY|O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		// A symlink or file at dir (ELOOP or ENOTDIR) is left alone.
		if info, statErr := m.fs.Lstat(dir); statErr == nil && (info.IsSymlink() || !info.IsDir()) {
			return false, nil
		}
		return false, fmt.Errorf("lease: opening leftover %s: %w", dir, err)
	}
	defer handle.Close()
	opened, err := handle.Stat()
	if err != nil {
		return false, fmt.Errorf("lease: leftover %s: %w", dir, err)
	}
	if !opened.IsDir() || opened.UID != c.uid ||
		(expected != nil && !statefile.SameInode(opened, *expected)) {
		return false, nil
	}
	entries, err := handle.ReadDir()
	if err != nil {
		return false, fmt.Errorf("lease: listing leftover %s: %w", dir, err)
	}
	if len(entries) > leftoverEntriesMax {
		return false, nil
	}
	for _, entry := range entries {
		info, err := handle.StatAt(entry.Name)
		if err != nil {
			return false, fmt.Errorf("lease: leftover %s: %w", dir, err)
		}
		if !info.IsRegular() || info.UID != c.uid {
			return false, nil
		}
	}
	for _, entry := range entries {
		if err := handle.RemoveAt(entry.Name, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("lease: removing leftover: %w", err)
		}
	}
	return m.removeLeftoverFile(dir)
}

// removeReleasedGuard removes a guard left at its private release name by
// a holder that crashed before removing it: only when the file is a valid
// guard whose generation is the one in its name (so its own holder moved
// it there) and whose writer is provably gone. Anything else stays.
func (m *Manager) removeReleasedGuard(c *call, name string) (bool, error) {
	read, err := m.readGuardFile(name, "released lifecycle guard", c.uid)
	if err != nil || !read.present || read.corrupt != "" || m.releasedGuardPath(read.guard.Generation) != name {
		return false, err
	}
	if m.classify(read.guard.Identity, read.guard.legacy(), c.current).Kind != OwnerStale {
		return false, nil
	}
	return m.removeLeftoverFile(name)
}

func (m *Manager) removeLeftoverFile(name string) (bool, error) {
	if err := m.fs.Remove(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("lease: removing leftover: %w", err)
	}
	return true, nil
}

// writerStale reports whether the process named in a temp tag is provably
// gone. The tag has no executable identity, so the inspection's executable
// is ignored (exeBlindInspector): only absence, a single-threaded zombie, a
// new start time or a new boot can make it stale.
func (m *Manager) writerStale(writer, current ProcessIdentity) bool {
	writer.BootID = ""
	state := ClassifyRecord(writer, current, exeBlindInspector{m.inspector})
	return state.Kind == OwnerStale
}

type exeBlindInspector struct{ inner Inspector }

func (e exeBlindInspector) Current() (ProcessIdentity, error) { return e.inner.Current() }

func (e exeBlindInspector) Inspect(pid int) Inspection {
	inspection := e.inner.Inspect(pid)
	inspection.Identity.ExecutableDev, inspection.Identity.ExecutableIno = 0, 0
	return inspection
}

// parseTempTag reads the writer out of ".tmp-lg.<ns>.<pid>.<start>.<host>-<uuid>".
func parseTempTag(name string) (ProcessIdentity, bool) {
	rest, ok := strings.CutPrefix(name, statefile.TempPrefix+tempTagPrefix)
	if !ok || len(rest) < uuidLength+1 || rest[len(rest)-uuidLength-1] != '-' {
		return ProcessIdentity{}, false
	}
	parts := strings.SplitN(rest[:len(rest)-uuidLength-1], ".", 4)
	if len(parts) != 4 {
		return ProcessIdentity{}, false
	}
	namespace, pidText, start, host := parts[0], parts[1], parts[2], parts[3]
	if namespace == "-" {
		namespace = ""
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || !isDecimal(start) {
		return ProcessIdentity{}, false
	}
	if encoded, isHex := strings.CutPrefix(host, "_"); isHex {
		decoded, err := hex.DecodeString(encoded)
		if err != nil {
			return ProcessIdentity{}, false
		}
		host = string(decoded)
	} else if !plainHost(host) {
		return ProcessIdentity{}, false
	}
	return ProcessIdentity{PID: pid, StartTime: start, Hostname: host, PIDNamespace: namespace}, true
}
