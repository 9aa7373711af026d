package leasesim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leasekit/leasekit/campaign"
)

// saveMutantSeed writes a found mutant's shrunk failure as its checked-in
// seed for the engine that found it (`mutants --save-seeds DIR`:
// DIR/<mutant>/<engine>/<name>.seed, campaign/testdata/mutant-seeds in this
// repository), then removes the mutant's other seed files of that engine,
// which the new one replaces; the seeds of its other engines are kept, so
// re-hunting one engine (a mutant's engine line narrowed by hand, or a hunt
// that missed there) never drops another engine's proof. This is how a
// mutant seed that drifted under a code change is re-derived: the hunt runs
// on the current code, so its seed replays without drift under the mutant.
// It returns the new file's path ("" when there is nothing to save: not
// found, confounded, or not shrunk).
func saveMutantSeed(dir string, row MutantRow) (string, error) {
	if dir == "" || !row.Hunt.Found || row.Hunt.ShrunkSeed == "" || row.Error != "" {
		return "", nil
	}
	file, err := campaign.ParseSeedFile([]byte(row.Hunt.ShrunkSeed))
	if err != nil {
		return "", fmt.Errorf("mutant %s: the hunt's shrunk seed does not parse: %w", row.Name, err)
	}
	path := filepath.Join(dir, row.Name, file.Spec.Engine, file.Name())
	text := strings.TrimRight(row.Hunt.ShrunkSeed, "\n") + "\n# replay (under the mutant): go run -overlay OVERLAY.json ./cmd/leasesim replay " + filepath.ToSlash(path) + "\n"
	if err := writeFileAtomic(path, []byte(text)); err != nil {
		return "", err
	}
	return path, removeOtherSeeds(filepath.Dir(path), path)
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

// removeOtherSeeds removes the seed files in dir (one engine's) except keep.
func removeOtherSeeds(dir, keep string) error {
	old, err := filepath.Glob(filepath.Join(dir, "*.seed"))
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
