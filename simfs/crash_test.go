package simfs_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
)

// enumerator is a Chooser that, run repeatedly, walks every choice sequence:
// it replays a prefix, answers 0 past it, and next() advances the last
// choice that has room like an odometer.
type enumerator struct {
	prefix []int
	trail  []int
	bounds []int
}

func (e *enumerator) Intn(n int) int {
	v := 0
	if len(e.trail) < len(e.prefix) {
		v = e.prefix[len(e.trail)]
	}
	if v >= n {
		panic("enumerator: replayed choice out of range")
	}
	e.trail = append(e.trail, v)
	e.bounds = append(e.bounds, n)
	return v
}

func (e *enumerator) next() bool {
	for i := len(e.trail) - 1; i >= 0; i-- {
		if e.trail[i]+1 < e.bounds[i] {
			e.prefix = append(e.trail[:i:i], e.trail[i]+1)
			e.trail, e.bounds = nil, nil
			return true
		}
	}
	return false
}

// runsMax bounds an enumeration; the golden cases are tiny.
const runsMax = 10000

// outcomes builds a fresh FS with setup, crashes it with mode under every
// choice sequence, and returns the set of rendered post-crash trees.
func outcomes(t *testing.T, mode simfs.CrashMode, setup func(t *testing.T, f *simfs.FS, v lease.FS)) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	e := &enumerator{}
	for runs := 0; ; runs++ {
		if runs >= runsMax {
			t.Fatalf("more than %d choice sequences", runsMax)
		}
		f := newTestFS()
		v := f.View(0)
		setup(t, f, v)
		f.Crash(mode, e)
		if f.Pending() != 0 {
			t.Fatalf("pending %d after crash", f.Pending())
		}
		seen[render(t, f.View(0))] = true
		if !e.next() {
			return seen
		}
	}
}

func newTestFS() *simfs.FS {
	var now int64 = 1_000_000
	f := simfs.New(simfs.Options{Dev: 7, Now: func() int64 { now += 10; return now }, Rand: &counter{}})
	f.MkdirAll("/d", 0o755, 0)
	f.MkdirAll("/e", 0o755, 0)
	return f
}

// render lists every path under the root with file contents and nlink, in
// sorted order, e.g. `/d/ /d/a="x"`.
func render(t *testing.T, v lease.FS) string {
	t.Helper()
	var out []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := v.ReadDir(dir)
		if err != nil {
			t.Fatalf("readdir %s: %v", dir, err)
		}
		for _, e := range entries {
			p := strings.TrimSuffix(dir, "/") + "/" + e.Name
			switch {
			case e.Type.IsDir():
				out = append(out, p+"/")
				if depth < 16 {
					walk(p, depth+1)
				}
			default:
				info, err := v.Lstat(p)
				if err != nil {
					t.Fatalf("lstat %s: %v", p, err)
				}
				s := p + "=" + strconv.Quote(readFile(t, v, p))
				if info.Nlink != 1 {
					s += "(nlink=" + strconv.FormatUint(info.Nlink, 10) + ")"
				}
				out = append(out, s)
			}
		}
	}
	walk("/", 0)
	return strings.Join(out, " ")
}

func readFile(t *testing.T, v lease.FS, p string) string {
	t.Helper()
	f, err := v.OpenFile(p, lease.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(data)
}

func writeFile(t *testing.T, v lease.FS, p, data string, sync bool) {
	t.Helper()
	f, err := v.OpenFile(p, lease.O_WRONLY|lease.O_CREATE|lease.O_TRUNC, 0o600)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatalf("sync %s: %v", p, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close %s: %v", p, err)
	}
}

func syncDir(t *testing.T, v lease.FS, p string) {
	t.Helper()
	f, err := v.OpenFile(p, lease.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("sync %s: %v", p, err)
	}
	f.Close()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var powerLossModes = []simfs.CrashMode{
	simfs.CrashSyncedOnly, simfs.CrashMetadataPrefix, simfs.CrashRandomSubset, simfs.CrashTornData,
}

// crashCase is one golden crash case: for each mode, the exact set of
// reachable post-crash trees (so every listed outcome is reachable and every
// other outcome is not).
type crashCase struct {
	name  string
	setup func(t *testing.T, f *simfs.FS, v lease.FS)
	want  map[simfs.CrashMode][]string
}

var crashCases = []crashCase{
	{
		name: "created file vanishes without a dir fsync",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/f", "data", true)
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashProcess:        {`/d/ /d/f="data" /e/`},
			simfs.CrashSyncedOnly:     {`/d/ /e/`},
			simfs.CrashMetadataPrefix: {`/d/ /d/f="data" /e/`}, // the file fsync committed the journal
			simfs.CrashRandomSubset:   {`/d/ /e/`, `/d/ /d/f="data" /e/`},
		},
	},
	{
		name: "created file survives a dir fsync",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/f", "data", true)
			syncDir(t, v, "/d")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly:     {`/d/ /d/f="data" /e/`},
			simfs.CrashMetadataPrefix: {`/d/ /d/f="data" /e/`},
			simfs.CrashRandomSubset:   {`/d/ /d/f="data" /e/`},
			simfs.CrashTornData:       {`/d/ /d/f="data" /e/`},
		},
	},
	{
		name: "rename without a dir fsync can roll back",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/a", "old", true)
			syncDir(t, v, "/d")
			writeFile(t, v, "/d/tmp", "new", true)
			must(t, v.Rename("/d/tmp", "/d/a"))
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashProcess:        {`/d/ /d/a="new" /e/`},
			simfs.CrashSyncedOnly:     {`/d/ /d/a="old" /e/`},
			simfs.CrashMetadataPrefix: {`/d/ /d/a="old" /d/tmp="new" /e/`, `/d/ /d/a="new" /e/`},
			simfs.CrashRandomSubset: {
				`/d/ /d/a="old" /e/`, `/d/ /d/a="old" /d/tmp="new" /e/`, `/d/ /d/a="new" /e/`,
			},
		},
	},
	{
		name: "data without a file fsync can be empty after a rename",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/a", "old", true)
			syncDir(t, v, "/d")
			writeFile(t, v, "/d/tmp", "new", false)
			must(t, v.Rename("/d/tmp", "/d/a"))
			syncDir(t, v, "/d")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashProcess:        {`/d/ /d/a="new" /e/`},
			simfs.CrashSyncedOnly:     {`/d/ /d/a="" /e/`},
			simfs.CrashMetadataPrefix: {`/d/ /d/a="" /e/`, `/d/ /d/a="new" /e/`},
			simfs.CrashRandomSubset:   {`/d/ /d/a="" /e/`, `/d/ /d/a="new" /e/`},
			simfs.CrashTornData: {
				`/d/ /d/a="" /e/`, `/d/ /d/a="\x00\x00\x00" /e/`, `/d/ /d/a="n\x00\x00" /e/`, `/d/ /d/a="ne\x00" /e/`,
				`/d/ /d/a="new" /e/`,
			},
		},
	},
	{
		name: "cross-directory rename can leave both names or neither",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/f", "x", true)
			syncDir(t, v, "/d")
			must(t, v.Rename("/d/f", "/e/f"))
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly:     {`/d/ /d/f="x" /e/`},
			simfs.CrashMetadataPrefix: {`/d/ /d/f="x" /e/`, `/d/ /e/ /e/f="x"`},
			simfs.CrashRandomSubset: {
				`/d/ /d/f="x" /e/`, `/d/ /e/ /e/f="x"`, `/d/ /e/`, `/d/ /d/f="x"(nlink=2) /e/ /e/f="x"(nlink=2)`,
			},
		},
	},
	{
		name: "cross-directory rename with only the target dir synced keeps the new name",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/f", "x", true)
			syncDir(t, v, "/d")
			must(t, v.Rename("/d/f", "/e/f"))
			syncDir(t, v, "/e")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly:     {`/d/ /d/f="x"(nlink=2) /e/ /e/f="x"(nlink=2)`},
			simfs.CrashMetadataPrefix: {`/d/ /e/ /e/f="x"`},
			simfs.CrashRandomSubset:   {`/d/ /e/ /e/f="x"`, `/d/ /d/f="x"(nlink=2) /e/ /e/f="x"(nlink=2)`},
		},
	},
	{
		name: "new directory needs its parent synced",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			must(t, v.Mkdir("/d/sub", 0o700))
			writeFile(t, v, "/d/sub/f", "x", true)
			syncDir(t, v, "/d/sub")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly:     {`/d/ /e/`},
			simfs.CrashMetadataPrefix: {`/d/ /d/sub/ /d/sub/f="x" /e/`},
			simfs.CrashRandomSubset:   {`/d/ /e/`, `/d/ /d/sub/ /d/sub/f="x" /e/`},
		},
	},
	{
		name: "a reused inode number wins over the undurable removal of its old owner",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/a", "old", true)
			syncDir(t, v, "/d")
			before, _ := v.Stat("/d/a")
			must(t, v.Remove("/d/a"))
			writeFile(t, v, "/e/b", "new", true)
			syncDir(t, v, "/e")
			if after, _ := v.Stat("/e/b"); after.Ino != before.Ino {
				t.Fatalf("setup: number %d not reused (got %d)", before.Ino, after.Ino)
			}
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly:     {`/d/ /e/ /e/b="new"`},
			simfs.CrashMetadataPrefix: {`/d/ /e/ /e/b="new"`},
			simfs.CrashRandomSubset:   {`/d/ /e/ /e/b="new"`},
			simfs.CrashTornData:       {`/d/ /e/ /e/b="new"`},
		},
	},
	{
		// The lease campaign's finding: the rename frees the old inode, /e/b
		// reuses its number durably, so the free, hence the (atomic) rename,
		// is durable: /d/a is the new file in every mode, never missing.
		name: "a rename over a file whose number is reused is durable with the reuse",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/a", "old", true)
			syncDir(t, v, "/d")
			old, _ := v.Stat("/d/a")
			writeFile(t, v, "/d/tmp", "new", true)
			must(t, v.Rename("/d/tmp", "/d/a"))
			writeFile(t, v, "/e/b", "x", true)
			syncDir(t, v, "/e")
			mustReuse(t, v, old, "/e/b")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashProcess:        {`/d/ /d/a="new" /e/ /e/b="x"`},
			simfs.CrashSyncedOnly:     {`/d/ /d/a="new" /e/ /e/b="x"`},
			simfs.CrashMetadataPrefix: {`/d/ /d/a="new" /e/ /e/b="x"`},
			simfs.CrashRandomSubset:   {`/d/ /d/a="new" /e/ /e/b="x"`},
			simfs.CrashTornData:       {`/d/ /d/a="new" /e/ /e/b="x"`},
		},
	},
	{
		// Without the reuse the same rename may roll back (see "rename
		// without a dir fsync can roll back"); an unsynced /e/b proves
		// nothing, so both outcomes stay, each with or without /e/b.
		name: "a rename over a file whose number is reused undurably can roll back",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/a", "old", true)
			syncDir(t, v, "/d")
			old, _ := v.Stat("/d/a")
			writeFile(t, v, "/d/tmp", "new", true)
			must(t, v.Rename("/d/tmp", "/d/a"))
			writeFile(t, v, "/e/b", "x", false)
			mustReuse(t, v, old, "/e/b")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly: {`/d/ /d/a="old" /e/`},
			simfs.CrashRandomSubset: {
				`/d/ /d/a="old" /e/`, `/d/ /d/a="old" /d/tmp="new" /e/`, `/d/ /d/a="new" /e/`,
				`/d/ /d/a="new" /e/ /e/b=""`, `/d/ /d/a="new" /e/ /e/b="x"`,
			},
		},
	},
	{
		// A cross-directory rename over /e/a frees its inode; /d/b reuses
		// the number and /d is synced (the source name's removal too), so
		// the target effect in /e is forced: /e/a is the moved file.
		name: "a cross-directory rename over a file whose number is reused keeps the target",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/e/a", "old", true)
			syncDir(t, v, "/e")
			old, _ := v.Stat("/e/a")
			writeFile(t, v, "/d/src", "new", true)
			syncDir(t, v, "/d")
			must(t, v.Rename("/d/src", "/e/a"))
			writeFile(t, v, "/d/b", "x", true)
			syncDir(t, v, "/d")
			mustReuse(t, v, old, "/d/b")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly:     {`/d/ /d/b="x" /e/ /e/a="new"`},
			simfs.CrashMetadataPrefix: {`/d/ /d/b="x" /e/ /e/a="new"`},
			simfs.CrashRandomSubset:   {`/d/ /d/b="x" /e/ /e/a="new"`},
			simfs.CrashTornData:       {`/d/ /d/b="x" /e/ /e/a="new"`},
		},
	},
	{
		// A chain: the rename t -> a frees a's inode A, the removal of a
		// then frees t's inode T; /e/x reuses A and /e/y reuses T. Forcing
		// the rename (for A) brings T back under a, whose removal is then
		// forced (for T): neither old name survives, in any mode.
		name: "removals forced by a reused number are forced transitively",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/a", "old", true)
			writeFile(t, v, "/d/t", "mid", true)
			syncDir(t, v, "/d")
			oldA, _ := v.Stat("/d/a")
			oldT, _ := v.Stat("/d/t")
			must(t, v.Rename("/d/t", "/d/a"))
			must(t, v.Remove("/d/a"))
			writeFile(t, v, "/e/x", "x", true)
			writeFile(t, v, "/e/y", "y", true)
			syncDir(t, v, "/e")
			mustReuse(t, v, oldA, "/e/x")
			mustReuse(t, v, oldT, "/e/y")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly:     {`/d/ /e/ /e/x="x" /e/y="y"`},
			simfs.CrashMetadataPrefix: {`/d/ /e/ /e/x="x" /e/y="y"`},
			simfs.CrashRandomSubset:   {`/d/ /e/ /e/x="x" /e/y="y"`},
			simfs.CrashTornData:       {`/d/ /e/ /e/x="x" /e/y="y"`},
		},
	},
	{
		// The freed inode was renamed (same directory) before its removal:
		// the rename's removal of its old name is forced as well as the
		// removal of its new name.
		name: "a reused number forces the removal of a renamed file's old name",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/a", "old", true)
			syncDir(t, v, "/d")
			old, _ := v.Stat("/d/a")
			must(t, v.Rename("/d/a", "/d/b"))
			must(t, v.Remove("/d/b"))
			writeFile(t, v, "/e/c", "x", true)
			syncDir(t, v, "/e")
			mustReuse(t, v, old, "/e/c")
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly:     {`/d/ /e/ /e/c="x"`},
			simfs.CrashMetadataPrefix: {`/d/ /e/ /e/c="x"`},
			simfs.CrashRandomSubset:   {`/d/ /e/ /e/c="x"`},
			simfs.CrashTornData:       {`/d/ /e/ /e/c="x"`},
		},
	},
	{
		name: "synced state survives later pending work",
		setup: func(t *testing.T, f *simfs.FS, v lease.FS) {
			writeFile(t, v, "/d/keep", "k", true)
			syncDir(t, v, "/d")
			writeFile(t, v, "/e/tmp", "t", false)
			must(t, v.Link("/d/keep", "/e/k2"))
			must(t, v.Mkdir("/e/sub", 0o700))
		},
		want: map[simfs.CrashMode][]string{
			simfs.CrashSyncedOnly: {`/d/ /d/keep="k" /e/`},
		},
	},
}

func TestCrashGolden(t *testing.T) {
	for _, tc := range crashCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range append([]simfs.CrashMode{simfs.CrashProcess}, powerLossModes...) {
				want, ok := tc.want[mode]
				if !ok {
					continue
				}
				got := slices.Sorted(func(yield func(string) bool) {
					for s := range outcomes(t, mode, tc.setup) {
						if !yield(s) {
							return
						}
					}
				})
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s:\n got: %q\nwant: %q", mode, got, want)
				}
			}
		})
	}
}

// TestSyncedStateAlwaysSurvives enumerates every crash of every mode over a
// workload that mixes synced and pending work on the same directories, and
// checks the fully synced files keep their synced contents.
func TestSyncedStateAlwaysSurvives(t *testing.T) {
	setup := func(t *testing.T, f *simfs.FS, v lease.FS) {
		writeFile(t, v, "/d/keep", "k1", true)
		writeFile(t, v, "/e/keep", "k2", true)
		syncDir(t, v, "/d")
		syncDir(t, v, "/e")
		writeFile(t, v, "/d/keep", "changed", false) // O_TRUNC, unsynced
		writeFile(t, v, "/d/tmp", "t", false)
		must(t, v.Rename("/d/tmp", "/e/moved"))
		must(t, v.Link("/e/keep", "/d/k2"))
		must(t, v.Mkdir("/e/sub", 0o700))
	}
	for _, mode := range powerLossModes {
		for s := range outcomes(t, mode, setup) {
			if !strings.Contains(s, "/e/keep=\"k2\"") {
				t.Errorf("%s: synced /e/keep lost: %s", mode, s)
			}
			if !strings.Contains(s, "/d/keep=\"k1\"") && !strings.Contains(s, "/d/keep=\"changed\"") &&
				!(mode == simfs.CrashTornData && strings.Contains(s, "/d/keep=\"")) {
				t.Errorf("%s: /d/keep neither synced nor volatile: %s", mode, s)
			}
		}
	}
}

// TestFsyncEIOLosesData checks the Linux writeback-error semantics: the
// failed fsync marks the pages clean, the next fsync succeeds, and the data
// is lost at a power loss (in every mode and every choice sequence).
func TestFsyncEIOLosesData(t *testing.T) {
	setup := func(t *testing.T, f *simfs.FS, v lease.FS) {
		writeFile(t, v, "/d/a", "old", true)
		syncDir(t, v, "/d")
		fl, err := v.OpenFile("/d/a", lease.O_WRONLY|lease.O_TRUNC, 0)
		must(t, err)
		_, err = fl.Write([]byte("new"))
		must(t, err)
		if err := fl.Sync(); !errors.Is(err, syscall.EIO) {
			t.Fatalf("first sync: %v, want EIO", err)
		}
		must(t, fl.Sync())
		must(t, fl.Close())
		if got := readFile(t, v, "/d/a"); got != "new" {
			t.Fatalf("page cache lost data before the crash: %q", got)
		}
	}
	for _, mode := range powerLossModes {
		got := outcomes(t, mode, func(t *testing.T, f *simfs.FS, v lease.FS) {
			setInjector(f, simfs.Rules{{Errno: syscall.EIO, When: simfs.And(simfs.OnOp(simfs.OpSync), simfs.PathMatch("a"), simfs.OnIndex(1))}})
			setup(t, f, v)
		})
		if len(got) != 1 || !got[`/d/ /d/a="old" /e/`] {
			t.Errorf("%s: %v, want only the last synced data: the new data is lost", mode, got)
		}
	}
}

// TestTornDataSectors checks that torn data is always one of the tear
// outcomes over whole sectors of the new data (CRASHMODEL.md, "Torn data"):
// a prefix; a prefix and one zeroed sector; the new data cut at any byte of
// the next sector with the old data past the cut; and that every one of
// them, with both sector sizes, occurs.
func TestTornDataSectors(t *testing.T) {
	old := bytes.Repeat([]byte("o"), 1300)
	fresh := bytes.Repeat([]byte("n"), 1300)
	setup := func(t *testing.T, f *simfs.FS, v lease.FS) {
		writeFile(t, v, "/d/a", string(old), true)
		syncDir(t, v, "/d")
		fl, err := v.OpenFile("/d/a", lease.O_WRONLY, 0)
		must(t, err)
		_, err = fl.Write(fresh)
		must(t, err)
		must(t, fl.Close())
	}
	got := outcomes(t, simfs.CrashTornData, setup)
	want := map[string]bool{}
	add := func(data []byte) { want[`/d/ /d/a=`+strconv.Quote(string(data))+` /e/`] = true }
	for _, sector := range []int{512, 4096} {
		sectors := (len(fresh) + sector - 1) / sector
		for written := 0; written <= sectors; written++ {
			end := min(written*sector, len(fresh))
			add(append(slices.Clone(fresh[:end]), old[end:]...))
			if written == sectors {
				continue
			}
			next := min(end+sector, len(fresh))
			zeroed := append(slices.Clone(fresh[:end]), old[end:]...)
			clear(zeroed[end:next])
			add(zeroed)
			for cut := end; cut < next; cut++ {
				add(append(slices.Clone(fresh[:cut]), old[cut:]...))
			}
		}
	}
	for s := range got {
		if !want[s] {
			t.Errorf("illegal torn outcome (len %d)", len(s))
		}
	}
	for s := range want {
		if !got[s] {
			t.Errorf("legal torn outcome never reached (len %d)", len(s))
		}
	}
}

// TestTornRecordOutcomes is the tear model on what the engines write: a
// record shorter than a sector, written to a new file whose name a directory
// fsync made durable but whose data was never fsynced. Each outcome of the
// model is reachable, and nothing else: nothing landed (empty), all of it,
// the new size without the data (all zeros), and the new size with the
// record cut at every byte (a prefix, zeros after it).
func TestTornRecordOutcomes(t *testing.T) {
	const record = `{"id":7}`
	setup := func(t *testing.T, f *simfs.FS, v lease.FS) {
		writeFile(t, v, "/d/r", record, false)
		syncDir(t, v, "/d")
	}
	got := outcomes(t, simfs.CrashTornData, setup)
	cases := []struct {
		outcome string
		data    string
	}{
		{"nothing landed", ""},
		{"all of it", record},
		{"the size, no data", strings.Repeat("\x00", len(record))},
	}
	for cut := 1; cut < len(record); cut++ {
		cases = append(cases, struct {
			outcome string
			data    string
		}{"cut at byte " + strconv.Itoa(cut), record[:cut] + strings.Repeat("\x00", len(record)-cut)})
	}
	for _, c := range cases {
		s := `/d/ /d/r=` + strconv.Quote(c.data) + ` /e/`
		if !got[s] {
			t.Errorf("%s: %q never reached", c.outcome, c.data)
		}
		delete(got, s)
	}
	for s := range got {
		t.Errorf("outcome outside the tear model: %s", s)
	}
}

// TestSyncedFileNeverTorn: a file whose data was fsynced keeps exactly that
// data in every power-loss mode, whatever else is torn beside it, and a
// file fsynced after its last write is never torn even across sectors.
func TestSyncedFileNeverTorn(t *testing.T) {
	big := strings.Repeat("s", 1100) // three 512-byte sectors
	cases := []struct {
		name  string
		setup func(t *testing.T, v lease.FS)
	}{
		{"fsynced, name durable", func(t *testing.T, v lease.FS) {
			writeFile(t, v, "/d/s", big, true)
			syncDir(t, v, "/d")
		}},
		{"fsynced beside an unsynced file", func(t *testing.T, v lease.FS) {
			writeFile(t, v, "/d/s", big, true)
			writeFile(t, v, "/d/u", strings.Repeat("u", 600), false)
			syncDir(t, v, "/d")
		}},
		{"rewritten in place, then fsynced", func(t *testing.T, v lease.FS) {
			writeFile(t, v, "/d/s", strings.Repeat("o", 1100), true)
			syncDir(t, v, "/d")
			writeFile(t, v, "/d/s", big, true)
		}},
	}
	for _, c := range cases {
		for _, mode := range powerLossModes {
			for s := range outcomes(t, mode, func(t *testing.T, f *simfs.FS, v lease.FS) { c.setup(t, v) }) {
				if !strings.Contains(s, `/d/s=`+strconv.Quote(big)) {
					t.Errorf("%s, %s: the fsynced file is not its synced data: %.80s...", c.name, mode, s)
				}
			}
		}
	}
}

// mustReuse fails the setup unless the file at p carries old's inode number.
func mustReuse(t *testing.T, v lease.FS, old lease.FileInfo, p string) {
	t.Helper()
	info, err := v.Lstat(p)
	must(t, err)
	if info.Ino != old.Ino {
		t.Fatalf("setup: %s is inode %d, not the reused number %d", p, info.Ino, old.Ino)
	}
}

func setInjector(f *simfs.FS, in simfs.Injector) { simfs.SetInjector(f, in) }
