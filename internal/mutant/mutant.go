// Package mutant reads and applies leasekit's planted bugs: mutants/<name>/
// mutation.txt names one source file, an exact old block and its new
// replacement (see mutants/README.md). Applying writes a mutated copy of the
// file and a `go build -overlay` JSON mapping the original to it, so the
// shipped code is never touched; an old block that is not exactly once in
// the current file is an error, so a mutant never silently tests stale code.
package mutant

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Mutation is one planted bug.
type Mutation struct {
	// Name is the mutant's directory name under mutants/.
	Name string
	// File is the mutated file, relative to the repository root.
	File string
	// Engines are the campaign engines that exercise File (the "engine:"
	// header, or derived from File's directory).
	Engines []string
	// Bug is the one-line description of the real-world mistake.
	Bug string
	// Faults, when set ("faults:" header, e.g. "swarm,eacces=0.05"), is
	// the fault setting the mutant's hunt uses instead of the default.
	Faults string
	// Equivalent, when set ("equivalent:" header), says why no sound
	// checker can tell the mutant from the real code under the simulator's
	// fault model: `leasesim mutants` lists it without hunting it (unless
	// --only names it) and does not count it as missed.
	Equivalent string
	// Search, when set ("search:" header: random, guided or explore), is
	// the search `leasesim mutants` hunts the mutant with (default random).
	Search string
	// Explore, when set ("explore:" header, e.g. "--procs 3 --crashes 1
	// --choices-max 2"), gives the explore flags of the mutant's explore
	// hunt (default: its engines' default scenario bounds).
	Explore string
	// Test, when set ("test: PKG TESTNAME", e.g. "test: ./lease
	// TestHostileArgumentsAreRefusedBeforeAnyWrite"), names the go test
	// that fails under the mutant: a rule in code no campaign runs (a
	// checker, a model, a refusal no workload reaches yet) is still
	// verified, by that test. `leasesim mutants` reports such a mutant as
	// found by go test when its hunt misses it.
	Test string
	// Old is the exact block replaced by New.
	Old, New string
}

// ErrStale means the mutant's old block is not exactly once in its file:
// the code changed and the mutant must be re-anchored.
var ErrStale = errors.New("mutant: old block is not exactly once in the file; the code changed, update the mutant")

// Parse parses a mutation.txt: header lines ("file: PATH", optional
// "engine: a,b", "bug: TEXT", "faults: SETTING", "equivalent: WHY",
// "search: SEARCH", "explore: FLAGS" and "test: PKG TESTNAME"; "#" starts
// a comment line, e.g. why an engine is not on the engine: line), then
// "--- old", "--- new", "--- end".
func Parse(name, text string) (Mutation, error) {
	header, rest, ok := strings.Cut(text, "\n--- old\n")
	old, rest2, ok2 := strings.Cut(rest, "--- new\n")
	replacement, _, ok3 := strings.Cut(rest2, "--- end")
	if !ok || !ok2 || !ok3 {
		return Mutation{}, fmt.Errorf("mutant %s: want header lines, then '--- old', '--- new', '--- end' sections", name)
	}
	m := Mutation{Name: name, Old: old, New: replacement}
	for _, line := range strings.Split(header, "\n") {
		key, value, ok := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		switch {
		case strings.TrimSpace(line) == "", strings.HasPrefix(line, "#"):
		case ok && key == "file":
			m.File = value
		case ok && key == "engine":
			for _, e := range strings.Split(value, ",") {
				m.Engines = append(m.Engines, strings.TrimSpace(e))
			}
		case ok && key == "bug":
			m.Bug = value
		case ok && key == "faults":
			m.Faults = value
		case ok && key == "equivalent":
			m.Equivalent = value
		case ok && key == "search":
			m.Search = value
		case ok && key == "explore":
			m.Explore = value
		case ok && key == "test":
			if len(strings.Fields(value)) != 2 {
				return Mutation{}, fmt.Errorf("mutant %s: test: line %q is not 'PACKAGE TESTNAME'", name, value)
			}
			m.Test = value
		default:
			return Mutation{}, fmt.Errorf("mutant %s: header line %q has no known key (file, engine, bug, faults, equivalent, search, explore, test)", name, line)
		}
	}
	if m.File == "" || m.Old == "" {
		return Mutation{}, fmt.Errorf("mutant %s: no file: line or an empty old block", name)
	}
	if len(m.Engines) == 0 {
		m.Engines = []string{defaultEngine(m.File)}
	}
	return m, nil
}

// defaultEngine is the engine whose package holds file.
func defaultEngine(file string) string {
	switch dir := strings.Split(path.Clean(filepath.ToSlash(file)), "/")[0]; dir {
	case "lease", "admission", "dirlease":
		return dir
	case "campaign":
		return "selftest"
	}
	return "all"
}

// Load reads root/mutants/name/mutation.txt.
func Load(root, name string) (Mutation, error) {
	data, err := os.ReadFile(filepath.Join(root, "mutants", name, "mutation.txt"))
	if err != nil {
		return Mutation{}, err
	}
	return Parse(name, string(data))
}

// Names lists the mutants under root/mutants, sorted.
func Names(root string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(root, "mutants", "*", "mutation.txt"))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		names = append(names, filepath.Base(filepath.Dir(p)))
	}
	sort.Strings(names)
	return names, nil
}

// TestCommand returns the go test arguments of the mutant's test: line
// (nil without one): the package and a -run pattern matching that test
// and its subtests only.
func (m Mutation) TestCommand() []string {
	fields := strings.Fields(m.Test)
	if len(fields) != 2 {
		return nil
	}
	return []string{"test", "-count=1", "-run", "^" + fields[1] + "$", fields[0]}
}

// Apply returns source with the old block replaced, or ErrStale.
func (m Mutation) Apply(source string) (string, error) {
	if strings.Count(source, m.Old) != 1 {
		return "", fmt.Errorf("mutant %s (%s): %w", m.Name, m.File, ErrStale)
	}
	return strings.Replace(source, m.Old, m.New, 1), nil
}

// WriteOverlay writes the mutated copy of m.File (read under root) into
// dir, and a go -overlay JSON mapping the original to it; it returns the
// JSON's path.
func (m Mutation) WriteOverlay(root, dir string) (string, error) {
	original, err := filepath.Abs(filepath.Join(root, m.File))
	if err != nil {
		return "", err
	}
	source, err := os.ReadFile(original)
	if err != nil {
		return "", err
	}
	mutated, err := m.Apply(string(source))
	if err != nil {
		return "", err
	}
	copyPath := filepath.Join(dir, m.Name+"-"+filepath.Base(m.File))
	if err := os.WriteFile(copyPath, []byte(mutated), 0o644); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {original: copyPath}})
	if err != nil {
		return "", err
	}
	overlayPath := filepath.Join(dir, m.Name+"-overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o644); err != nil {
		return "", err
	}
	return overlayPath, nil
}
