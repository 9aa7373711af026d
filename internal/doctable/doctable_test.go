package doctable

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

const sample = "# Title\n\nprose\n\n<!-- table:demo:begin -->\n| a |\n|---|\n| 1 |\n<!-- table:demo:end -->\n\nafter\n"

func TestExtractAndReplaceTheBlock(t *testing.T) {
	got, err := Extract(sample, "demo")
	require.NoError(t, err)
	require.Equal(t, "| a |\n|---|\n| 1 |\n", got)
	updated, err := Replace(sample, "demo", "| a |\n|---|\n| 2 |")
	require.NoError(t, err)
	require.Equal(t, "# Title\n\nprose\n\n<!-- table:demo:begin -->\n| a |\n|---|\n| 2 |\n<!-- table:demo:end -->\n\nafter\n", updated)
}

func TestMissingOrRepeatedMarkersAreErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"none":     "# nothing\n",
		"no end":   "<!-- table:demo:begin -->\n| a |\n",
		"twice":    sample + sample,
		"reversed": "<!-- table:demo:end -->\n| a |\n<!-- table:demo:begin -->\n",
	} {
		_, err := Extract(doc, "demo")
		require.ErrorIs(t, err, ErrNoBlock, name)
	}
}

func TestSyncFailsOnAHandEditAndUpdateRewritesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	require.NoError(t, os.WriteFile(path, []byte(sample), 0o644))
	require.NoError(t, Sync(path, "demo", "| a |\n|---|\n| 1 |\n", false))
	err := Sync(path, "demo", "| a |\n|---|\n| 2 |\n", false)
	require.ErrorContains(t, err, "line 3 of the block is\n\t| 1 |\nbut the command prints\n\t| 2 |")
	require.NoError(t, Sync(path, "demo", "| a |\n|---|\n| 2 |\n", true))
	require.NoError(t, Sync(path, "demo", "| a |\n|---|\n| 2 |\n", false))
}
