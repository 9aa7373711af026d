package simfs_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
)

func wantErrno(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if want == 0 {
		if err != nil {
			t.Errorf("%s: %v, want success", what, err)
		}
		return
	}
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	if !errors.As(err, &pathErr) && !errors.As(err, &linkErr) {
		t.Errorf("%s: %v is not a *fs.PathError or *os.LinkError", what, err)
	}
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %s", what, err, simfs.ErrnoName(want))
	}
}

// TestInodeReuseLowestFree checks eager reuse of the lowest free number with
// a new birth time, so identities never repeat.
func TestInodeReuseLowestFree(t *testing.T) {
	f := newTestFS()
	v := f.View(0)
	writeFile(t, v, "/d/a", "a", false)
	writeFile(t, v, "/d/b", "b", false)
	a, _ := v.Stat("/d/a")
	b, _ := v.Stat("/d/b")
	if b.Ino != a.Ino+1 {
		t.Fatalf("inode numbers %d, %d: want consecutive", a.Ino, b.Ino)
	}
	must(t, v.Remove("/d/a"))
	writeFile(t, v, "/d/c", "c", false)
	c, _ := v.Stat("/d/c")
	if c.Ino != a.Ino {
		t.Errorf("new file got ino %d, want the freed %d", c.Ino, a.Ino)
	}
	if c.BirthNs <= b.BirthNs {
		t.Errorf("birth %d not after %d", c.BirthNs, b.BirthNs)
	}
	idA, _ := a.Identity()
	idC, _ := c.Identity()
	if idA == idC {
		t.Errorf("reused inode kept its identity %v", idA)
	}
}

// TestOpenUnlinkedKeepsNumber checks that an unlinked open file keeps its
// inode number until closed, as on Linux.
func TestOpenUnlinkedKeepsNumber(t *testing.T) {
	f := newTestFS()
	v := f.View(0)
	writeFile(t, v, "/d/a", "a", false)
	a, _ := v.Stat("/d/a")
	fl, err := v.OpenFile("/d/a", lease.O_RDONLY, 0)
	must(t, err)
	must(t, v.Remove("/d/a"))
	writeFile(t, v, "/d/b", "b", false)
	if b, _ := v.Stat("/d/b"); b.Ino == a.Ino {
		t.Fatalf("reused the number of an open inode")
	}
	must(t, fl.Close())
	writeFile(t, v, "/d/c", "c", false)
	if c, _ := v.Stat("/d/c"); c.Ino != a.Ino {
		t.Errorf("number %d not reused after close, got %d", a.Ino, c.Ino)
	}
}

// TestPermissions checks DAC for a non-root uid (the kernel suite runs as
// root, where DAC does not apply).
func TestPermissions(t *testing.T) {
	f := simfs.New(simfs.Options{Dev: 1})
	f.MkdirAll("/home/alice", 0o700, 1000)
	f.MkdirAll("/shared", 0o755, 0)
	f.MkdirAll("/open", 0o777, 0)
	f.MkdirAll("/tmp", 0o777|fs.ModeSticky, 0)
	alice, bob, root := f.View(1000), f.View(1001), f.View(0)
	writeFile(t, alice, "/home/alice/secret", "s", false)
	writeFile(t, alice, "/open/a", "a", false)
	writeFile(t, alice, "/tmp/a", "a", false)
	writeFile(t, bob, "/tmp/b", "b", false)
	cases := []struct {
		what string
		err  error
		want syscall.Errno
	}{
		{"bob stat in alice's 0700 dir", errOnly(bob.Stat("/home/alice/secret")), syscall.EACCES},
		{"bob readdir alice's dir", errOnly(bob.ReadDir("/home/alice")), syscall.EACCES},
		{"bob mkdir in root-owned 0755", bob.Mkdir("/shared/x", 0o700), syscall.EACCES},
		{"bob create in root-owned 0755", errOnly(bob.OpenFile("/shared/f", lease.O_WRONLY|lease.O_CREATE, 0o600)), syscall.EACCES},
		{"bob open alice's 0600 file", errOnly(bob.OpenFile("/open/a", lease.O_RDONLY, 0)), syscall.EACCES},
		{"bob chmod alice's file", bob.Chmod("/open/a", 0o777), syscall.EPERM},
		{"bob link alice's 0600 file", bob.Link("/open/a", "/open/b"), syscall.EPERM},
		{"bob remove in 0777 dir", bob.Remove("/open/a"), 0},
		{"root reads alice's secret", errOnly(root.OpenFile("/home/alice/secret", lease.O_RDONLY, 0)), 0},
		{"alice chmod own file", alice.Chmod("/home/alice/secret", 0o400), 0},
		{"alice writes own 0400 file", errOnly(alice.OpenFile("/home/alice/secret", lease.O_WRONLY, 0)), syscall.EACCES},
		{"alice O_TRUNC on own 0400 file", errOnly(alice.OpenFile("/home/alice/secret", lease.O_RDONLY|lease.O_TRUNC, 0)), syscall.EACCES},
		{"root writes alice's 0400 file", errOnly(root.OpenFile("/home/alice/secret", lease.O_WRONLY, 0)), 0},
		{"bob renames into alice's dir", bob.Rename("/open/x", "/home/alice/x"), syscall.EACCES},
		{"bob removes alice's file in sticky /tmp", bob.Remove("/tmp/a"), syscall.EPERM},
		{"bob renames over alice's file in sticky /tmp", bob.Rename("/tmp/b", "/tmp/a"), syscall.EPERM},
		{"bob renames alice's file in sticky /tmp", bob.Rename("/tmp/a", "/tmp/c"), syscall.EPERM},
		{"alice removes her file in sticky /tmp", alice.Remove("/tmp/a"), 0},
		{"root removes bob's file in sticky /tmp", root.Remove("/tmp/b"), 0},
	}
	for _, c := range cases {
		wantErrno(t, c.what, c.err, c.want)
	}
	info, err := alice.Stat("/home/alice/secret")
	must(t, err)
	if info.UID != 1000 || info.Perm() != 0o400 {
		t.Errorf("secret: uid %d perm %o", info.UID, info.Perm())
	}
}

func errOnly[T any](_ T, err error) error {
	if f, ok := any(err).(interface{ Close() error }); ok {
		f.Close()
	}
	return err
}

// TestUmask checks that created modes are masked, the default is 0o022 and
// UmaskNone disables it.
func TestUmask(t *testing.T) {
	cases := []struct {
		opts simfs.Options
		want fs.FileMode
	}{
		{simfs.Options{}, 0o755},
		{simfs.Options{Umask: 0o077}, 0o700},
		{simfs.Options{UmaskNone: true}, 0o777},
	}
	for _, c := range cases {
		v := simfs.New(c.opts).View(0)
		must(t, v.Mkdir("/x", 0o777))
		info, _ := v.Stat("/x")
		if info.Perm() != c.want {
			t.Errorf("%+v: perm %o, want %o", c.opts, info.Perm(), c.want)
		}
	}
}

type fixedChooser []int

func (c *fixedChooser) Intn(n int) int {
	v := (*c)[0] % n
	*c = (*c)[1:]
	return v
}

// TestMkdirTemp checks seeded names, retry on a collision and mode 0700.
func TestMkdirTemp(t *testing.T) {
	rand := &fixedChooser{7, 7, 9, 1}
	v := simfs.New(simfs.Options{Rand: rand}).View(0)
	must(t, v.Mkdir("/t", 0o755))
	a, err := v.MkdirTemp("/t", "lease-*.d")
	must(t, err)
	b, err := v.MkdirTemp("/t", "lease-*.d")
	must(t, err)
	if a != "/t/lease-7.d" || b != "/t/lease-9.d" {
		t.Errorf("names %q, %q", a, b)
	}
	info, _ := v.Stat(a)
	if info.Perm() != 0o700 {
		t.Errorf("perm %o", info.Perm())
	}
	_, err = v.MkdirTemp("/missing", "x")
	wantErrno(t, "mkdirtemp in a missing dir", err, syscall.ENOENT)
}

// TestCrashInvalidatesFiles checks EBADF after a crash and that a crash
// frees unreachable numbers.
func TestCrashInvalidatesFiles(t *testing.T) {
	f := newTestFS()
	v := f.View(0)
	fl, err := v.OpenFile("/d/a", lease.O_RDWR|lease.O_CREATE, 0o600)
	must(t, err)
	before, _ := fl.Stat()
	f.Crash(simfs.CrashSyncedOnly, &counter{})
	_, err = fl.Write([]byte("x"))
	wantErrno(t, "write after crash", err, syscall.EBADF)
	wantErrno(t, "close after crash", fl.Close(), syscall.EBADF)
	f.CloseAll(v) // the stale open list must not touch the rebuilt inodes
	writeFile(t, v, "/e/b", "b", false)
	if after, _ := v.Stat("/e/b"); after.Ino != before.Ino {
		t.Errorf("lost file's number %d not reused (got %d)", before.Ino, after.Ino)
	}
}

// TestCloseAll checks that a dead process's files close and an unlinked
// file it held is freed.
func TestCloseAll(t *testing.T) {
	f := newTestFS()
	v := f.View(0)
	writeFile(t, v, "/d/a", "a", false)
	a, _ := v.Stat("/d/a")
	for i := 0; i < 3; i++ {
		_, err := v.OpenFile("/d/a", lease.O_RDONLY, 0)
		must(t, err)
	}
	must(t, v.Remove("/d/a"))
	f.CloseAll(v)
	writeFile(t, v, "/d/b", "b", false)
	if b, _ := v.Stat("/d/b"); b.Ino != a.Ino {
		t.Errorf("CloseAll did not free the unlinked inode")
	}
}

// TestInjector checks rule printing, OnIndex counting within And, errno
// wrapping, and that an injected failure has no effect.
func TestInjector(t *testing.T) {
	rules := simfs.Rules{
		{Errno: syscall.EIO, When: simfs.And(simfs.OnOp(simfs.OpSync), simfs.PathMatch("*.json"), simfs.OnIndex(1))},
		{Errno: syscall.ENOSPC, When: simfs.OnOp(simfs.OpMkdir, simfs.OpWrite)},
	}
	want := `(EIO (And (Op sync) (PathMatch "*.json") (OnIndex 1)))` + "\n" + `(ENOSPC (Op mkdir write))`
	if rules.String() != want {
		t.Errorf("String:\n%s\nwant:\n%s", rules.String(), want)
	}
	f := simfs.New(simfs.Options{Injector: rules})
	v := f.View(0)
	wantErrno(t, "mkdir", v.Mkdir("/x", 0o700), syscall.ENOSPC)
	if _, err := v.Stat("/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed mkdir had an effect: %v", err)
	}
	fl, err := v.OpenFile("/a.json", lease.O_WRONLY|lease.O_CREATE, 0o600)
	must(t, err)
	_, err = fl.Write([]byte("x"))
	wantErrno(t, "write", err, syscall.ENOSPC)
	wantErrno(t, "sync 0", fl.Sync(), 0)
	wantErrno(t, "sync 1", fl.Sync(), syscall.EIO)
	wantErrno(t, "sync 2", fl.Sync(), 0)
	if got := (simfs.Op{Kind: simfs.OpRename, Path: "/a", Path2: "/b"}).String(); got != "rename /a /b" {
		t.Errorf("Op.String: %q", got)
	}
	_, err = v.Stat("/" + strings.Repeat("x", 256))
	wantErrno(t, "stat of a 256-byte name", err, syscall.ENAMETOOLONG)
	_, err = v.Stat(strings.Repeat("/x", 2048))
	wantErrno(t, "stat of a 4096-byte path", err, syscall.ENAMETOOLONG)
	p := simfs.Probability(500, &fixedChooser{499, 500})
	if !p.Eval(simfs.Op{}) || p.Eval(simfs.Op{}) || p.String() != "(Probability 500/1000)" {
		t.Errorf("Probability misbehaves: %s", p)
	}
}

// TestCloneAndHash checks that a clone hashes equal, diverges independently,
// and that the same calls give the same hash (determinism).
func TestCloneAndHash(t *testing.T) {
	build := func() *simfs.FS {
		f := newTestFS()
		v := f.View(0)
		writeFile(t, v, "/d/a", "hello", true)
		must(t, v.Rename("/d/a", "/e/a"))
		must(t, v.Symlink("a", "/e/l"))
		return f
	}
	f1, f2 := build(), build()
	if f1.Hash() != f2.Hash() {
		t.Fatalf("same calls, different hashes")
	}
	c := f1.Clone()
	if c.Hash() != f1.Hash() {
		t.Fatalf("clone hashes differently")
	}
	var d1, dc bytes.Buffer
	f1.Dump(&d1, false)
	c.Dump(&dc, false)
	if d1.String() != dc.String() {
		t.Fatalf("clone dump differs:\n%s\n%s", d1.String(), dc.String())
	}
	writeFile(t, c.View(0), "/e/a", "changed", false)
	if got := readFile(t, f1.View(0), "/e/a"); got != "hello" {
		t.Errorf("writing the clone changed the original: %q", got)
	}
	if c.Hash() == f1.Hash() {
		t.Errorf("diverged states hash equal")
	}
	f1.Crash(simfs.CrashRandomSubset, &counter{})
	c2 := f2.Clone()
	f2.Crash(simfs.CrashRandomSubset, &counter{})
	c2.Crash(simfs.CrashRandomSubset, &counter{})
	if f1.Hash() != f2.Hash() || c2.Hash() != f2.Hash() {
		t.Errorf("same crash choices, different hashes")
	}
}

// TestDump pins the dump format.
func TestDump(t *testing.T) {
	f := newTestFS()
	v := f.View(0)
	writeFile(t, v, "/d/a", "hello", true)
	must(t, v.Symlink("a", "/d/l"))
	var vol, dur bytes.Buffer
	f.Dump(&vol, false)
	f.Dump(&dur, true)
	wantVol := "# volatile pending=2\n/d ino=11 mode=drwxr-xr-x nlink=2\n/d/a ino=13 mode=-rw------- nlink=1 size=5 \"hello\"\n" +
		"/d/l ino=14 mode=Lrwxrwxrwx nlink=1 -> \"a\"\n/e ino=12 mode=drwxr-xr-x nlink=2\n"
	wantDur := "# durable\n/d ino=11 mode=drwxr-xr-x\n/e ino=12 mode=drwxr-xr-x\n"
	if vol.String() != wantVol {
		t.Errorf("volatile dump:\n%s\nwant:\n%s", vol.String(), wantVol)
	}
	if dur.String() != wantDur {
		t.Errorf("durable dump:\n%s\nwant:\n%s", dur.String(), wantDur)
	}
}
