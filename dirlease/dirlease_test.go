package dirlease

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
)

const (
	ownerPID = 1000
	childPID = 3000
	startMs  = 1_800_000_000_000
	windowMs = 60_000
)

// ctx is the tests' context: never cancelled unless a test says so.
var ctx = context.Background()

type world struct {
	t         *testing.T
	home      string
	work      string
	fs        lease.FS
	inspector *leasetest.Inspector
	clock     *leasetest.Clock
	uid       int
	prefix    uint32
	// rebootedSelf, when set, is the recoverer's identity (another boot).
	rebootedSelf *lease.ProcessIdentity
}

func newWorld(t *testing.T) *world {
	t.Helper()
	uid := os.Getuid()
	return &world{
		t: t, home: t.TempDir(), work: t.TempDir(), fs: osenv.NewFS(), uid: uid,
		inspector: leasetest.NewInspector(leasetest.IdentityOf(ownerPID, uid, "500")),
		clock:     leasetest.NewClockAt(time.UnixMilli(startMs)),
	}
}

func (w *world) controller(pid int, start string) Config {
	w.prefix++
	return Config{
		StateHome: w.home, FS: w.fs, Clock: w.clock, BootClock: w.clock,
		Inspector: w.inspector.As(leasetest.IdentityOf(pid, w.uid, start)),
		IDs:       leasetest.NewIDsWithPrefix(w.prefix),
	}
}

func (w *world) root() string {
	return filepath.Join(w.home, "recovery", "beeper-message-like-me-directory-leases")
}

// dir makes a private directory under work with one file and one nested
// directory inside, and returns its path.
func (w *world) dir(name string) string {
	w.t.Helper()
	p := filepath.Join(w.work, name)
	if err := os.MkdirAll(filepath.Join(p, "nested"), 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "nested", "data.bin"), []byte("payload"), 0o600); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// raw creates a raw-working lease owned by the default owner.
func (w *world) raw(name string) *Lease {
	w.t.Helper()
	l, err := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{Role: RoleRawWorking, Path: w.dir(name), RecoverAfterMs: startMs + windowMs})
	if err != nil {
		w.t.Fatalf("Create: %v", err)
	}
	return l
}

// recoverer recovers as another process (PID 2000) after the owner died.
func (w *world) recoverer() Config { return w.controller(2000, "600") }

// snapshotTree lists every path under root (home and work), for
// before/after comparisons.
func snapshotTree(t *testing.T, roots ...string) string {
	t.Helper()
	var out []string
	for _, root := range roots {
		err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			out = append(out, p+" "+info.Mode().String())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func TestCreateRefusesInvalidRequests(t *testing.T) {
	w := newWorld(t)
	target := w.dir("raw")
	sibling := filepath.Join(w.work, "out")
	cases := []struct {
		name    string
		request CreateRequest
	}{
		{"relative path", CreateRequest{RoleRawWorking, "work/raw", "", startMs}},
		{"unclean path", CreateRequest{RoleRawWorking, target + "/../raw", "", startMs}},
		{"newline in path", CreateRequest{RoleRawWorking, target + "\n", "", startMs}},
		{"unknown role", CreateRequest{"other", target, "", startMs}},
		{"raw with output", CreateRequest{RoleRawWorking, target, sibling, startMs}},
		{"bundle without output", CreateRequest{RoleBundleStage, target, "", startMs}},
		{"output not a sibling", CreateRequest{RoleBundleStage, target, "/elsewhere/out", startMs}},
		{"recover before now", CreateRequest{RoleRawWorking, target, "", startMs - 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Create(ctx, w.controller(ownerPID, "500"), tc.request)
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("want ErrInvalidRequest, got %v", err)
			}
		})
	}
	if exists(t, w.root()) {
		t.Fatal("a refused request created the lease root")
	}
}

func TestCreateRefusesDirectoriesThatAreNotOwnedPhysicalOnes(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world) (string, Config)
	}{
		{"target mode 0755", func(w *world) (string, Config) {
			p := w.dir("raw")
			must(t, os.Chmod(p, 0o755))
			return p, w.controller(ownerPID, "500")
		}},
		{"parent world-writable", func(w *world) (string, Config) {
			p := w.dir("raw")
			must(t, os.Chmod(w.work, 0o777))
			return p, w.controller(ownerPID, "500")
		}},
		{"target is a symlink", func(w *world) (string, Config) {
			real := w.dir("real")
			link := filepath.Join(w.work, "raw")
			must(t, os.Symlink(real, link))
			return link, w.controller(ownerPID, "500")
		}},
		{"a symlink on the path", func(w *world) (string, Config) {
			w.dir("real/raw")
			link := filepath.Join(w.work, "via")
			must(t, os.Symlink(filepath.Join(w.work, "real"), link))
			return filepath.Join(link, "raw"), w.controller(ownerPID, "500")
		}},
		{"missing target", func(w *world) (string, Config) {
			return filepath.Join(w.work, "missing"), w.controller(ownerPID, "500")
		}},
		{"owned by another uid", func(w *world) (string, Config) {
			p := w.dir("raw")
			config := w.controller(ownerPID, "500")
			other := leasetest.IdentityOf(ownerPID, w.uid+1, "500")
			config.Inspector = w.inspector.As(other)
			return p, config
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			p, config := tc.setup(w)
			_, err := Create(ctx, config, CreateRequest{Role: RoleRawWorking, Path: p, RecoverAfterMs: startMs})
			if !errors.Is(err, ErrNotOwnedDirectory) {
				t.Fatalf("want ErrNotOwnedDirectory, got %v", err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCreateWritesCanonicalClaimAndReleaseRemovesIt(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	content, err := os.ReadFile(l.ClaimPath())
	must(t, err)
	claim, err := Parse(content, filepath.Base(l.ClaimPath()), l.ClaimPath())
	must(t, err)
	info, err := w.fs.Lstat(claim.Path)
	must(t, err)
	identity, _ := info.Identity()
	if claim.SchemaVersion != SchemaVersion || claim.Phase != PhasePreparing || claim.DirectoryIdentity != IdentityOf(identity) ||
		claim.CreatedAtMs != startMs || claim.RecoverAfterMs != startMs+windowMs || claim.ChildOwner != nil {
		t.Fatalf("unexpected claim %+v", claim)
	}
	must(t, l.Release(ctx))
	must(t, l.Release(ctx))
	entries, err := os.ReadDir(w.root())
	if err != nil || len(entries) != 0 {
		t.Fatalf("root after release: %v %v", entries, err)
	}
	if !exists(t, claim.Path) {
		t.Fatal("Release must not touch the directory")
	}
}

func TestEveryPhaseTransitionAllowedAndRefused(t *testing.T) {
	phases := []Phase{PhasePreparing, PhaseLaunching, PhaseRunning, PhaseSettled}
	paths := map[Phase][]Phase{ // how to reach each phase from preparing
		PhasePreparing: nil,
		PhaseLaunching: {PhaseLaunching},
		PhaseRunning:   {PhaseLaunching, PhaseRunning},
		PhaseSettled:   {PhaseLaunching, PhaseSettled},
	}
	allowed := map[[2]Phase]bool{
		{PhasePreparing, PhaseLaunching}: true, {PhaseSettled, PhaseLaunching}: true,
		{PhaseLaunching, PhaseRunning}: true,
		{PhaseLaunching, PhaseSettled}: true, {PhaseRunning, PhaseSettled}: true,
	}
	childFor := func(phase Phase) int {
		if phase == PhaseRunning {
			return childPID
		}
		return 0
	}
	for _, from := range phases {
		for _, to := range phases {
			t.Run(string(from)+"->"+string(to), func(t *testing.T) {
				w := newWorld(t)
				w.inspector.SetLive(leasetest.IdentityOf(childPID, w.uid, "900"))
				l := w.raw("raw")
				for _, step := range paths[from] {
					must(t, l.Update(ctx, step, childFor(step)))
				}
				before := l.ContentSHA256()
				err := l.Update(ctx, to, childFor(to))
				if allowed[[2]Phase{from, to}] != (err == nil) {
					t.Fatalf("Update %s->%s: err %v, allowed %v", from, to, err, allowed[[2]Phase{from, to}])
				}
				if err != nil {
					if !errors.Is(err, ErrInvalidTransition) || l.ContentSHA256() != before {
						t.Fatalf("refusal must be ErrInvalidTransition and change nothing: %v", err)
					}
					return
				}
				content, readErr := os.ReadFile(l.ClaimPath())
				must(t, readErr)
				claim, parseErr := Parse(content, filepath.Base(l.ClaimPath()), l.ClaimPath())
				must(t, parseErr)
				if claim.Phase != to || (claim.ChildOwner != nil) != (to == PhaseRunning) {
					t.Fatalf("on disk %+v", claim)
				}
			})
		}
	}
	t.Run("child identity rules", func(t *testing.T) {
		w := newWorld(t)
		l := w.raw("raw")
		if err := l.Update(ctx, PhaseLaunching, childPID); !errors.Is(err, ErrChildIdentity) {
			t.Fatalf("child on launching: %v", err)
		}
		must(t, l.Update(ctx, PhaseLaunching, 0))
		if err := l.Update(ctx, PhaseRunning, 0); !errors.Is(err, ErrChildIdentity) {
			t.Fatalf("running without child: %v", err)
		}
		if err := l.Update(ctx, PhaseRunning, childPID); !errors.Is(err, ErrChildIdentity) {
			t.Fatalf("running with an absent child: %v", err)
		}
	})
	t.Run("bundle-stage and released leases cannot change phase", func(t *testing.T) {
		w := newWorld(t)
		bundle, err := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{RoleBundleStage, w.dir("stage"), filepath.Join(w.work, "out"), startMs})
		must(t, err)
		if err := bundle.Update(ctx, PhaseLaunching, 0); !errors.Is(err, ErrInvalidTransition) {
			t.Fatalf("bundle update: %v", err)
		}
		l := w.raw("raw")
		must(t, l.Release(ctx))
		if err := l.Update(ctx, PhaseLaunching, 0); !errors.Is(err, ErrInvalidTransition) {
			t.Fatalf("released update: %v", err)
		}
	})
	t.Run("stale handle loses the compare-and-swap", func(t *testing.T) {
		w := newWorld(t)
		l := w.raw("raw")
		stale := *l
		must(t, l.Update(ctx, PhaseLaunching, 0))
		if err := stale.Update(ctx, PhaseLaunching, 0); !errors.Is(err, ErrChanged) {
			t.Fatalf("stale update: %v", err)
		}
		if err := stale.Release(ctx); !errors.Is(err, ErrChanged) {
			t.Fatalf("stale release: %v", err)
		}
	})
}

func TestRecoverCountsEachCase(t *testing.T) {
	type outcome struct {
		report     Report
		dirRemains bool
		claimGone  bool
	}
	cases := []struct {
		name  string
		setup func(w *world) (dir string)
		want  outcome
	}{
		{"preparing, owner dead", func(w *world) string {
			l := w.raw("raw")
			w.inspector.Kill(ownerPID)
			return l.Claim().Path
		}, outcome{Report{Recovered: 1}, false, true}},
		{"owner live", func(w *world) string {
			return w.raw("raw").Claim().Path
		}, outcome{Report{Active: 1}, true, false}},
		{"owner uninspectable", func(w *world) string {
			l := w.raw("raw")
			w.inspector.Set(ownerPID, leasetest.Unknown("EACCES (scripted)"))
			return l.Claim().Path
		}, outcome{Report{Indeterminate: 1}, true, false}},
		{"owner PID reused", func(w *world) string {
			l := w.raw("raw")
			w.inspector.SetLive(leasetest.IdentityOf(ownerPID, w.uid, "999"))
			return l.Claim().Path
		}, outcome{Report{Recovered: 1}, false, true}},
		{"running, owner dead, child live", func(w *world) string {
			l := w.running()
			w.inspector.Kill(ownerPID)
			return l.Claim().Path
		}, outcome{Report{Active: 1}, true, false}},
		{"running, owner dead, child uninspectable", func(w *world) string {
			l := w.running()
			w.inspector.Kill(ownerPID)
			w.inspector.Set(childPID, leasetest.Unknown("EACCES (scripted)"))
			return l.Claim().Path
		}, outcome{Report{Indeterminate: 1}, true, false}},
		{"running, owner uninspectable, child live", func(w *world) string {
			l := w.running()
			w.inspector.Set(ownerPID, leasetest.Unknown("EACCES (scripted)"))
			return l.Claim().Path
		}, outcome{Report{Active: 1}, true, false}},
		{"running, owner uninspectable, child dead", func(w *world) string {
			l := w.running()
			w.inspector.Set(ownerPID, leasetest.Unknown("EACCES (scripted)"))
			w.inspector.Kill(childPID)
			return l.Claim().Path
		}, outcome{Report{Indeterminate: 1}, true, false}},
		{"running, owner and child uninspectable", func(w *world) string {
			l := w.running()
			w.inspector.Set(ownerPID, leasetest.Unknown("EACCES (scripted)"))
			w.inspector.Set(childPID, leasetest.Unknown("EACCES (scripted)"))
			return l.Claim().Path
		}, outcome{Report{Indeterminate: 1}, true, false}},
		{"running, owner and child dead", func(w *world) string {
			l := w.running()
			w.inspector.Kill(ownerPID)
			w.inspector.Kill(childPID)
			return l.Claim().Path
		}, outcome{Report{Recovered: 1}, false, true}},
		{"launching, owner dead, window open", func(w *world) string {
			l := w.raw("raw")
			must(w.t, l.Update(ctx, PhaseLaunching, 0))
			w.inspector.Kill(ownerPID)
			w.clock.Advance(windowMs / 2 * time.Millisecond)
			return l.Claim().Path
		}, outcome{Report{Indeterminate: 1}, true, false}},
		{"launching, owner dead, exactly the window elapsed", func(w *world) string {
			// Millisecond readings are truncated: only strictly more than
			// the window proves that it passed.
			l := w.raw("raw")
			must(w.t, l.Update(ctx, PhaseLaunching, 0))
			w.inspector.Kill(ownerPID)
			w.clock.Advance(windowMs * time.Millisecond)
			return l.Claim().Path
		}, outcome{Report{Indeterminate: 1}, true, false}},
		{"launching, owner dead, window passed", func(w *world) string {
			l := w.raw("raw")
			must(w.t, l.Update(ctx, PhaseLaunching, 0))
			w.inspector.Kill(ownerPID)
			w.clock.Advance((windowMs + 1) * time.Millisecond)
			return l.Claim().Path
		}, outcome{Report{Recovered: 1}, false, true}},
		{"settled, owner dead", func(w *world) string {
			l := w.raw("raw")
			must(w.t, l.Update(ctx, PhaseLaunching, 0))
			must(w.t, l.Update(ctx, PhaseSettled, 0))
			w.inspector.Kill(ownerPID)
			return l.Claim().Path
		}, outcome{Report{Recovered: 1}, false, true}},
		{"bundle published to its output root", func(w *world) string {
			stage := w.dir("stage")
			output := filepath.Join(w.work, "out")
			_, err := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{RoleBundleStage, stage, output, startMs})
			must(w.t, err)
			must(w.t, os.Rename(stage, output))
			w.inspector.Kill(ownerPID)
			return output
		}, outcome{Report{Published: 1}, true, true}},
		{"bundle never published, directory gone", func(w *world) string {
			stage := w.dir("stage")
			_, err := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{RoleBundleStage, stage, filepath.Join(w.work, "out"), startMs})
			must(w.t, err)
			must(w.t, os.RemoveAll(stage))
			w.inspector.Kill(ownerPID)
			return stage
		}, outcome{Report{}, false, true}},
		{"interrupted quarantine completed", func(w *world) string {
			l := w.raw("raw")
			w.inspector.Kill(ownerPID)
			quarantine := filepath.Join(w.work, statecas.QuarantineName(l.Claim().DirectoryIdentity.FileIdentity()))
			must(w.t, os.Rename(l.Claim().Path, quarantine))
			return quarantine
		}, outcome{Report{Recovered: 1}, false, true}},
		{"owner rebooted away, schema-3 boot digest differs", func(w *world) string {
			l := w.raw("raw")
			self := leasetest.IdentityOf(2000, w.uid, "600")
			self.BootID = "a new boot"
			w.inspector.SetLive(leasetest.IdentityOf(ownerPID, w.uid, "500"))
			w.rebootedSelf = &self
			return l.Claim().Path
		}, outcome{Report{Recovered: 1}, false, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			dir := tc.setup(w)
			claims, err := os.ReadDir(w.root())
			must(t, err)
			if len(claims) != 1 {
				t.Fatalf("setup made %d claims", len(claims))
			}
			config := w.recoverer()
			if w.rebootedSelf != nil {
				config.Inspector = w.inspector.As(*w.rebootedSelf)
			}
			report, err := Recover(ctx, config)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if report != tc.want.report {
				t.Fatalf("report %+v, want %+v", report, tc.want.report)
			}
			if exists(t, dir) != tc.want.dirRemains {
				t.Fatalf("directory %s exists=%v, want %v", dir, !tc.want.dirRemains, tc.want.dirRemains)
			}
			if exists(t, filepath.Join(w.root(), claims[0].Name())) == tc.want.claimGone {
				t.Fatalf("claim gone=%v, want %v", !tc.want.claimGone, tc.want.claimGone)
			}
			if tc.want.claimGone {
				left, err := os.ReadDir(w.root())
				if err != nil || len(left) != 0 {
					t.Fatalf("root should be empty (no claims, temps): %v %v", left, err)
				}
			}
		})
	}
}

// running creates a raw lease in phase running with a live child.
func (w *world) running() *Lease {
	w.t.Helper()
	w.inspector.SetLive(leasetest.IdentityOf(childPID, w.uid, "900"))
	l := w.raw("raw")
	must(w.t, l.Update(ctx, PhaseLaunching, 0))
	must(w.t, l.Update(ctx, PhaseRunning, childPID))
	return l
}
