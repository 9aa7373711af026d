package campaign

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// Corpus is a guided search's kept inputs, per engine: each a complete run
// input (a Spec with its recorded decision list), kept because its run
// reached coverage no earlier run had. On disk (Save, LoadCorpus) it is a
// directory of seed files, DIR/<engine>/ok-<hash>.seed (the seed file
// format, found=ok), so `leasesim replay` reruns any entry, shards' corpora
// merge by copying files (MergeCorpus), and CI resumes a corpus committed
// under testdata/corpus.
type Corpus struct {
	entries map[string][]Spec
	// keys holds a hash of each engine's entries (inputKey), so Add
	// ignores an input already present.
	keys map[string]map[uint64]bool
}

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus {
	return &Corpus{entries: map[string][]Spec{}, keys: map[string]map[uint64]bool{}}
}

// Add keeps spec (its Decisions, Tags and Keys the run's whole recorded
// list) and reports whether it was new.
func (c *Corpus) Add(spec Spec) bool {
	spec.ThenDraw = false
	key := inputKey(spec)
	if c.keys[spec.Engine] == nil {
		c.keys[spec.Engine] = map[uint64]bool{}
	}
	if c.keys[spec.Engine][key] {
		return false
	}
	c.keys[spec.Engine][key] = true
	c.entries[spec.Engine] = append(c.entries[spec.Engine], spec)
	return true
}

// inputKey hashes what a corpus entry's run depends on: the knobs, the
// decisions and their streams (cheaper than the file name, which formats
// the whole list).
func inputKey(spec Spec) uint64 {
	h := streamSalt(strings.Join(spec.knobLines(), "\n") + strings.Join(spec.Keys, ","))
	for i, v := range spec.Decisions {
		h = (h ^ uint64(v)) * 0x100000001b3
		if spec.Tags != nil {
			h = (h ^ uint64(spec.Tags[i])<<32) * 0x100000001b3
		}
	}
	return h
}

// Entries returns the engine's entries in the order they were added.
func (c *Corpus) Entries(engine string) []Spec { return c.entries[engine] }

// Len counts every engine's entries.
func (c *Corpus) Len() int {
	n := 0
	for _, list := range c.entries {
		n += len(list)
	}
	return n
}

func corpusName(spec Spec) string {
	return SeedFile{Spec: spec, Expect: Finding{Outcome: sim.OutcomeOK}}.Name()
}

// Save writes every entry as DIR/<engine>/<name>.seed (existing files stay:
// saving into a shared directory unions it) and returns how many files it
// wrote.
func (c *Corpus) Save(dir string) (int, error) {
	written := 0
	engines := make([]string, 0, len(c.entries))
	for engine := range c.entries {
		engines = append(engines, engine)
	}
	sort.Strings(engines)
	for _, engine := range engines {
		for _, spec := range c.entries[engine] {
			path := filepath.Join(dir, engine, corpusName(spec))
			if _, err := os.Stat(path); err == nil {
				continue
			}
			if _, err := WriteSeedFile(dir, SeedFile{Spec: spec, Expect: Finding{Outcome: sim.OutcomeOK}}); err != nil {
				return written, err
			}
			written++
		}
	}
	return written, nil
}

// LoadCorpus reads DIR/<engine>/*.seed for each engine (a missing directory
// is an empty corpus), in file-name order, so a loaded corpus is the same
// on every machine.
func LoadCorpus(dir string, engines []string) (*Corpus, error) {
	c := NewCorpus()
	for _, engine := range engines {
		paths, err := filepath.Glob(filepath.Join(dir, engine, "*.seed"))
		if err != nil {
			return nil, err
		}
		slices.Sort(paths)
		for _, path := range paths {
			file, err := ReadSeedFile(path)
			if err != nil {
				return nil, err
			}
			if file.Spec.Engine != engine {
				return nil, fmt.Errorf("%s: a seed file of engine %s in the corpus of %s", path, file.Spec.Engine, engine)
			}
			c.Add(file.Spec)
		}
	}
	return c, nil
}

// MergeCorpus unions the corpus directories sources into dst (files are
// named by their input, so the same entry from two shards is one file) and
// returns how many entries it added.
func MergeCorpus(dst string, sources ...string) (int, error) {
	added := 0
	for _, source := range sources {
		engines, err := os.ReadDir(source)
		if err != nil {
			return added, err
		}
		var names []string
		for _, engine := range engines {
			if engine.IsDir() && !strings.HasPrefix(engine.Name(), ".") {
				names = append(names, engine.Name())
			}
		}
		c, err := LoadCorpus(source, names)
		if err != nil {
			return added, err
		}
		n, err := c.Save(dst)
		added += n
		if err != nil {
			return added, err
		}
	}
	return added, nil
}
