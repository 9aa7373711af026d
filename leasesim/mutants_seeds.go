package leasesim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leasekit/leasekit/campaign"
)

// saveMutantSeed writes a found mutant's shrunk failure as its checked-in
// seed (`mutants --save-seeds DIR`: DIR/<mutant>/<engine>/<name>.seed,
// campaign/testdata/mutant-seeds in this repository), then removes the
// mutant's other seed files there, which the new one replaces. This is how
// a mutant seed that drifted under a code change is re-derived: the hunt
// runs on the current code, so its seed replays without drift under the
// mutant. It returns the new file's path ("" when there is nothing to
// save: not found, confounded, or not shrunk).
func saveMutantSeed(dir string, row MutantRow) (string, error) {
	if dir == "" || !row.Hunt.Found || row.Hunt.ShrunkSeed == "" || row.Error != "" {
		return "", nil
	}
	file, err := campaign.ParseSeedFile([]byte(row.Hunt.ShrunkSeed))
	if err != nil {
		return "", fmt.Errorf("mutant %s: the hunt's shrunk seed does not parse: %w", row.Name, err)
	}
	mutantDir := filepath.Join(dir, row.Name)
	path := filepath.Join(mutantDir, file.Spec.Engine, file.Name())
	text := strings.TrimRight(row.Hunt.ShrunkSeed, "\n") + "\n# replay (under the mutant): go run -overlay OVERLAY.json ./cmd/leasesim replay " + filepath.ToSlash(path) + "\n"
	if err := writeFileAtomic(path, []byte(text)); err != nil {
		return "", err
	}
	return path, removeOtherSeeds(mutantDir, path)
}

// writeFileAtomic writes data to path through a temporary file renamed
// over it, so an interrupted run leaves the old seed or the new one.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	temp := path + ".tmp"
	if err := os.WriteFile(temp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(temp, path)
}

// removeOtherSeeds removes the seed files under dir/<engine>/ except keep.
func removeOtherSeeds(dir, keep string) error {
	old, err := filepath.Glob(filepath.Join(dir, "*", "*.seed"))
	if err != nil {
		return err
	}
	for _, path := range old {
		if path != keep {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}
