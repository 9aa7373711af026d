package statefile_test

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
)

func TestCanonicalGolden(t *testing.T) {
	type record struct {
		Zeta  string         `json:"zeta"`
		Alpha []any          `json:"alpha"`
		Big   uint64         `json:"big"`
		Inner map[string]any `json:"inner"`
		Null  *string        `json:"null"`
	}
	value := record{
		Zeta:  "<a & b>",
		Alpha: []any{1.5, "é", true},
		Big:   math.MaxUint64,
		Inner: map[string]any{"b": 2, "B": 1, "a": map[string]any{"y": nil, "x": -3}},
	}
	want := `{"alpha":[1.5,"é",true],"big":18446744073709551615,"inner":{"B":1,"a":{"x":-3,"y":null},"b":2},` +
		`"null":null,"zeta":"<a & b>"}` + "\n"
	for range 3 {
		got, err := statefile.Canonical(value)
		require.NoError(t, err)
		require.Equal(t, want, string(got), "keys sorted bytewise, no HTML escaping, numbers exact")
	}
	require.Equal(t, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb", statefile.SHA256Hex([]byte("a")))
	_, err := statefile.Canonical(map[string]any{"f": func() {}})
	require.Error(t, err)
	require.Panics(t, func() { statefile.MustCanonical(math.NaN()) })
}

func TestDecodeObjectIsStrict(t *testing.T) {
	required, optional := []string{"name", "count"}, []string{"note"}
	cases := []struct {
		name, input, problem string
	}{
		{"unknown field", `{"name":"a","count":1,"extra":2,"more":3}`, "unknown fields: extra, more"},
		{"missing field", `{"name":"a"}`, `missing field "count"`},
		{"duplicate field", `{"name":"a","count":1,"name":"b"}`, `duplicate field "name"`},
		{"trailing data", `{"name":"a","count":1} {}`, "trailing data"},
		{"trailing garbage", `{"name":"a","count":1}x`, "trailing data"},
		{"array", `["name"]`, "must be a JSON object"},
		{"null", `null`, "must be a JSON object"},
		{"truncated", `{"name":"a","cou`, "not valid JSON"},
		{"empty", ``, "not valid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := statefile.DecodeObject([]byte(tc.input), "test record", required, optional)
			var schemaErr *statefile.SchemaError
			require.ErrorAs(t, err, &schemaErr)
			require.Equal(t, "test record", schemaErr.Record)
			require.Contains(t, schemaErr.Problem, tc.problem)
		})
	}
	object, err := statefile.DecodeObject([]byte(`{"name":"a","count":3,"note":null}`+"\n"), "r", required, optional)
	require.NoError(t, err)
	require.Equal(t, "a", object.NonEmptyString("name"))
	require.Equal(t, int64(3), object.Int("count", 0, 10))
	note, ok := object.NullableString("note")
	require.False(t, ok)
	require.Empty(t, note)
	require.True(t, object.Has("note"))
	require.NoError(t, object.Err())
}

func TestObjectGettersRejectWrongTypes(t *testing.T) {
	cases := []struct {
		name, input string
		get         func(*statefile.Object)
		problem     string
	}{
		{"string as number", `{"v":"12"}`, func(o *statefile.Object) { o.Int("v", 0, 100) }, "v must be a number"},
		{"fraction", `{"v":1.5}`, func(o *statefile.Object) { o.Int("v", 0, 100) }, "integer in [0, 100]"},
		{"out of range", `{"v":101}`, func(o *statefile.Object) { o.Int("v", 0, 100) }, "integer in [0, 100]"},
		{"negative uint", `{"v":-1}`, func(o *statefile.Object) { o.Uint("v") }, "integer in"},
		{"number as string", `{"v":12}`, func(o *statefile.Object) { o.String("v") }, "v must be a string"},
		{"empty string", `{"v":""}`, func(o *statefile.Object) { o.NonEmptyString("v") }, "non-empty string"},
		{"empty nullable", `{"v":""}`, func(o *statefile.Object) { o.NullableString("v") }, "null or a non-empty"},
		{"bool as string", `{"v":true}`, func(o *statefile.Object) { o.String("v") }, "must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			object, err := statefile.DecodeObject([]byte(tc.input), "r", []string{"v"}, nil)
			require.NoError(t, err)
			tc.get(object)
			require.ErrorContains(t, object.Err(), tc.problem)
			object.Fail("a later problem")
			require.NotContains(t, object.Err().Error(), "later", "the first problem wins")
		})
	}
}

func newDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return dir
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, entry := range entries {
		out = append(out, entry.Name())
	}
	sort.Strings(out)
	return out
}

func TestReadFileRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	fsys := osenv.NewFS()
	dir := newDir(t)
	regular := filepath.Join(dir, "regular")
	require.NoError(t, os.WriteFile(regular, []byte("0123456789"), 0o600))
	require.NoError(t, os.Symlink(regular, filepath.Join(dir, "link")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir"), 0o700))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))

	data, err := statefile.ReadFile(fsys, regular, 10)
	require.NoError(t, err)
	require.Equal(t, "0123456789", string(data), "exactly at the bound is fine")

	_, err = statefile.ReadFile(fsys, regular, 9)
	var tooLarge *statefile.TooLargeError
	require.ErrorAs(t, err, &tooLarge)
	require.Equal(t, int64(10), tooLarge.Size)

	for _, name := range []string{"link", "dir", "fifo"} {
		_, err := statefile.ReadFile(fsys, filepath.Join(dir, name), 100)
		var notRegular *statefile.NotRegularError
		require.ErrorAs(t, err, &notRegular, name)
		require.Contains(t, err.Error(), name)
	}
	_, err = statefile.ReadFile(fsys, filepath.Join(dir, "missing"), 100)
	require.ErrorIs(t, err, fs.ErrNotExist)
	var pathErr *fs.PathError
	require.ErrorAs(t, err, &pathErr)
	require.Panics(t, func() { _, _ = statefile.ReadFile(fsys, regular, 0) })
}

func TestCreateOnlyPublishesOnceAndLeavesNoTemp(t *testing.T) {
	fsys := osenv.NewFS()
	ids := leasetest.NewIDs()
	dir := newDir(t)
	name := filepath.Join(dir, "state.json")
	require.NoError(t, statefile.CreateOnly(fsys, ids, name, "t", []byte("first\n")))
	err := statefile.CreateOnly(fsys, ids, name, "t", []byte("second\n"))
	require.ErrorIs(t, err, fs.ErrExist)
	require.ErrorIs(t, err, syscall.EEXIST)
	data, readErr := os.ReadFile(name)
	require.NoError(t, readErr)
	require.Equal(t, "first\n", string(data), "the old file is kept")
	require.Equal(t, []string{"state.json"}, names(t, dir), "no temp is left behind")
	info, statErr := os.Stat(name)
	require.NoError(t, statErr)
	require.Equal(t, statefile.FileMode, info.Mode().Perm())
}

// TestCreateOnlyFallsBackToLinkWithoutRenameNoReplace runs the link+unlink
// path a kernel without renameat2 takes.
func TestCreateOnlyFallsBackToLinkWithoutRenameNoReplace(t *testing.T) {
	hooked := leasetest.NewHookFS(osenv.NewFS())
	hooked.Before(func(op leasetest.Op) error {
		if op.Name == "RenameNoReplace" {
			return &os.LinkError{Op: "renameat2", Old: op.Paths[0], New: op.Paths[1], Err: syscall.ENOSYS}
		}
		return nil
	})
	ids := leasetest.NewIDs()
	dir := newDir(t)
	name := filepath.Join(dir, "state.json")
	require.NoError(t, statefile.CreateOnly(hooked, ids, name, "t", []byte("first\n")))
	err := statefile.CreateOnly(hooked, ids, name, "t", []byte("second\n"))
	require.ErrorIs(t, err, fs.ErrExist)
	require.Equal(t, []string{"state.json"}, names(t, dir))
	data, readErr := os.ReadFile(name)
	require.NoError(t, readErr)
	require.Equal(t, "first\n", string(data))
	info, statErr := os.Stat(name)
	require.NoError(t, statErr)
	require.Equal(t, uint64(1), info.Sys().(*syscall.Stat_t).Nlink, "the temp name was unlinked")
}

func TestReplaceAtomicReplacesAndSyncs(t *testing.T) {
	hooked := leasetest.NewHookFS(osenv.NewFS())
	ids := leasetest.NewIDs()
	dir := newDir(t)
	name := filepath.Join(dir, "state.json")
	require.NoError(t, statefile.ReplaceAtomic(hooked, ids, name, "t", []byte("one\n")))
	require.NoError(t, statefile.ReplaceAtomic(hooked, ids, name, "t", []byte("two\n")))
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, "two\n", string(data))
	require.Equal(t, []string{"state.json"}, names(t, dir))
	ops := hooked.Ops()
	require.NoError(t, leasetest.SyncedAfter(ops, "Rename", name, dir), "the directory is fsynced after the rename")
	var tempSynced bool
	for _, op := range ops {
		if op.Name == "Rename" {
			break
		}
		tempSynced = tempSynced || (op.Name == "Sync" && filepath.Dir(op.Paths[0]) == dir && op.Paths[0] != dir)
	}
	require.True(t, tempSynced, "the temp's data is fsynced BEFORE the rename")
}

func TestWriteTempNamesTheTagAndFailsCleanly(t *testing.T) {
	fsys := osenv.NewFS()
	ids := leasetest.NewIDs()
	dir := newDir(t)
	name, err := statefile.WriteTemp(fsys, ids, dir, "owner", []byte("x"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, ".tmp-owner-00000000-0000-4000-8000-000000000001"), name)

	_, err = statefile.WriteTemp(fsys, ids, filepath.Join(dir, "missing"), "owner", []byte("x"))
	require.ErrorIs(t, err, fs.ErrNotExist)

	hooked := leasetest.NewHookFS(fsys)
	hooked.Before(func(op leasetest.Op) error {
		if op.Name == "Sync" {
			return &fs.PathError{Op: "fsync", Path: op.Paths[0], Err: syscall.EIO}
		}
		return nil
	})
	_, err = statefile.WriteTemp(hooked, ids, dir, "owner", []byte("y"))
	require.ErrorIs(t, err, syscall.EIO)
	require.Equal(t, []string{filepath.Base(name)}, names(t, dir), "a failed temp is removed")
}

func TestSyncDirRefusesAFile(t *testing.T) {
	fsys := osenv.NewFS()
	dir := newDir(t)
	require.NoError(t, statefile.SyncDir(fsys, dir))
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	err := statefile.SyncDir(fsys, file)
	require.True(t, errors.Is(err, syscall.ENOTDIR), "got %v", err)
}

// ReplaceAtomicAll writes and fsyncs every temp before the first rename,
// renames in the order given, and fsyncs the directory once. A failed step
// leaves each name with its old file and no temp behind.
func TestReplaceAtomicAll(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failOp   string
		failNth  int
		want     map[string]string
		wantSync int
	}{
		{name: "both replaced", want: map[string]string{"a.json": "new\n", "b.json": "new\n"}, wantSync: 3},
		{name: "second temp fails", failOp: "OpenFile", failNth: 2, want: map[string]string{"a.json": "old\n", "b.json": "old\n"}},
		{name: "second rename fails", failOp: "Rename", failNth: 2, want: map[string]string{"a.json": "new\n", "b.json": "old\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newDir(t)
			for _, name := range []string{"a.json", "b.json"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("old\n"), 0o600))
			}
			hooked := leasetest.NewHookFS(osenv.NewFS())
			seen := map[string]int{}
			hooked.Before(func(op leasetest.Op) error {
				seen[op.Name]++
				if op.Name == tc.failOp && seen[op.Name] == tc.failNth {
					return errors.New("planted failure")
				}
				return nil
			})
			err := statefile.ReplaceAtomicAll(hooked, leasetest.NewIDs(), "t",
				statefile.Replacement{Name: filepath.Join(dir, "a.json"), Data: []byte("new\n")},
				statefile.Replacement{Name: filepath.Join(dir, "b.json"), Data: []byte("new\n")})
			require.Equal(t, tc.failOp != "", err != nil, "%v", err)
			require.Equal(t, []string{"a.json", "b.json"}, names(t, dir), "no temp is left behind")
			for name, want := range tc.want {
				data, readErr := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, readErr)
				require.Equal(t, want, string(data), name)
			}
			if tc.failOp != "" {
				return
			}
			var syncs, firstRename int
			for i, op := range hooked.Ops() {
				if op.Name == "Sync" {
					syncs++
					require.True(t, firstRename == 0 || op.Paths[0] == dir, "only the directory is fsynced after a rename: %v", op)
				}
				if op.Name == "Rename" && firstRename == 0 {
					firstRename = i
					require.Equal(t, 2, syncs, "both temps are fsynced before the first rename")
					require.Equal(t, filepath.Join(dir, "a.json"), op.Paths[1], "renamed in the order given")
				}
			}
			require.Equal(t, tc.wantSync, syncs, "two temps and one directory")
		})
	}
	require.Panics(t, func() {
		_ = statefile.ReplaceAtomicAll(osenv.NewFS(), leasetest.NewIDs(), "t",
			statefile.Replacement{Name: "/a/x"}, statefile.Replacement{Name: "/b/y"})
	}, "one directory only")
}
