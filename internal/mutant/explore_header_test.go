package mutant

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseExploreHeaderKeepsFlags: the optional explore: header keeps the
// explore hunt's flags verbatim, and a mutant without it has none.
func TestParseExploreHeaderKeepsFlags(t *testing.T) {
	m, err := Parse("deep", "file: lease/cleanup.go\nsearch: explore\nexplore: --procs 3 --crashes 1 --choices-max 2\n--- old\na\n--- new\nb\n--- end\n")
	require.NoError(t, err)
	require.Equal(t, "explore", m.Search)
	require.Equal(t, "--procs 3 --crashes 1 --choices-max 2", m.Explore)
	m, err = Parse("plain", "file: lease/cleanup.go\n--- old\na\n--- new\nb\n--- end\n")
	require.NoError(t, err)
	require.Empty(t, m.Explore)
	_, err = Parse("typo", "file: lease/cleanup.go\nexplorer: --procs 3\n--- old\na\n--- new\nb\n--- end\n")
	require.ErrorContains(t, err, "explore)")
}
