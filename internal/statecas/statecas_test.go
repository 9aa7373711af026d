package statecas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
)

type fixture struct {
	t         *testing.T
	dir       string
	uid       int
	inspector *leasetest.Inspector
	env       Env
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	uid := os.Getuid()
	inspector := leasetest.NewInspector(leasetest.IdentityOf(1000, uid, "500"))
	return &fixture{t: t, dir: t.TempDir(), uid: uid, inspector: inspector,
		env: Env{FS: osenv.NewFS(), IDs: leasetest.NewIDsWithPrefix(1), Inspector: inspector, UID: uint32(uid)}}
}

func (f *fixture) target() string { return filepath.Join(f.dir, "state.json") }

func (f *fixture) names() []string {
	f.t.Helper()
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, entry := range entries {
		out = append(out, entry.Name())
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCompareAndSwapOperations(t *testing.T) {
	f := newFixture(t)
	one, two := []byte("{\"v\":1}\n"), []byte("{\"v\":2}\n")
	if written, err := WriteIfUnchanged(f.env, f.target(), one, statefile.SHA256Hex(one)); err != nil || written {
		t.Fatalf("write of an absent file: %v %v", written, err)
	}
	if created, err := CreateIfAbsent(f.env, f.target(), one); err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if created, err := CreateIfAbsent(f.env, f.target(), two); err != nil || created {
		t.Fatalf("second create must report false: %v %v", created, err)
	}
	if written, err := WriteIfUnchanged(f.env, f.target(), two, statefile.SHA256Hex(two)); err != nil || written {
		t.Fatalf("write with a stale SHA: %v %v", written, err)
	}
	if written, err := WriteIfUnchanged(f.env, f.target(), two, statefile.SHA256Hex(one)); err != nil || !written {
		t.Fatalf("write with the current SHA: %v %v", written, err)
	}
	if removed, err := RemoveIfUnchanged(f.env, f.target(), statefile.SHA256Hex(one)); err != nil || removed {
		t.Fatalf("remove with a stale SHA: %v %v", removed, err)
	}
	content, err := os.ReadFile(f.target())
	if err != nil || string(content) != string(two) {
		t.Fatalf("content %q %v", content, err)
	}
	if removed, err := RemoveIfUnchanged(f.env, f.target(), statefile.SHA256Hex(two)); err != nil || !removed {
		t.Fatalf("remove with the current SHA: %v %v", removed, err)
	}
	if names := f.names(); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}

func TestMutationClaims(t *testing.T) {
	uid := os.Getuid()
	holder := leasetest.IdentityOf(4000, uid, "800")
	remote := holder
	remote.Hostname = "host-b"
	cases := []struct {
		name   string
		owner  lease.ProcessIdentity
		script func(*leasetest.Inspector)
		want   Kind // 0: recovered, the write goes through
	}{
		{"live owner", holder, func(i *leasetest.Inspector) { i.SetLive(holder) }, ErrMutationActive},
		{"uninspectable owner", holder, func(i *leasetest.Inspector) { i.Set(4000, leasetest.Unknown("EACCES (scripted)")) }, ErrMutationIndeterminate},
		{"remote owner", remote, func(i *leasetest.Inspector) {}, ErrMutationIndeterminate},
		{"dead owner", holder, func(i *leasetest.Inspector) {}, 0},
		{"PID reused", holder, func(i *leasetest.Inspector) { i.SetLive(leasetest.IdentityOf(4000, uid, "801")) }, 0},
		{"single-thread zombie", holder, func(i *leasetest.Inspector) { i.Set(holder.PID, leasetest.Zombie(holder, 1)) }, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			old, next := []byte("old\n"), []byte("new\n")
			must(t, os.WriteFile(f.target(), old, 0o600))
			const deadID = "0000dead-0000-4000-8000-000000000001"
			must(t, os.WriteFile(ClaimPath(f.target()), MutationClaimBytes(deadID, f.target(), tc.owner), 0o600))
			dataTemp := filepath.Join(f.dir, ".tmp-cas-"+deadID+"-0000dead-0000-4000-8000-000000000002")
			must(t, os.WriteFile(dataTemp, []byte("torn"), 0o600))
			tc.script(f.inspector)
			written, err := WriteIfUnchanged(f.env, f.target(), next, statefile.SHA256Hex(old))
			if tc.want != 0 {
				if !errors.Is(err, tc.want) || written {
					t.Fatalf("want %v, got %v (written %v)", tc.want, err, written)
				}
				if tc.want == ErrMutationActive && !strings.Contains(err.Error(), MutationActiveText) {
					t.Fatalf("message %q lacks %q", err, MutationActiveText)
				}
				if len(f.names()) != 3 {
					t.Fatalf("a refusal changed the directory: %v", f.names())
				}
				return
			}
			if err != nil || !written {
				t.Fatalf("orphaned claim not recovered: %v", err)
			}
			if names := f.names(); len(names) != 1 || names[0] != "state.json" {
				t.Fatalf("orphan machinery left behind: %v", names)
			}
		})
	}
	t.Run("corrupt claim is kept and refused", func(t *testing.T) {
		f := newFixture(t)
		must(t, os.WriteFile(f.target(), []byte("x\n"), 0o600))
		must(t, os.WriteFile(ClaimPath(f.target()), []byte("{not json"), 0o600))
		if _, err := RemoveIfUnchanged(f.env, f.target(), statefile.SHA256Hex([]byte("x\n"))); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("want ErrCorrupt, got %v", err)
		}
		if len(f.names()) != 2 {
			t.Fatalf("changed: %v", f.names())
		}
	})
}

// TestOrphanRecoveryNeverDeletesALiveClaim: after this call judged the
// claim dead, another recoverer replaced it with a live claim before the
// quarantine rename. The quarantined inode is not the dead one, so it is
// renamed back and the call sees contention.
func TestOrphanRecoveryNeverDeletesALiveClaim(t *testing.T) {
	f := newFixture(t)
	claimPath, liveBytes := f.deadClaimAndLiveRival(t)
	swapped := false
	hooked := leasetest.NewHookFS(f.env.FS)
	hooked.Before(func(op leasetest.Op) error {
		if op.Name == "RenameNoReplace" && strings.HasSuffix(op.Paths[1], ".orphan") && !swapped {
			swapped = true
			must(t, os.Remove(claimPath))
			must(t, os.WriteFile(claimPath, liveBytes, 0o600))
		}
		return nil
	})
	env := f.env
	env.FS = hooked
	_, err := RemoveIfUnchanged(env, f.target(), statefile.SHA256Hex([]byte("x\n")))
	if !swapped || !errors.Is(err, ErrMutationActive) {
		t.Fatalf("want contention after the restore, got %v (swapped %v)", err, swapped)
	}
	content, err := os.ReadFile(claimPath)
	if err != nil || string(content) != string(liveBytes) {
		t.Fatalf("the live claim was not restored: %v", err)
	}
	if len(f.names()) != 2 {
		t.Fatalf("quarantine left behind: %v", f.names())
	}
}

// TestDisplacedClaimRefusesTheCommit: if this call's claim is displaced
// after it read the target, verify refuses before the write.
func TestDisplacedClaimRefusesTheCommit(t *testing.T) {
	f := newFixture(t)
	old := []byte("old\n")
	must(t, os.WriteFile(f.target(), old, 0o600))
	displaced := false
	hooked := leasetest.NewHookFS(f.env.FS)
	hooked.Before(func(op leasetest.Op) error {
		if op.Name == "OpenFile" && op.Paths[0] == f.target() && !displaced {
			displaced = true
			must(t, os.Rename(ClaimPath(f.target()), filepath.Join(f.dir, "stolen")))
		}
		return nil
	})
	env := f.env
	env.FS = hooked
	written, err := WriteIfUnchanged(env, f.target(), []byte("new\n"), statefile.SHA256Hex(old))
	if !displaced || !errors.Is(err, ErrClaimLost) || written {
		t.Fatalf("want ErrClaimLost, got %v (written %v)", err, written)
	}
	if content, _ := os.ReadFile(f.target()); string(content) != string(old) {
		t.Fatal("the target was written without a claim")
	}
}

func TestOwnerStatus(t *testing.T) {
	uid := os.Getuid()
	current := leasetest.IdentityOf(1000, uid, "500")
	recorded := leasetest.IdentityOf(2000, uid, "600")
	with := func(change func(*lease.ProcessIdentity)) lease.ProcessIdentity {
		id := recorded
		change(&id)
		return id
	}
	legacy := func(o Owner) Owner { o.Legacy = true; o.Hostname, o.PIDNamespace = "", ""; return o }
	cases := []struct {
		name   string
		owner  Owner
		script func(*leasetest.Inspector)
		want   Status
	}{
		{"live", OwnerOf(recorded), func(i *leasetest.Inspector) { i.SetLive(recorded) }, StatusLive},
		{"zombie leader with threads", OwnerOf(recorded), func(i *leasetest.Inspector) { i.Set(recorded.PID, leasetest.Zombie(recorded, 4)) }, StatusLive},
		{"remote host", OwnerOf(with(func(p *lease.ProcessIdentity) { p.Hostname = "host-b" })), func(*leasetest.Inspector) {}, StatusUnknown},
		{"other PID namespace", OwnerOf(with(func(p *lease.ProcessIdentity) { p.PIDNamespace = "9" })), func(i *leasetest.Inspector) { i.SetLive(recorded) }, StatusUnknown},
		{"other boot", OwnerOf(with(func(p *lease.ProcessIdentity) { p.BootID = "old" })), func(i *leasetest.Inspector) { i.SetLive(recorded) }, StatusDead},
		{"unknown boot proves nothing", OwnerOf(with(func(p *lease.ProcessIdentity) { p.BootID = "" })), func(i *leasetest.Inspector) { i.SetLive(recorded) }, StatusLive},
		{"absent", OwnerOf(recorded), func(*leasetest.Inspector) {}, StatusDead},
		{"uninspectable", OwnerOf(recorded), func(i *leasetest.Inspector) { i.Set(2000, leasetest.Unknown("EACCES (scripted)")) }, StatusUnknown},
		{"single-thread zombie", OwnerOf(recorded), func(i *leasetest.Inspector) { i.Set(recorded.PID, leasetest.Zombie(recorded, 1)) }, StatusDead},
		{"PID reused", OwnerOf(recorded), func(i *leasetest.Inspector) {
			i.SetLive(with(func(p *lease.ProcessIdentity) { p.StartTime = "601" }))
		}, StatusDead},
		{"executable inode changed", OwnerOf(recorded), func(i *leasetest.Inspector) {
			i.SetLive(with(func(p *lease.ProcessIdentity) { p.ExecutableIno = 99 }))
		}, StatusDead},
		{"upgraded executable path, same inode", OwnerOf(recorded), func(i *leasetest.Inspector) {
			i.SetLive(with(func(p *lease.ProcessIdentity) { p.Executable = "/usr/bin/exporter (deleted)" }))
		}, StatusLive},
		{"legacy live and verifiable", legacy(OwnerOf(recorded)), func(i *leasetest.Inspector) { i.SetLive(recorded) }, StatusLive},
		{"legacy live, unverifiable digest", legacy(OwnerOf(recorded)), func(i *leasetest.Inspector) {
			i.SetLive(with(func(p *lease.ProcessIdentity) { p.StartTime = "601" }))
		}, StatusUnknown},
		{"legacy absent", legacy(OwnerOf(recorded)), func(*leasetest.Inspector) {}, StatusDead},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inspector := leasetest.NewInspector(current)
			tc.script(inspector)
			if got := OwnerStatus(tc.owner, current, inspector); got.Status != tc.want {
				t.Fatalf("got %v (%s), want %v", got.Status, got.Reason, tc.want)
			}
		})
	}
}

func TestOwnerRoundTripAndShapes(t *testing.T) {
	owner := OwnerOf(leasetest.IdentityOf(7, 0, "1"))
	raw := statefile.MustCanonical(owner.Wire())
	parsed, err := ParseOwner(raw[:len(raw)-1], "owner", false)
	if err != nil || parsed != owner {
		t.Fatalf("round trip: %+v %v", parsed, err)
	}
	if _, err := ParseOwner(raw[:len(raw)-1], "owner", true); err == nil {
		t.Fatal("a five-key owner must not parse as legacy")
	}
	bad := strings.Replace(string(raw), owner.BootID, strings.ToUpper(owner.BootID), 1)
	if _, err := ParseOwner([]byte(bad), "owner", false); err == nil {
		t.Fatal("upper-case digest accepted")
	}
}

func TestSnapshotAndBatch(t *testing.T) {
	f := newFixture(t)
	uid := uint32(f.uid)
	must(t, os.Chmod(f.dir, 0o700))
	for _, name := range []string{"b.json", "a.json"} {
		must(t, os.WriteFile(filepath.Join(f.dir, name), []byte(name), 0o600))
	}
	dead := leasetest.IdentityOf(4000, f.uid, "800")
	must(t, os.WriteFile(ClaimPath(filepath.Join(f.dir, "a.json")), MutationClaimBytes("0000dead-0000-4000-8000-000000000001", "a.json", dead), 0o600))
	live := leasetest.IdentityOf(1000, f.uid, "500")
	must(t, os.WriteFile(ClaimPath(filepath.Join(f.dir, "b.json")), MutationClaimBytes("0000beef-0000-4000-8000-000000000001", "b.json", live), 0o600))
	snapshot, err := Snapshot(f.env, uid, f.dir, SnapshotOptions{EntriesMax: 2, RecoverOrphanedClaims: true})
	must(t, err)
	if len(snapshot.Entries) != 2 || snapshot.Entries[0].Name != "a.json" || snapshot.Entries[1].Name != "b.json" ||
		snapshot.ClaimsActive != 1 || snapshot.Recovered != 1 {
		t.Fatalf("snapshot %+v", snapshot)
	}
	if _, err := Snapshot(f.env, uid, f.dir, SnapshotOptions{EntriesMax: 1}); !errors.Is(err, ErrBound) {
		t.Fatalf("want ErrBound, got %v", err)
	}
	files, err := ReadBatch(f.env, uid, f.dir, []string{"a.json", "missing.json"}, BatchLimits{16, 32}, snapshot.Identity)
	if err != nil || !files[0].Present || string(files[0].Content) != "a.json" || files[1].Present {
		t.Fatalf("batch %+v %v", files, err)
	}
	if _, err := ReadBatch(f.env, uid, f.dir, []string{"a.json"}, BatchLimits{3, 32}, snapshot.Identity); !errors.Is(err, ErrBound) {
		t.Fatalf("want ErrBound for an oversized file, got %v", err)
	}
	other := snapshot.Identity
	other.BirthNs++
	if _, err := ReadBatch(f.env, uid, f.dir, []string{"a.json"}, BatchLimits{16, 32}, other); !errors.Is(err, ErrChanged) {
		t.Fatalf("want ErrChanged for another directory identity, got %v", err)
	}
	must(t, os.Chmod(f.dir, 0o750))
	if _, err := Snapshot(f.env, uid, f.dir, SnapshotOptions{EntriesMax: 4}); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("want ErrUnsafe for mode 0750, got %v", err)
	}
}

func TestRemoveTree(t *testing.T) {
	setup := func(t *testing.T) (*fixture, string, lease.FileIdentity, string) {
		f := newFixture(t)
		target := filepath.Join(f.dir, "work")
		must(t, os.MkdirAll(filepath.Join(target, "a", "b"), 0o700))
		must(t, os.WriteFile(filepath.Join(target, "a", "b", "f"), []byte("x"), 0o600))
		outside := filepath.Join(f.dir, "outside")
		must(t, os.Mkdir(outside, 0o700))
		must(t, os.WriteFile(filepath.Join(outside, "keep"), []byte("keep"), 0o600))
		must(t, os.Symlink(outside, filepath.Join(target, "a", "link")))
		info, err := f.env.FS.Lstat(target)
		must(t, err)
		identity, ok := info.Identity()
		if !ok {
			t.Fatal("no birth time on this filesystem")
		}
		return f, target, identity, outside
	}
	t.Run("removes the tree and never follows a symlink", func(t *testing.T) {
		f, target, identity, outside := setup(t)
		removed, err := RemoveTree(f.env, target, identity)
		if err != nil || !removed {
			t.Fatalf("RemoveTree: %v %v", removed, err)
		}
		if names := f.names(); len(names) != 1 || names[0] != "outside" {
			t.Fatalf("left: %v", names)
		}
		if content, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(content) != "keep" {
			t.Fatal("followed a symlink out of the tree")
		}
	})
	t.Run("refuses a symlink at the target", func(t *testing.T) {
		f, target, identity, outside := setup(t)
		must(t, os.Rename(target, filepath.Join(f.dir, "real")))
		must(t, os.Symlink(filepath.Join(f.dir, "real"), target))
		if _, err := RemoveTree(f.env, target, identity); !errors.Is(err, ErrUnsafe) {
			t.Fatalf("want ErrUnsafe, got %v", err)
		}
		if _, err := os.Stat(filepath.Join(f.dir, "real", "a", "b", "f")); err != nil {
			t.Fatal("the symlink's target was touched")
		}
		_ = outside
	})
	t.Run("completes an interrupted quarantine and refuses a foreign one", func(t *testing.T) {
		f, target, identity, _ := setup(t)
		quarantine := filepath.Join(f.dir, QuarantineName(identity))
		must(t, os.Rename(target, quarantine))
		removed, err := RemoveTree(f.env, target, identity)
		if err != nil || !removed {
			t.Fatalf("completion: %v %v", removed, err)
		}
		must(t, os.Mkdir(quarantine, 0o700))
		if _, err := RemoveTree(f.env, target, identity); !errors.Is(err, ErrChanged) {
			t.Fatalf("foreign quarantine: want ErrChanged, got %v", err)
		}
		if _, err := os.Stat(quarantine); err != nil {
			t.Fatal("a foreign quarantine was removed")
		}
		if removed, err := RemoveTree(f.env, filepath.Join(f.dir, "never"), lease.FileIdentity{Dev: 1, Ino: 2, BirthNs: 3}); err != nil || removed {
			t.Fatalf("absent target and quarantine: %v %v", removed, err)
		}
	})
}

func TestEnsurePrivateDir(t *testing.T) {
	f := newFixture(t)
	uid := uint32(f.uid)
	got, err := EnsurePrivateDir(f.env, uid, f.dir, "recovery", "root")
	if err != nil || got != filepath.Join(f.dir, "recovery", "root") {
		t.Fatalf("EnsurePrivateDir: %q %v", got, err)
	}
	if _, err := EnsurePrivateDir(f.env, uid, f.dir, "recovery", "root"); err != nil {
		t.Fatalf("second call must accept what the first made: %v", err)
	}
	for _, home := range []string{"relative", f.dir + "/", f.dir + "/../x"} {
		if _, err := EnsurePrivateDir(f.env, uid, home, "recovery"); !errors.Is(err, ErrUnsafe) {
			t.Fatalf("home %q: want ErrUnsafe, got %v", home, err)
		}
	}
	must(t, os.Chmod(filepath.Join(f.dir, "recovery"), 0o755))
	if _, err := EnsurePrivateDir(f.env, uid, f.dir, "recovery", "root"); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("mode 0755 part: want ErrUnsafe, got %v", err)
	}
	must(t, os.Chmod(filepath.Join(f.dir, "recovery"), 0o700))
	must(t, os.Symlink(filepath.Join(f.dir, "recovery"), filepath.Join(f.dir, "linked")))
	if _, err := EnsurePrivateDir(f.env, uid, f.dir, "linked", "root"); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("symlinked part: want ErrUnsafe, got %v", err)
	}
}

// TestClaimDisplacedRightAfterItsPublishIsNotTakenForOwn: an orphan
// recovery may move a claim aside the moment it is published and a rival
// publish its own under the name before this call looks. The call must
// know its claim by the inode it wrote, not by whatever sits under the name
// afterwards: it refuses the commit (ErrClaimLost), writes nothing and
// leaves the rival's claim alone. (Found by guided search in the admission
// campaign: the call took the rival's claim for its own, committed under
// it, and its release removed the rival's claim.)
func TestClaimDisplacedRightAfterItsPublishIsNotTakenForOwn(t *testing.T) {
	f := newFixture(t)
	old := []byte("old\n")
	must(t, os.WriteFile(f.target(), old, 0o600))
	claimPath := ClaimPath(f.target())
	rival := MutationClaimBytes("0000beef-0000-4000-8000-000000000002", f.target(), leasetest.IdentityOf(5000, f.uid, "801"))
	published, swapped := false, false
	hooked := leasetest.NewHookFS(f.env.FS)
	hooked.Before(func(op leasetest.Op) error {
		switch {
		case published && !swapped:
			swapped = true
			must(t, os.Rename(claimPath, claimPath+".0000-recovery.orphan"))
			must(t, os.WriteFile(claimPath, rival, 0o600))
		case op.Name == "RenameNoReplace" && op.Paths[1] == claimPath:
			published = true
		}
		return nil
	})
	env := f.env
	env.FS = hooked
	written, err := WriteIfUnchanged(env, f.target(), []byte("new\n"), statefile.SHA256Hex(old))
	if !swapped || !errors.Is(err, ErrClaimLost) || written {
		t.Fatalf("want ErrClaimLost, got %v (written %v, swapped %v)", err, written, swapped)
	}
	if content, _ := os.ReadFile(f.target()); string(content) != string(old) {
		t.Fatal("the target was written under the rival's claim")
	}
	if content, err := os.ReadFile(claimPath); err != nil || string(content) != string(rival) {
		t.Fatalf("the rival's claim was removed or changed: %q, %v", content, err)
	}
}

// TestClaimIdentityErrorLeavesNoClaim: when the claim's identity cannot be
// read (an EIO on its Lstat), the call fails and leaves neither the claim
// nor its temp: a claim left behind names this live process and refuses
// every later mutation, its own other threads' too, until it dies.
func TestClaimIdentityErrorLeavesNoClaim(t *testing.T) {
	f := newFixture(t)
	old := []byte("old\n")
	must(t, os.WriteFile(f.target(), old, 0o600))
	failed := false
	hooked := leasetest.NewHookFS(f.env.FS)
	hooked.Before(func(op leasetest.Op) error {
		if op.Name == "Lstat" && strings.Contains(filepath.Base(op.Paths[0]), claimTempTag) && !failed {
			failed = true
			return &os.PathError{Op: "lstat", Path: op.Paths[0], Err: syscall.EIO}
		}
		return nil
	})
	env := f.env
	env.FS = hooked
	written, err := WriteIfUnchanged(env, f.target(), []byte("new\n"), statefile.SHA256Hex(old))
	if !failed || !errors.Is(err, syscall.EIO) || written {
		t.Fatalf("want EIO, got %v (written %v, failed %v)", err, written, failed)
	}
	if names := f.names(); len(names) != 1 || names[0] != "state.json" {
		t.Fatalf("left behind: %v", names)
	}
}

// TestDisplacedClaimIsTakenBackByItsClaimant: a recoverer that judged an
// earlier, dead claim renames this call's live claim to an orphan name and
// stops before it can rename it back. The call fails with ErrClaimLost and
// takes its own claim back on the way out, from the orphan name or, if the
// recoverer already restored it, from the claim name: a claim left behind
// would name this live process, which holds nothing, and refuse every
// later mutation of the file until the process dies. (Found by guided
// search in the admission campaign: testdata/seeds/admission/ok-*.seed of
// the stopped recoverer.)
func TestDisplacedClaimIsTakenBackByItsClaimant(t *testing.T) {
	for _, restored := range []bool{false, true} {
		t.Run(map[bool]string{false: "still aside", true: "restored"}[restored], func(t *testing.T) {
			f := newFixture(t)
			old := []byte("old\n")
			must(t, os.WriteFile(f.target(), old, 0o600))
			claimPath := ClaimPath(f.target())
			orphan := claimPath + ".0000-recovery" + orphanSuffix
			hooked := leasetest.NewHookFS(f.env.FS)
			moved, put := false, false
			hooked.Before(func(op leasetest.Op) error {
				if op.Name == "OpenFile" && op.Paths[0] == f.target() && !moved {
					moved = true
					must(t, os.Rename(claimPath, orphan))
				}
				if op.Name == "ReadDir" && restored && moved && !put {
					put = true
					must(t, os.Rename(orphan, claimPath)) // the recoverer's restore, as the call retracts
				}
				return nil
			})
			env := f.env
			env.FS = hooked
			written, err := WriteIfUnchanged(env, f.target(), []byte("new\n"), statefile.SHA256Hex(old))
			if !moved || put != restored || !errors.Is(err, ErrClaimLost) || written {
				t.Fatalf("want ErrClaimLost, got %v (written %v, moved %v, put back %v)", err, written, moved, put)
			}
			if names := f.names(); len(names) != 1 || names[0] != "state.json" {
				t.Fatalf("the displaced claim was left behind: %v", names)
			}
		})
	}
}

// TestOrphanRecoveryMeetsARetractedClaim: the live claim a recoverer moved
// aside is taken back by its claimant before the recoverer reads it; the
// recoverer then finds nothing to restore and retries instead of reporting
// a claim "kept at" a name that no longer exists.
func TestOrphanRecoveryMeetsARetractedClaim(t *testing.T) {
	f := newFixture(t)
	claimPath, liveBytes := f.deadClaimAndLiveRival(t)
	quarantine, swapped, retracted := "", false, false
	hooked := leasetest.NewHookFS(f.env.FS)
	hooked.Before(func(op leasetest.Op) error {
		switch {
		case op.Name == "RenameNoReplace" && strings.HasSuffix(op.Paths[1], orphanSuffix) && !swapped:
			swapped, quarantine = true, op.Paths[1]
			must(t, os.Remove(claimPath))
			must(t, os.WriteFile(claimPath, liveBytes, 0o600))
		case swapped && !retracted && op.Name == "Lstat" && op.Paths[0] == quarantine:
			retracted = true
			must(t, os.Remove(quarantine)) // the live claimant took it back
		}
		return nil
	})
	env := f.env
	env.FS = hooked
	removed, err := RemoveIfUnchanged(env, f.target(), statefile.SHA256Hex([]byte("x\n")))
	if !retracted || err != nil || !removed {
		t.Fatalf("want the retry to remove the target, got %v (removed %v, retracted %v)", err, removed, retracted)
	}
	if names := f.names(); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}

// deadClaimAndLiveRival writes the target ("x\n") and a claim of a dead
// process on it, and returns the claim's path and the bytes of a live
// rival's claim, for the orphan-recovery races.
func (f *fixture) deadClaimAndLiveRival(t *testing.T) (claimPath string, liveBytes []byte) {
	t.Helper()
	must(t, os.WriteFile(f.target(), []byte("x\n"), 0o600))
	dead := leasetest.IdentityOf(4000, f.uid, "800")
	live := leasetest.IdentityOf(5000, f.uid, "801")
	f.inspector.SetLive(live)
	claimPath = ClaimPath(f.target())
	must(t, os.WriteFile(claimPath, MutationClaimBytes("0000dead-0000-4000-8000-000000000001", f.target(), dead), 0o600))
	return claimPath, MutationClaimBytes("0000beef-0000-4000-8000-000000000001", f.target(), live)
}
