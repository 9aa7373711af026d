package admission

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
)

// world is one real temporary state home shared by several controllers,
// each a scripted process on one scripted process table.
type world struct {
	t         *testing.T
	home      string
	fs        lease.FS
	inspector *leasetest.Inspector
	clock     *leasetest.Clock
	uid       int
	prefix    uint32
}

func newWorld(t *testing.T) *world {
	t.Helper()
	uid := os.Getuid()
	self := leasetest.IdentityOf(1000, uid, "500")
	return &world{
		t: t, home: t.TempDir(), fs: osenv.NewFS(), uid: uid,
		inspector: leasetest.NewInspector(self),
		clock:     leasetest.NewClockAt(time.Unix(1_800_000_000, 0)),
	}
}

// controller is a Config for a process with pid and start ticks, live on
// the shared table.
func (w *world) controller(pid int, start string) Config {
	w.prefix++
	return Config{
		StateHome: w.home, FS: w.fs, Clock: w.clock,
		Inspector: w.inspector.As(leasetest.IdentityOf(pid, w.uid, start)),
		IDs:       leasetest.NewIDsWithPrefix(w.prefix),
	}
}

func (w *world) file() string {
	return filepath.Join(w.home, "recovery", "beeper-message-like-me-export-admission", "active.json")
}

func (w *world) read() []byte {
	w.t.Helper()
	content, err := os.ReadFile(w.file())
	if err != nil {
		w.t.Fatalf("read admission: %v", err)
	}
	return content
}

// tree lists every path under home with its size, for before/after
// comparisons.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, strings.TrimPrefix(p, root)+" "+info.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func mustAcquire(t *testing.T, config Config) *Admission {
	t.Helper()
	admission, err := Acquire(ctx, config)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return admission
}

func TestAcquireWritesCanonicalSchema3AndReleaseLeavesNothing(t *testing.T) {
	w := newWorld(t)
	a := mustAcquire(t, w.controller(1000, "500"))
	content := w.read()
	claim, err := Parse(content, w.file())
	if err != nil {
		t.Fatalf("Parse of what Acquire wrote: %v", err)
	}
	if claim.SchemaVersion != 3 || claim.Phase != PhaseParentOwned || claim.HelperOwner != nil || claim.Revision == "" {
		t.Fatalf("unexpected record %+v", claim)
	}
	if claim.Owner != statecas.OwnerOf(leasetest.IdentityOf(1000, w.uid, "500")) {
		t.Fatalf("owner %+v is not the acquirer", claim.Owner)
	}
	if statefile.SHA256Hex(content) != a.ContentSHA256() {
		t.Fatal("handle SHA is not the SHA of the file")
	}
	info, err := os.Lstat(w.file())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("admission file mode: %v %v", info.Mode(), err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatalf("second Release must be a no-op: %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(w.file()))
	if err != nil || len(entries) != 0 {
		t.Fatalf("after release the root must be empty (no claims, temps): %v %v", entries, err)
	}
}

func TestSecondAcquireRefusedWhileOwnerLive(t *testing.T) {
	w := newWorld(t)
	mustAcquire(t, w.controller(1000, "500"))
	before := w.read()
	_, err := Acquire(ctx, w.controller(2000, "600"))
	if !errors.Is(err, ErrActive) || !strings.Contains(err.Error(), "another export is active") {
		t.Fatalf("want ErrActive, got %v", err)
	}
	if string(w.read()) != string(before) {
		t.Fatal("a refused acquire changed the record")
	}
}

type operation struct {
	name string
	run  func(*Admission) error
}

const helperPID = 3000

// ctx is the tests' context: never cancelled unless a test says so.
var ctx = context.Background()

var operations = []operation{
	{"begin", func(a *Admission) error { return a.BeginHelperLaunch(ctx) }},
	{"bind", func(a *Admission) error { return a.BindHelper(ctx, helperPID) }},
	{"settle", func(a *Admission) error { return a.Settle(ctx) }},
	{"cleanup-unsafe", func(a *Admission) error { return a.MarkCleanupUnsafe(ctx) }},
	{"release", func(a *Admission) error { return a.Release(ctx) }},
}

// states drives a fresh admission into each reachable state.
var states = []struct {
	name  string
	steps []string
}{
	{"parent-owned", nil},
	{"helper-launching", []string{"begin"}},
	{"helper-active", []string{"begin", "bind"}},
	{"cleanup-unsafe-no-helper", []string{"begin", "cleanup-unsafe"}},
	{"cleanup-unsafe-with-helper", []string{"begin", "bind", "cleanup-unsafe"}},
	{"settled-after-helper", []string{"begin", "bind", "settle"}},
	{"released", []string{"release"}},
}

// allowed is the original implementation's transition table, written out by hand.
var allowed = map[string]map[string]Phase{
	"parent-owned":               {"begin": PhaseHelperLaunching, "release": ""},
	"helper-launching":           {"bind": PhaseHelperActive, "settle": PhaseParentOwned, "cleanup-unsafe": PhaseCleanupUnsafe},
	"helper-active":              {"settle": PhaseParentOwned, "cleanup-unsafe": PhaseCleanupUnsafe},
	"cleanup-unsafe-no-helper":   {"cleanup-unsafe": PhaseCleanupUnsafe},
	"cleanup-unsafe-with-helper": {},
	"settled-after-helper":       {"begin": PhaseHelperLaunching, "release": ""},
	"released":                   {"release": ""},
}

func run(t *testing.T, a *Admission, name string) error {
	t.Helper()
	for _, op := range operations {
		if op.name == name {
			return op.run(a)
		}
	}
	t.Fatalf("no operation %q", name)
	return nil
}

func TestEveryTransitionAllowedAndRefused(t *testing.T) {
	for _, state := range states {
		for _, op := range operations {
			t.Run(state.name+"/"+op.name, func(t *testing.T) {
				w := newWorld(t)
				config := w.controller(1000, "500")
				w.inspector.SetLive(leasetest.IdentityOf(helperPID, w.uid, "900"))
				a := mustAcquire(t, config)
				for _, step := range state.steps {
					if err := run(t, a, step); err != nil {
						t.Fatalf("setup step %s: %v", step, err)
					}
				}
				beforeSHA, beforeRevision := a.ContentSHA256(), a.Claim().Revision
				next, ok := allowed[state.name][op.name]
				err := op.run(a)
				if !ok {
					want := error(ErrInvalidTransition)
					if state.name == "released" {
						want = ErrReleased
					}
					if !errors.Is(err, want) {
						t.Fatalf("want %v, got %v", want, err)
					}
					if a.ContentSHA256() != beforeSHA {
						t.Fatal("a refused transition changed the handle")
					}
					if !a.Released() && statefile.SHA256Hex(w.read()) != beforeSHA {
						t.Fatal("a refused transition changed the file")
					}
					return
				}
				if err != nil {
					t.Fatalf("allowed transition failed: %v", err)
				}
				if op.name == "release" {
					if _, statErr := os.Lstat(w.file()); !errors.Is(statErr, os.ErrNotExist) {
						t.Fatalf("released admission file still present: %v", statErr)
					}
					return
				}
				onDisk, err := Parse(w.read(), w.file())
				if err != nil || onDisk.Phase != next || onDisk.Revision == beforeRevision {
					t.Fatalf("on disk %+v (err %v), want phase %s with a rotated revision", onDisk, err, next)
				}
				keepsHelper := next == PhaseCleanupUnsafe && state.name == "helper-active"
				if (onDisk.HelperOwner != nil) != (next == PhaseHelperActive || keepsHelper) {
					t.Fatalf("helper owner %+v after %s from %s", onDisk.HelperOwner, op.name, state.name)
				}
			})
		}
	}
}

func TestBindHelperCapturesFullIdentityAndRefusesDeadPIDs(t *testing.T) {
	w := newWorld(t)
	a := mustAcquire(t, w.controller(1000, "500"))
	if err := a.BeginHelperLaunch(ctx); err != nil {
		t.Fatal(err)
	}
	helper := leasetest.IdentityOf(helperPID, w.uid, "901")
	w.inspector.Set(helper.PID, leasetest.Zombie(helper, 1))
	if err := a.BindHelper(ctx, helperPID); !errors.Is(err, ErrHelperIdentity) {
		t.Fatalf("zombie helper: want ErrHelperIdentity, got %v", err)
	}
	w.inspector.Kill(helperPID)
	if err := a.BindHelper(ctx, helperPID); !errors.Is(err, ErrHelperIdentity) {
		t.Fatalf("absent helper: want ErrHelperIdentity, got %v", err)
	}
	if err := a.BindHelper(ctx, 0); !errors.Is(err, ErrHelperIdentity) {
		t.Fatalf("PID 0: want ErrHelperIdentity, got %v", err)
	}
	w.inspector.SetLive(helper)
	if err := a.BindHelper(ctx, helperPID); err != nil {
		t.Fatal(err)
	}
	onDisk, err := Parse(w.read(), w.file())
	if err != nil || onDisk.HelperOwner == nil || *onDisk.HelperOwner != statecas.OwnerOf(helper) {
		t.Fatalf("helper owner on disk %+v, err %v", onDisk.HelperOwner, err)
	}
}

// TestABAStaleControllerLoses: a controller that read the admission before
// it was released and re-acquired (or cycled back to the same phase) must
// have its compare-and-swap refused, because the revision makes the bytes
// differ even when the phase is the same.
func TestABAStaleControllerLoses(t *testing.T) {
	t.Run("release-and-reacquire", func(t *testing.T) {
		w := newWorld(t)
		config := w.controller(1000, "500")
		a := mustAcquire(t, config)
		stale := *a
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		b := mustAcquire(t, config)
		if b.Claim().Phase != stale.Claim().Phase || b.ContentSHA256() == stale.ContentSHA256() {
			t.Fatal("re-acquired admission must have the same phase and different bytes")
		}
		if err := stale.BeginHelperLaunch(ctx); !errors.Is(err, ErrChanged) {
			t.Fatalf("stale lifecycle CAS: want ErrChanged, got %v", err)
		}
		if err := stale.Release(ctx); !errors.Is(err, ErrChanged) {
			t.Fatalf("stale release CAS: want ErrChanged, got %v", err)
		}
		if statefile.SHA256Hex(w.read()) != b.ContentSHA256() {
			t.Fatal("the stale controller changed the new admission")
		}
	})
	t.Run("phase-round-trip", func(t *testing.T) {
		w := newWorld(t)
		a := mustAcquire(t, w.controller(1000, "500"))
		stale := *a
		if err := a.BeginHelperLaunch(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		if err := stale.BeginHelperLaunch(ctx); !errors.Is(err, ErrChanged) {
			t.Fatalf("want ErrChanged, got %v", err)
		}
	})
	t.Run("reacquire-between-read-and-remove", func(t *testing.T) {
		// A dead owner's admission is read by X as recoverable. Before X's
		// compare-and-remove, live Y recovers it and acquires: X's CAS is
		// refused, and on its retry X sees Y live.
		w := newWorld(t)
		dead := w.controller(1000, "500")
		mustAcquire(t, dead)
		w.inspector.Kill(1000)
		y := w.controller(2000, "600")
		var yAdmission *Admission
		hooked := leasetest.NewHookFS(w.fs)
		hooked.Before(func(op leasetest.Op) error {
			if op.Name == "RenameNoReplace" && strings.HasSuffix(op.Paths[1], ".active.json.mutation") && yAdmission == nil {
				yAdmission = mustAcquire(t, y)
			}
			return nil
		})
		x := w.controller(3000, "700")
		x.FS = hooked
		_, err := Acquire(ctx, x)
		if yAdmission == nil {
			t.Fatal("the interleaving never ran")
		}
		if !errors.Is(err, ErrActive) {
			t.Fatalf("want ErrActive after the refused CAS, got %v", err)
		}
		if statefile.SHA256Hex(w.read()) != yAdmission.ContentSHA256() {
			t.Fatal("X removed or changed Y's admission")
		}
	})
}

func TestContentionIsBoundedAndOrphanedClaimsRecovered(t *testing.T) {
	w := newWorld(t)
	first := mustAcquire(t, w.controller(1000, "500"))
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	claimPath := statecas.ClaimPath(w.file())
	holder := leasetest.IdentityOf(4000, w.uid, "800")
	plant := func() {
		t.Helper()
		if err := os.WriteFile(claimPath, statecas.MutationClaimBytes("0000aaaa-0000-4000-8000-000000000001", w.file(), holder), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plant()
	w.inspector.SetLive(holder)
	_, err := Acquire(ctx, w.controller(2000, "600"))
	if !errors.Is(err, ErrContention) {
		t.Fatalf("live mutation claim: want ErrContention, got %v", err)
	}
	w.inspector.Set(4000, leasetest.Unknown("EACCES (scripted)"))
	_, err = Acquire(ctx, w.controller(2000, "600"))
	if !errors.Is(err, statecas.ErrMutationIndeterminate) || !errors.Is(err, ErrUnsafe) {
		t.Fatalf("uninspectable claim owner: want ErrUnsafe wrapping ErrMutationIndeterminate, got %v", err)
	}
	w.inspector.Kill(4000)
	if _, err := Acquire(ctx, w.controller(2000, "600")); err != nil {
		t.Fatalf("dead claim owner must be recovered: %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(w.file()))
	if err != nil || len(entries) != 1 || entries[0].Name() != FileName {
		t.Fatalf("want only active.json after recovery, got %v %v", entries, err)
	}
}

// owners used by the disposition table.
var (
	bootNow   = statecas.BootDigest(leasetest.BootID)
	bootOther = statecas.BootDigest("an earlier boot")
)

func ownerFor(id lease.ProcessIdentity, boot string) statecas.Owner {
	owner := statecas.OwnerOf(id)
	owner.BootID = boot
	return owner
}

func legacy(owner statecas.Owner) statecas.Owner {
	owner.Legacy = true
	owner.Hostname, owner.PIDNamespace = "", ""
	return owner
}

func TestDispositions(t *testing.T) {
	uid := os.Getuid()
	parent := leasetest.IdentityOf(1000, uid, "500")
	helper := leasetest.IdentityOf(3000, uid, "900")
	reused := leasetest.IdentityOf(1000, uid, "777")
	remote := leasetest.IdentityOf(1000, uid, "500")
	remote.Hostname = "host-b"
	otherNamespace := leasetest.IdentityOf(1000, uid, "500")
	otherNamespace.PIDNamespace = "4026532000"
	const id, revision = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	helperOwner := func(boot string) *statecas.Owner { o := ownerFor(helper, boot); return &o }
	legacyHelper := func(boot string) *statecas.Owner { o := legacy(ownerFor(helper, boot)); return &o }

	cases := []struct {
		name   string
		claim  Claim
		script func(*leasetest.Inspector)
		want   Disposition
	}{
		{"v3 owner live", Claim{3, id, ownerFor(parent, bootNow), nil, PhaseParentOwned, revision},
			func(i *leasetest.Inspector) { i.SetLive(parent) }, DispositionActive},
		{"v3 owner zombie leader with live threads", Claim{3, id, ownerFor(parent, bootNow), nil, PhaseParentOwned, revision},
			func(i *leasetest.Inspector) { i.Set(parent.PID, leasetest.Zombie(parent, 3)) }, DispositionActive},
		{"v3 owner uninspectable", Claim{3, id, ownerFor(parent, bootNow), nil, PhaseParentOwned, revision},
			func(i *leasetest.Inspector) { i.Set(1000, leasetest.Unknown("EACCES (scripted)")) }, DispositionIndeterminate},
		{"v3 owner on a remote host", Claim{3, id, statecas.OwnerOf(remote), nil, PhaseParentOwned, revision},
			func(i *leasetest.Inspector) { i.Kill(1000) }, DispositionIndeterminate},
		{"v3 owner in another PID namespace", Claim{3, id, statecas.OwnerOf(otherNamespace), nil, PhaseParentOwned, revision},
			func(i *leasetest.Inspector) { i.Kill(1000) }, DispositionIndeterminate},
		{"v3 parent-owned, owner absent", Claim{3, id, ownerFor(parent, bootNow), nil, PhaseParentOwned, revision},
			func(i *leasetest.Inspector) { i.Kill(1000) }, DispositionRecoverable},
		{"v3 parent-owned, owner single-thread zombie", Claim{3, id, ownerFor(parent, bootNow), nil, PhaseParentOwned, revision},
			func(i *leasetest.Inspector) { i.Set(parent.PID, leasetest.Zombie(parent, 1)) }, DispositionRecoverable},
		{"v3 parent-owned, owner PID reused", Claim{3, id, ownerFor(parent, bootNow), nil, PhaseParentOwned, revision},
			func(i *leasetest.Inspector) { i.SetLive(reused) }, DispositionRecoverable},
		{"v3 cleanup-unsafe, owner dead, same boot", Claim{3, id, ownerFor(parent, bootNow), helperOwner(bootNow), PhaseCleanupUnsafe, revision},
			func(i *leasetest.Inspector) { i.Kill(1000); i.Kill(3000) }, DispositionIndeterminate},
		{"v3 cleanup-unsafe, rebooted", Claim{3, id, ownerFor(parent, bootOther), helperOwner(bootOther), PhaseCleanupUnsafe, revision},
			func(i *leasetest.Inspector) { i.SetLive(parent) }, DispositionRecoverable},
		{"v3 helper-active, owner dead, helper live", Claim{3, id, ownerFor(parent, bootNow), helperOwner(bootNow), PhaseHelperActive, revision},
			func(i *leasetest.Inspector) { i.Kill(1000); i.SetLive(helper) }, DispositionActive},
		{"v3 helper-active, owner dead, helper dead", Claim{3, id, ownerFor(parent, bootNow), helperOwner(bootNow), PhaseHelperActive, revision},
			func(i *leasetest.Inspector) { i.Kill(1000); i.Kill(3000) }, DispositionIndeterminate},
		{"v3 helper-active, rebooted", Claim{3, id, ownerFor(parent, bootOther), helperOwner(bootOther), PhaseHelperActive, revision},
			func(i *leasetest.Inspector) { i.SetLive(helper) }, DispositionRecoverable},
		{"v3 helper-launching, owner dead, same boot", Claim{3, id, ownerFor(parent, bootNow), nil, PhaseHelperLaunching, revision},
			func(i *leasetest.Inspector) { i.Kill(1000) }, DispositionIndeterminate},
		{"v3 helper-launching, rebooted", Claim{3, id, ownerFor(parent, bootOther), nil, PhaseHelperLaunching, revision},
			func(i *leasetest.Inspector) {}, DispositionRecoverable},
		{"v3 helper boot differs from owner boot", Claim{3, id, ownerFor(parent, bootOther), helperOwner(bootNow), PhaseHelperActive, revision},
			func(i *leasetest.Inspector) { i.SetLive(helper) }, DispositionIndeterminate},
		{"v1 owner dead, same boot", Claim{1, id, legacy(ownerFor(parent, bootNow)), nil, "", ""},
			func(i *leasetest.Inspector) { i.Kill(1000) }, DispositionIndeterminate},
		{"v1 rebooted", Claim{1, id, legacy(ownerFor(parent, bootOther)), nil, "", ""},
			func(i *leasetest.Inspector) {}, DispositionRecoverable},
		{"v1 owner live with a matching digest", Claim{1, id, legacy(ownerFor(parent, bootNow)), nil, "", ""},
			func(i *leasetest.Inspector) { i.SetLive(parent) }, DispositionActive},
		{"v1 live PID, seed digest unverifiable", Claim{1, id, legacy(ownerFor(parent, bootNow)), nil, "", ""},
			func(i *leasetest.Inspector) { i.SetLive(reused) }, DispositionIndeterminate},
		{"v2 parent-owned, owner dead", Claim{2, id, legacy(ownerFor(parent, bootNow)), nil, PhaseParentOwned, ""},
			func(i *leasetest.Inspector) { i.Kill(1000) }, DispositionRecoverable},
		{"v2 helper-active, owner dead, helper live", Claim{2, id, legacy(ownerFor(parent, bootNow)), legacyHelper(bootNow), PhaseHelperActive, ""},
			func(i *leasetest.Inspector) { i.Kill(1000); i.SetLive(helper) }, DispositionActive},
		{"v2+revision helper-launching, owner dead, same boot", Claim{2, id, legacy(ownerFor(parent, bootNow)), nil, PhaseHelperLaunching, revision},
			func(i *leasetest.Inspector) { i.Kill(1000) }, DispositionIndeterminate},
		{"v2+revision cleanup-unsafe, rebooted", Claim{2, id, legacy(ownerFor(parent, bootOther)), nil, PhaseCleanupUnsafe, revision},
			func(i *leasetest.Inspector) {}, DispositionRecoverable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			acquirer := w.controller(2000, "600")
			if _, err := statecas.EnsurePrivateDir(acquirer.Env(uint32(w.uid)), uint32(w.uid), w.home, RootDir...); err != nil {
				t.Fatal(err)
			}
			content := tc.claim.Bytes()
			if err := os.WriteFile(w.file(), content, 0o600); err != nil {
				t.Fatal(err)
			}
			parsed, err := Parse(content, w.file())
			if err != nil || string(parsed.Bytes()) != string(content) {
				t.Fatalf("fixture does not round-trip: %v", err)
			}
			tc.script(w.inspector)
			_, disposition, err := Inspect(ctx, acquirer)
			if err != nil || disposition != tc.want {
				t.Fatalf("Inspect: got %q (%v), want %q", disposition, err, tc.want)
			}
			admission, err := Acquire(ctx, acquirer)
			switch tc.want {
			case DispositionActive:
				if !errors.Is(err, ErrActive) {
					t.Fatalf("want ErrActive, got %v", err)
				}
			case DispositionIndeterminate:
				if !errors.Is(err, ErrIndeterminate) {
					t.Fatalf("want ErrIndeterminate, got %v", err)
				}
			case DispositionRecoverable:
				if err != nil || admission.Claim().ID == id || !admission.Claim().Current() {
					t.Fatalf("want a fresh acquisition, got %v", err)
				}
				return
			}
			if string(w.read()) != string(content) {
				t.Fatal("a refused acquire changed the prior record")
			}
		})
	}
}

func TestCorruptAdmissionRefusedAndKept(t *testing.T) {
	w := newWorld(t)
	a := mustAcquire(t, w.controller(1000, "500"))
	good := string(w.read())
	w.inspector.Kill(1000)
	cases := []struct {
		name, content, message string
	}{
		{"bad JSON", good[:len(good)/2], "not valid JSON"},
		{"non-canonical", strings.Replace(good, ",", ", ", 1), "not canonical"},
		{"unknown field", strings.Replace(good, "{", `{"extra":1,`, 1), "unsupported shape"},
		{"over the size bound", good[:len(good)-2] + strings.Repeat(" ", RecordBytesMax) + "}\n", "size bound"},
		{"bad phase", strings.Replace(good, "parent-owned", "helper-active", 1), "lifecycle is invalid"},
		{"schema 4", strings.Replace(good, `"schemaVersion":3`, `"schemaVersion":4`, 1), "identity is invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(w.file(), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			before := tree(t, w.home)
			_, err := Acquire(ctx, w.controller(2000, "600"))
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("want ErrCorrupt %q, got %v", tc.message, err)
			}
			if after := tree(t, w.home); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Fatalf("tree changed:\nbefore %v\nafter  %v", before, after)
			}
			if content, _ := os.ReadFile(w.file()); string(content) != tc.content {
				t.Fatal("corrupt record was rewritten")
			}
		})
	}
	_ = a
}

func TestTransitionMatchesSeedExpression(t *testing.T) {
	phases := []Phase{PhaseParentOwned, PhaseHelperLaunching, PhaseHelperActive, PhaseCleanupUnsafe}
	for _, current := range phases {
		for _, next := range phases {
			for _, helper := range []bool{false, true} {
				seed := (next == PhaseHelperLaunching && current == PhaseParentOwned && !helper) ||
					(next == PhaseHelperActive && current == PhaseHelperLaunching && helper) ||
					(next == PhaseParentOwned && (current == PhaseHelperLaunching || current == PhaseHelperActive) && !helper) ||
					(next == PhaseCleanupUnsafe && current != PhaseParentOwned && (!helper || current == PhaseHelperActive))
				if Transition(current, next, helper) != seed {
					t.Errorf("Transition(%s, %s, %v) = %v, seed says %v", current, next, helper, !seed, seed)
				}
			}
		}
	}
}
