package lease_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
)

// world is one test's shared world: a real namespace directory in
// t.TempDir, the real-OS FS (wrapped by a recording HookFS), and scripted
// time, process table and IDs shared by every simulated process.
type world struct {
	t     *testing.T
	ns    string
	fs    *leasetest.HookFS
	clock *leasetest.Clock
	table *leasetest.Inspector
	ids   *leasetest.IDs
}

const rootID = "root-1"

func newWorld(t *testing.T) *world {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return &world{
		t:     t,
		ns:    filepath.Join(dir, "ns"),
		fs:    leasetest.NewHookFS(osenv.NewFS()),
		clock: leasetest.NewClock(),
		table: leasetest.NewInspector(leasetest.Identity(1)),
		ids:   leasetest.NewIDs(),
	}
}

// manager returns a Manager acting as the process id (entered as live).
func (w *world) manager(id lease.ProcessIdentity) *lease.Manager {
	w.t.Helper()
	return w.managerWith(id, 0)
}

func (w *world) managerWith(id lease.ProcessIdentity, guardWait time.Duration) *lease.Manager {
	w.t.Helper()
	m, err := lease.NewManager(lease.Config{
		Namespace: w.ns, RootID: rootID, FS: w.fs, Clock: w.clock,
		Inspector: w.table.As(id), IDs: w.ids, GuardWait: guardWait,
	})
	require.NoError(w.t, err)
	return m
}

var request = lease.AcquireRequest{SessionID: "session-1", SessionFile: "/home/u/.pi/session-1.jsonl"}

// acquire runs Acquire and requires no error.
func (w *world) acquire(m *lease.Manager) lease.AcquireResult {
	w.t.Helper()
	result, err := m.Acquire(context.Background(), request)
	require.NoError(w.t, err)
	return result
}

func (w *world) path(parts ...string) string {
	return filepath.Join(append([]string{w.ns}, parts...)...)
}

// tree returns every path under the namespace with its kind and, for
// files, content: a snapshot to prove that nothing changed.
func (w *world) tree() map[string]string {
	w.t.Helper()
	snapshot := map[string]string{}
	err := filepath.WalkDir(w.ns, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.ns, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			snapshot[rel] = "symlink:" + target
			return err
		case d.IsDir():
			snapshot[rel] = "dir"
		default:
			data, err := os.ReadFile(p)
			snapshot[rel] = "file:" + string(data)
			return err
		}
		return nil
	})
	require.NoError(w.t, err)
	return snapshot
}

// names lists a directory's entries, sorted.
func (w *world) names(parts ...string) []string {
	w.t.Helper()
	entries, err := os.ReadDir(w.path(parts...))
	require.NoError(w.t, err)
	var names []string
	for _, entry := range entries {
		names = append(names, entry.Name())
	}
	sort.Strings(names)
	return names
}

// write puts a file (making parents) under the namespace.
func (w *world) write(rel, content string) {
	w.t.Helper()
	p := w.path(rel)
	require.NoError(w.t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(w.t, os.WriteFile(p, []byte(content), 0o600))
}

func (w *world) read(rel string) string {
	w.t.Helper()
	data, err := os.ReadFile(w.path(rel))
	require.NoError(w.t, err)
	return string(data)
}

// ownerJSON renders a schema-2 owner record for id by hand (not through the
// engine), so corrupt variants can be derived from it.
func ownerJSON(id lease.ProcessIdentity, generation string, epoch int) string {
	return `{"bootIdentity":"` + id.BootID + `","createdAt":"2026-01-02T03:04:05.000Z","epoch":` + itoa(epoch) +
		`,"executable":"` + id.Executable + `","executableDevice":"` + utoa(id.ExecutableDev) +
		`","executableInode":"` + utoa(id.ExecutableIno) + `","generation":"` + generation +
		`","hostname":"` + id.Hostname + `","pid":` + itoa(id.PID) + `,"piSessionFile":"/s/f.jsonl",` +
		`"piSessionId":"s","pidNamespace":"` + id.PIDNamespace + `","processStartIdentity":"` + id.StartTime +
		`","rootId":"` + rootID + `","schema":2,"uid":` + itoa(id.UID) + "}\n"
}

// guardJSON renders a schema-2 guard (or intent) record for id.
func guardJSON(id lease.ProcessIdentity, generation string) string {
	return `{"bootIdentity":"` + id.BootID + `","createdAt":"2026-01-02T03:04:05.000Z",` +
		`"executable":"` + id.Executable + `","executableDevice":"` + utoa(id.ExecutableDev) +
		`","executableInode":"` + utoa(id.ExecutableIno) + `","generation":"` + generation +
		`","hostname":"` + id.Hostname + `","pid":` + itoa(id.PID) + `,"pidNamespace":"` + id.PIDNamespace +
		`","processStartIdentity":"` + id.StartTime + `","schema":2,"uid":` + itoa(id.UID) + "}\n"
}

func itoa(n int) string    { return strconv.Itoa(n) }
func utoa(n uint64) string { return strconv.FormatUint(n, 10) }
