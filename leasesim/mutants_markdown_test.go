package leasesim

import (
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/internal/doctable"
)

// TestMutantsDocMatchesTheCatalog: docs/MUTANTS.md's catalog table is what
// the catalog and its stored seeds render to on the committed code: every
// mutant, its engines, file and search, and its stored seed's engine,
// finding, choices and steps. LEASEKIT_DOCS_UPDATE=1 rewrites it.
func TestMutantsDocMatchesTheCatalog(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	table, err := mutantsMarkdown(root)
	require.NoError(t, err)
	require.NoError(t, doctable.Sync(filepath.Join(root, "docs/MUTANTS.md"), MutantsTable, table, doctable.UpdateRequested()))
}
