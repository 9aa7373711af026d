package hostile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

// A lifecycle drives one engine through every path that creates, renames
// or removes something: reclaims of stale records, leftover cleanup,
// orphaned mutation claims, recovery of a dead owner's directory, and the
// ordinary acquire / update / release. Errors are ignored: the security
// tests judge the tree, and a planted symlink may legitimately make a step
// refuse.
type lifecycle struct {
	engine string
	// roots are the directories the engine owns (relative to the base):
	// everything in them must be 0600 files and 0700 directories.
	roots []string
	setup func(w *world)
	// run returns every error it met (joined): a plain run must meet none.
	run func(w *world) error
}

const (
	ownerDead = `{"bootIdentity":"boot-1","createdAt":"2026-01-02T03:04:05.000Z","epoch":3,` +
		`"executable":"/usr/local/bin/leasekit","executableDevice":"2049","executableInode":"131072",` +
		`"generation":"00000000-0000-4000-8000-000000000abc","hostname":"host-a","piSessionFile":"/s/0.json",` +
		`"piSessionId":"s0","pid":42,"pidNamespace":"4026531836","processStartIdentity":"1042","rootId":"root-1",` +
		`"schema":2,"uid":${UID}}` + "\n"
	guardDead = `{"bootIdentity":"boot-1","createdAt":"2026-01-02T03:04:05.000Z",` +
		`"executable":"/usr/local/bin/leasekit","executableDevice":"2049","executableInode":"131072",` +
		`"generation":"00000000-0000-4000-8000-000000000def","hostname":"host-a","pid":42,` +
		`"pidNamespace":"4026531836","processStartIdentity":"1042","schema":2,"uid":${UID}}` + "\n"
	admissionDead = `{"helperOwner":null,"id":"00000000-0000-4000-8000-000000000001",` +
		`"kind":"beeper-message-like-me-export-admission","owner":{"bootId":"${BOOT}","hostname":"host-a",` +
		`"pid":42,"pidNamespace":"4026531836","processStartId":"${START:42}"},"phase":"parent-owned",` +
		`"revision":"00000000-0000-4000-8000-000000000002","schemaVersion":3}` + "\n"
	mutationDead = `{"id":"00000000-0000-4000-8000-000000000077","kind":"leasekit-state-mutation",` +
		`"owner":{"bootId":"boot-1","executableDev":"2049","executableIno":"131072","hostname":"host-a",` +
		`"pid":42,"pidNamespace":"4026531836","startTime":"1042","uid":${UID}},"schemaVersion":1,` +
		`"target":"active.json"}` + "\n"
	claimDead = `{"childOwner":null,"createdAtMs":1000,"directoryIdentity":${IDENT:work/a},` +
		`"id":"00000000-0000-4000-8000-000000000001","kind":"beeper-message-like-me-directory-lease",` +
		`"outputRoot":null,"owner":{"bootId":"${BOOT}","hostname":"host-a","pid":42,"pidNamespace":"4026531836",` +
		`"processStartId":"${START:42}"},"parentIdentity":${IDENT:work},"parentPath":"${ABS:work}",` +
		`"path":"${ABS:work/a}","phase":"preparing","recoverAfterMs":2000,"role":"raw-working","schemaVersion":3}` + "\n"
)

// plant writes a templated record into the world before the lifecycle.
func (w *world) plant(rel, record string) {
	data, err := w.expand([]byte(record))
	must(w.t, err)
	must(w.t, w.b.mkdirAll(path.Dir(w.b.abs(rel)), 0o700))
	must(w.t, writeFile(w.b.engine, w.b.abs(rel), data))
}

var lifecycles = []lifecycle{
	{
		engine: "lease", roots: []string{"ns"},
		setup: func(w *world) {
			w.plant("ns/receiver.lifecycle.guard.json", guardDead)
			w.plant("ns/receiver.lock/owner.json", ownerDead)
			w.plant("ns/.receiver.prepare-leftover/owner.json", ownerDead)
		},
		run: func(w *world) error {
			manager, err := lease.NewManager(w.leaseConfig(w.b.abs("ns")))
			must(w.t, err)
			ctx := context.Background()
			reclaims := 0
			if _, err := w.b.admin.Lstat(w.b.abs("ns/receiver.lock")); err == nil {
				reclaims = 1
			}
			result, errAcquire := manager.Acquire(ctx, lease.AcquireRequest{SessionID: "s1", SessionFile: "/s/1.json"})
			if result.Kind != lease.Acquired || len(result.Reclaimed) != reclaims {
				errAcquire = errors.Join(errAcquire, fmt.Errorf("first acquire: %v, %d reclaimed", result.Kind, len(result.Reclaimed)))
			}
			generation := result.Owner.Generation
			errCurrent := manager.WithCurrentLease(ctx, generation, func(context.Context, lease.Owner) error { return nil })
			released, errRelease := manager.Release(ctx, generation)
			if released.Kind != lease.Released {
				errRelease = errors.Join(errRelease, fmt.Errorf("release: %v", released.Kind))
			}
			again, errAgain := manager.Acquire(ctx, lease.AcquireRequest{SessionID: "s2", SessionFile: "/s/2.json"})
			_, errLast := manager.Release(ctx, again.Owner.Generation)
			return errors.Join(errAcquire, errCurrent, errRelease, errAgain, errLast)
		},
	},
	{
		engine: "admission", roots: []string{"home/recovery"},
		setup: func(w *world) {
			must(w.t, w.b.mkdirAll(w.b.abs("home"), 0o700))
			w.plant("$ADM/active.json", admissionDead)
			w.plant("$ADM/.active.json.mutation", mutationDead)
		},
		run: func(w *world) error {
			handle, err := admission.Acquire(context.Background(), w.admissionConfig())
			if err != nil {
				return err
			}
			return errors.Join(handle.BeginHelperLaunch(context.Background()), handle.BindHelper(context.Background(), 43), handle.Settle(context.Background()), handle.Release(context.Background()))
		},
	},
	{
		engine: "dirlease", roots: []string{"home/recovery"},
		setup: func(w *world) {
			must(w.t, w.b.mkdirAll(w.b.abs("home"), 0o700))
			must(w.t, w.b.mkdirAll(w.b.abs("work/a/nested"), 0o700))
			must(w.t, w.b.mkdirAll(w.b.abs("work/b"), 0o700))
			w.plant("work/a/data", "precious\n")
			w.plant("work/a/nested/deep", "deeper\n")
			w.plant("$DL/00000000-0000-4000-8000-000000000001.json", claimDead)
		},
		run: func(w *world) error {
			config := w.dirleaseConfig()
			_, planted := w.b.admin.Lstat(w.b.abs("$DL/00000000-0000-4000-8000-000000000001.json"))
			report, err := dirlease.Recover(context.Background(), config)
			if err == nil && planted == nil && report.Recovered != 1 {
				err = fmt.Errorf("recovery report %+v", report)
			}
			if err != nil {
				return err
			}
			handle, err := dirlease.Create(context.Background(), config, dirlease.CreateRequest{Role: dirlease.RoleRawWorking,
				Path: w.b.abs("work/b"), RecoverAfterMs: leasetest.Epoch.UnixMilli() + 1000})
			if err != nil {
				return err
			}
			return errors.Join(handle.Update(context.Background(), dirlease.PhaseLaunching, 0), handle.Update(context.Background(), dirlease.PhaseRunning, 43),
				handle.Update(context.Background(), dirlease.PhaseSettled, 0), handle.Release(context.Background()))
		},
	},
}

func lifecycleWorld(t *testing.T, b *backend, engine string) *world {
	s := &state{engine: engine, name: "lifecycle", op: []string{"lifecycle"}, processes: map[int]string{42: "dead", 43: "live"}}
	w := newWorld(t, b, s)
	w.setupOutside()
	return w
}

// TestLifecycleModes: with a umask of 0 (so no mode owes anything to the
// umask), every file an engine creates during its lifecycle is a 0600
// regular file and every directory a 0700 directory of the current uid,
// checked right after each create, and the engine's directories hold
// nothing else at the end.
func TestLifecycleModes(t *testing.T) {
	previous := unix.Umask(0)
	defer unix.Umask(previous)
	for _, cycle := range lifecycles {
		for _, b := range []*backend{realBackend(t), simBackendUmaskNone()} {
			t.Run(cycle.engine+"/"+b.name, func(t *testing.T) {
				w := lifecycleWorld(t, b, cycle.engine)
				cycle.setup(w)
				checker := &modeCheckingFS{w: w}
				w.wrap = func(inner lease.FS) lease.FS {
					checker.FS = inner
					return checker
				}
				if err := cycle.run(w); err != nil {
					t.Fatalf("%s lifecycle: %v", cycle.engine, err)
				}
				// Once more from nothing, so the engine makes its own
				// directories too.
				for _, root := range cycle.roots {
					removeAll(t, b, b.abs(root))
				}
				if err := cycle.run(w); err != nil {
					t.Fatalf("%s lifecycle from nothing: %v", cycle.engine, err)
				}
				if checker.files < 3 || checker.dirs < 1 {
					t.Errorf("%s: only %d files and %d directories created: the lifecycle did not run",
						cycle.engine, checker.files, checker.dirs)
				}
				for rel, n := range snapshot(t, b) {
					if underAny(rel, cycle.roots) {
						checkMode(t, rel, n, b.selfUID)
					}
				}
			})
		}
	}
}

// removeAll removes the tree at name without following symlinks.
func removeAll(t *testing.T, b *backend, name string) {
	info, err := b.admin.Lstat(name)
	must(t, err)
	if info.IsDir() {
		entries, err := b.admin.ReadDir(name)
		must(t, err)
		for _, entry := range entries {
			removeAll(t, b, path.Join(name, entry.Name))
		}
	}
	must(t, b.admin.Remove(name))
}

func checkMode(t *testing.T, name string, n node, uid int) {
	t.Helper()
	switch {
	case n.Type == "file" && n.Perm != 0o600, n.Type == "dir" && n.Perm != 0o700:
		t.Errorf("%s has mode %v", name, n.Perm)
	case n.Type != "file" && n.Type != "dir":
		t.Errorf("%s is a %s", name, n.Type)
	case int(n.UID) != uid:
		t.Errorf("%s is owned by uid %d", name, n.UID)
	}
}

// modeCheckingFS checks the mode of everything the engine creates, right
// after it is created.
type modeCheckingFS struct {
	lease.FS
	w           *world
	files, dirs int
}

func (m *modeCheckingFS) created(name string) {
	info, err := m.FS.Lstat(name)
	must(m.w.t, err)
	n := node{Type: typeName(info.Mode), Perm: info.Perm(), UID: info.UID}
	checkMode(m.w.t, name, n, m.w.b.selfUID)
	if n.Type == "dir" {
		m.dirs++
	} else {
		m.files++
	}
}

func (m *modeCheckingFS) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	file, err := m.FS.OpenFile(name, flag, perm)
	if err == nil && flag&lease.O_CREATE != 0 {
		m.created(name)
	}
	return file, err
}

func (m *modeCheckingFS) Mkdir(name string, perm fs.FileMode) error {
	err := m.FS.Mkdir(name, perm)
	if err == nil {
		m.created(name)
	}
	return err
}

func (m *modeCheckingFS) MkdirTemp(dir, pattern string) (string, error) {
	name, err := m.FS.MkdirTemp(dir, pattern)
	if err == nil {
		m.created(name)
	}
	return name, err
}

func underAny(rel string, roots []string) bool {
	for _, root := range roots {
		root = relative(root)
		if rel == root || strings.HasPrefix(rel, root+"/") {
			return true
		}
	}
	return false
}

// recordingFS notes every rename and remove an engine makes, and can plant
// a symlink at the path of the planted-th one just before it runs.
type recordingFS struct {
	lease.FS
	w       *world
	ops     []string
	planted int
}

func (r *recordingFS) before(op, name, to string) {
	r.ops = append(r.ops, strings.TrimSpace(op+" "+name+" "+to))
	if len(r.ops) != r.planted {
		return
	}
	b := r.w.b
	target := b.abs("$OUT/secret")
	if info, err := b.admin.Lstat(name); err == nil {
		if info.IsDir() {
			target = b.abs("$OUT/dir")
		}
		must(r.w.t, b.admin.Rename(name, name+".planted-original"))
	}
	must(r.w.t, b.admin.Symlink(target, name))
}

func (r *recordingFS) Rename(oldpath, newpath string) error {
	r.before("rename", oldpath, path.Base(newpath))
	return r.FS.Rename(oldpath, newpath)
}

func (r *recordingFS) RenameNoReplace(oldpath, newpath string) error {
	r.before("rename", oldpath, path.Base(newpath))
	return r.FS.RenameNoReplace(oldpath, newpath)
}

func (r *recordingFS) Remove(name string) error {
	r.before("remove", name, "")
	return r.FS.Remove(name)
}

// OpenFile returns a recordingFile, so that removals through directory
// handles (RemoveAt) are recorded and planted like path removals.
func (r *recordingFS) OpenFile(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	file, err := r.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &recordingFile{File: file, r: r}, nil
}

// recordingFile records RemoveAt as "remove" of the joined path, and wraps
// the handles OpenAt returns.
type recordingFile struct {
	lease.File
	r *recordingFS
}

func (f *recordingFile) RemoveAt(name string, dir bool) error {
	f.r.before("remove", path.Join(f.Name(), name), "")
	return f.File.RemoveAt(name, dir)
}

func (f *recordingFile) OpenAt(name string, flag lease.OpenFlag, perm fs.FileMode) (lease.File, error) {
	file, err := f.File.OpenAt(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &recordingFile{File: file, r: f.r}, nil
}

// TestPlantedSymlinksAreNeverFollowed runs each engine's lifecycle once to
// list every path it renames or removes, then once more per path with a
// symlink to the outside tree planted there just before the engine acts on
// it (the original moved aside). Whatever the engine then decides, the
// outside tree must be exactly as it was: nothing follows a symlink on a
// path it deletes or renames.
func TestPlantedSymlinksAreNeverFollowed(t *testing.T) {
	for _, cycle := range lifecycles {
		t.Run(cycle.engine, func(t *testing.T) {
			recorded := runRecorded(t, simBackend(), cycle, 0)
			if len(recorded) < 5 {
				t.Fatalf("%s: only %d renames and removes recorded", cycle.engine, len(recorded))
			}
			kinds := map[string]bool{}
			for index := 1; index <= len(recorded); index++ {
				runRecorded(t, simBackend(), cycle, index)
				// The real OS gets one planting per kind of path (IDs
				// and temp names blanked), to keep the run short.
				kind := opKind(recorded[index-1])
				if !kinds[kind] {
					kinds[kind] = true
					runRecorded(t, realBackend(t), cycle, index)
				}
			}
			t.Logf("%s: %d renames and removes planted in simfs, %d kinds of them on the real OS", cycle.engine, len(recorded), len(kinds))
		})
	}
}

var idPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9]{3,}`)

// opKind blanks the IDs and numbers of a recorded operation.
func opKind(op string) string {
	fields := strings.Fields(op)
	return idPattern.ReplaceAllString(fields[0]+" "+path.Base(fields[1])+" "+strings.Join(fields[2:], " "), "#")
}

// runRecorded runs cycle on b with a symlink planted at the planted-th
// rename or remove (0: none) and checks the outside tree; it returns the
// operations seen.
func runRecorded(t *testing.T, b *backend, cycle lifecycle, planted int) []string {
	t.Helper()
	w := lifecycleWorld(t, b, cycle.engine)
	cycle.setup(w)
	recorder := &recordingFS{w: w, planted: planted}
	w.wrap = func(inner lease.FS) lease.FS {
		recorder.FS = inner
		return recorder
	}
	outsideBefore := outsideTree(t, b)
	func() {
		defer func() {
			if recovered := recover(); recovered != nil {
				t.Errorf("%s on %s, symlink planted at op %d: panic: %v", cycle.engine, b.name, planted, recovered)
			}
		}()
		if err := cycle.run(w); err != nil && planted == 0 {
			t.Errorf("%s lifecycle on %s: %v", cycle.engine, b.name, err)
		}
	}()
	outsideAfter := outsideTree(t, b)
	if planted > 0 && planted <= len(recorder.ops) {
		for _, problem := range diffTrees(outsideBefore, outsideAfter, treeRules{}) {
			t.Errorf("%s on %s, symlink planted at %q: outside tree %s", cycle.engine, b.name, recorder.ops[planted-1], problem)
		}
	}
	return recorder.ops
}

// outsideTree is the snapshot of the outside tree only.
func outsideTree(t *testing.T, b *backend) map[string]node {
	tree := map[string]node{}
	for rel, n := range snapshot(t, b) {
		if rel == "outside" || strings.HasPrefix(rel, "outside/") {
			tree[rel] = n
		}
	}
	return tree
}

// simBackendUmaskNone is simBackend with the process umask disabled.
func simBackendUmaskNone() *backend {
	return simBackendWith(simfs.Options{Dev: 77, UmaskNone: true})
}
