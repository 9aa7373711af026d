package mutant

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, text, engines, err string
	}{
		{"plain", "file: lease/identity.go\n--- old\na\n--- new\nb\n--- end\n", "lease", ""},
		{"engines", "file: internal/statefile/file.go\nengine: lease, admission\nbug: x\n--- old\na\n--- new\nb\n--- end\n", "lease,admission", ""},
		{"helper", "file: internal/statecas/cas.go\n--- old\na\n--- new\nb\n--- end\n", "all", ""},
		{"no end", "file: a.go\n--- old\na\n--- new\nb\n", "", "sections"},
		{"unknown header", "file: a.go\nwho: me\n--- old\na\n--- new\nb\n--- end\n", "", "header line"},
		{"no file", "bug: x\n--- old\na\n--- new\nb\n--- end\n", "", "no file"},
		{"equivalent", "file: lease/acquire.go\nequivalent: why\n--- old\na\n--- new\nb\n--- end\n", "lease", ""},
		{"comment", "file: internal/statecas/claim.go\nengine: admission\n# engine: dirlease missed it: why\n--- old\na\n--- new\nb\n--- end\n", "admission", ""},
	}
	for _, c := range cases {
		m, err := Parse(c.name, c.text)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		require.Equal(t, c.engines, strings.Join(m.Engines, ","), c.name)
		require.Equal(t, "a\n", m.Old, c.name)
		require.Equal(t, "b\n", m.New, c.name)
		require.Equal(t, c.name == "equivalent", m.Equivalent == "why", c.name)
	}
}

// TestParseExploreFlags: the explore: header is kept verbatim (trimmed),
// and the unknown-key error lists it.
func TestParseExploreFlags(t *testing.T) {
	m, err := Parse("x", "file: lease/acquire.go\nsearch: explore\nexplore:  --procs 3 --crashes 1 --choices-max 2 \n--- old\na\n--- new\nb\n--- end\n")
	require.NoError(t, err)
	require.Equal(t, "--procs 3 --crashes 1 --choices-max 2", m.Explore)
	require.Equal(t, "explore", m.Search)
	m, err = Parse("plain", "file: lease/cleanup.go\n--- old\na\n--- new\nb\n--- end\n")
	require.NoError(t, err)
	require.Empty(t, m.Explore)
	_, err = Parse("y", "file: a.go\nexplorer: --procs 3\n--- old\na\n--- new\nb\n--- end\n")
	require.ErrorContains(t, err, "search, explore, test)")
}

// TestParseTestLine: a test: line names a package and one test, and gives
// the go test arguments that run that test alone under the overlay.
func TestParseTestLine(t *testing.T) {
	m, err := Parse("x", "file: lease/validate.go\ntest: ./lease TestHostile\n--- old\na\n--- new\nb\n--- end\n")
	require.NoError(t, err)
	require.Equal(t, []string{"test", "-count=1", "-run", "^TestHostile$", "./lease"}, m.TestCommand())
	_, err = Parse("y", "file: a.go\ntest: TestHostile\n--- old\na\n--- new\nb\n--- end\n")
	require.ErrorContains(t, err, "PACKAGE TESTNAME")
	require.Nil(t, Mutation{}.TestCommand())
}

func TestApplyRefusesAStaleOrAmbiguousBlock(t *testing.T) {
	m := Mutation{Name: "m", File: "f.go", Old: "x := 1\n", New: "x := 2\n"}
	got, err := m.Apply("a\nx := 1\nb\n")
	require.NoError(t, err)
	require.Equal(t, "a\nx := 2\nb\n", got)
	for _, source := range []string{"a\nb\n", "x := 1\nx := 1\n"} {
		_, err := m.Apply(source)
		require.True(t, errors.Is(err, ErrStale), "%q: %v", source, err)
	}
}

// TestCatalogAppliesToTheCurrentCode: every mutant's old block is exactly
// once in its file today, and every mutant says what mistake it models.
func TestCatalogAppliesToTheCurrentCode(t *testing.T) {
	root := filepath.Join("..", "..")
	names, err := Names(root)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(names), 20)
	for _, name := range names {
		m, err := Load(root, name)
		require.NoError(t, err)
		require.NotEmpty(t, m.Bug, "mutant %s has no bug: line", name)
		dir := t.TempDir()
		overlay, err := m.WriteOverlay(root, dir)
		require.NoError(t, err, name)
		_, err = os.Stat(overlay)
		require.NoError(t, err)
	}
}
