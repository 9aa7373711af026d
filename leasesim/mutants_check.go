package leasesim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/mutant"
)

// Who found a mutant (MutantRow.FoundBy).
const (
	foundByCampaign = "campaign"
	foundByGoTest   = "go test"
)

// runMutantTest runs the mutant's test: line under its overlay (go test
// -overlay) and reports whether the test fails there, as it must: caught is
// true only for a test failure ("--- FAIL"), never for a build error, which
// is returned as err (the mutant or the test line is broken).
func runMutantTest(root string, m mutant.Mutation, work string) (caught bool, err error) {
	args := m.TestCommand()
	if args == nil {
		return false, fmt.Errorf("mutant %s has no test: line", m.Name)
	}
	overlay, err := m.WriteOverlay(root, work)
	if err != nil {
		return false, err
	}
	command := exec.Command("go", append([]string{args[0], "-overlay", overlay}, args[1:]...)...)
	command.Dir = root
	output, err := command.CombinedOutput()
	if err == nil {
		if strings.Contains(string(output), "no tests to run") {
			return false, fmt.Errorf("mutant %s: test: line %q matches no test", m.Name, m.Test)
		}
		return false, nil
	}
	if strings.Contains(string(output), "--- FAIL") {
		return true, nil
	}
	return false, fmt.Errorf("mutant %s: go %s under the overlay: %v\n%s", m.Name, strings.Join(args, " "), err, output)
}

// judgeByTest runs the mutant's test: line, when it has one and a hunt
// missed it, once for all its engines' rows, and records the verdict on
// each row whose hunt missed.
func judgeByTest(rows []MutantRow, root string, m mutant.Mutation, work string) {
	missed := func(row MutantRow) bool { return !row.Hunt.Found && row.Error == "" }
	if m.Test == "" || !slices.ContainsFunc(rows, missed) {
		return
	}
	caught, err := runMutantTest(root, m, work)
	for i := range rows {
		row := &rows[i]
		if !missed(*row) {
			continue
		}
		row.Test = m.Test
		switch {
		case err != nil:
			row.Error = err.Error()
		case caught:
			row.FoundBy = foundByGoTest
		}
	}
}

// SeedCheck is the verdict of `mutants --check-seeds` on one mutant.
type SeedCheck struct {
	Name string `json:"name"`
	// Seeds are the stored seeds replayed under the mutant; each must
	// replay without drift to its recorded finding.
	Seeds int `json:"seeds"`
	// Drifted counts stored seeds that still reproduce their finding but
	// no longer replay step for step (re-derive them with --save-seeds).
	Drifted int `json:"drifted,omitempty"`
	// Test is the test: line run under the mutant (one with an engine
	// that has no stored seed); it must fail there.
	Test    string  `json:"test,omitempty"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// checkMutantSeeds builds every named mutant and replays its stored seeds
// of every engine under it (each must reproduce its recorded finding
// without drift), and runs its test: line (which must fail) when an engine
// it lists has no stored seed, with workers builds at once. The
// same seeds on the unmutated build are replayed by go test ./campaign.
func checkMutantSeeds(root, pkg string, names []string, workers int, stderr io.Writer) []SeedCheck {
	work, err := os.MkdirTemp("", "leasesim-mutant-seeds-")
	if err != nil {
		return []SeedCheck{{Name: "-", Error: err.Error()}}
	}
	defer os.RemoveAll(work)
	checks := make([]SeedCheck, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				checks[i] = checkOneMutant(root, pkg, names[i], work)
				mu.Lock()
				fmt.Fprintln(stderr, seedCheckLine(checks[i]))
				mu.Unlock()
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	return checks
}

func checkOneMutant(root, pkg, name, work string) (check SeedCheck) {
	started := time.Now()
	check.Name = name
	defer func() { check.Seconds = time.Since(started).Seconds() }()
	m, err := mutant.Load(root, name)
	if err != nil {
		check.Error = err.Error()
		return check
	}
	if m.Equivalent != "" {
		return check
	}
	seeds, unseeded, err := storedSeedsPerEngine(root, m)
	if err != nil {
		check.Error = err.Error()
		return check
	}
	check.Seeds = len(seeds)
	if len(unseeded) > 0 {
		check.Test = m.Test
		if check.Error = checkByTest(root, m, work, unseeded); check.Error != "" {
			return check
		}
	}
	if len(seeds) == 0 {
		return check
	}
	binary, err := buildMutant(root, pkg, m, work, replayBuildFlags...)
	if err != nil {
		check.Error = err.Error()
		return check
	}
	for _, seed := range seeds {
		drifted, err := replayUnderMutant(binary, seed)
		if drifted {
			check.Drifted++
		}
		if err != nil {
			check.Error = err.Error()
			return check
		}
	}
	return check
}

// storedSeedsPerEngine returns a mutant's stored seeds, of every engine,
// and the engines of its engine: line that have none (each must then be
// held by its test: line). A seed under an engine the line does not list
// is an error: the line was narrowed and the seed left behind, or the
// engine is missing from the line.
func storedSeedsPerEngine(root string, m mutant.Mutation) (seeds, unseeded []string, err error) {
	seeds, err = filepath.Glob(filepath.Join(root, mutantSeedsDir, m.Name, "*", "*.seed"))
	if err != nil {
		return nil, nil, err
	}
	seeded := map[string]bool{}
	for _, seed := range seeds {
		engine := filepath.Base(filepath.Dir(seed))
		if !slices.Contains(m.Engines, engine) {
			return nil, nil, fmt.Errorf("%s: a stored seed of engine %s, which the mutant's engine: line (%s) does not list",
				seed, engine, strings.Join(m.Engines, ","))
		}
		seeded[engine] = true
	}
	for _, engine := range m.Engines {
		if !seeded[engine] {
			unseeded = append(unseeded, engine)
		}
	}
	return seeds, unseeded, nil
}

// checkByTest is the verdict on a mutant some of whose engines (unseeded)
// have no stored seed: its test: line must fail under it.
func checkByTest(root string, m mutant.Mutation, work string, unseeded []string) string {
	if m.Test == "" {
		return fmt.Sprintf("no stored seed of engine %s under %s/%s (hunt it: leasesim mutants --only %s --engine %s --save-seeds %s) and no test: line",
			strings.Join(unseeded, ","), mutantSeedsDir, m.Name, m.Name, strings.Join(unseeded, ","), mutantSeedsDir)
	}
	caught, err := runMutantTest(root, m, work)
	switch {
	case err != nil:
		return err.Error()
	case !caught:
		return fmt.Sprintf("its test (%s) passes under the mutant", m.Test)
	}
	return ""
}

// replayBuildFlags build a mutant only to replay its stored seeds, where
// the binary's speed does not matter and its build's does: without
// inlining, a mutated function body changes no package's export data, so
// the packages that import the mutated one are not compiled again for
// each mutant (with inlining, a change to a small function reaches every
// importer); without PGO, nothing depends on the profile. Neither changes
// what a run does.
var replayBuildFlags = []string{"-pgo=off", "-gcflags=all=-l", "-ldflags=-s -w"}

// replayUnderMutant replays seed with the mutant's build: it must
// reproduce the recorded finding. A seed that drifted (a code change moved
// its decisions) but still reproduces it is still the mutant's witness;
// drifted says so, and --save-seeds re-derives it.
func replayUnderMutant(binary, seed string) (drifted bool, err error) {
	output, err := exec.Command(binary, "replay", "--quiet", seed).CombinedOutput()
	text := string(output)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return false, fmt.Errorf("%s: %v", seed, err)
	}
	drifted = !strings.Contains(text, "\nno drift: ")
	if !strings.Contains(text, "reproduces the recorded finding") {
		return drifted, fmt.Errorf("%s no longer reproduces its finding under the mutant (re-derive it: leasesim mutants --only NAME --save-seeds %s):\n%s",
			seed, mutantSeedsDir, lastLines(text, 3))
	}
	return drifted, nil
}

func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func seedCheckLine(c SeedCheck) string {
	what := fmt.Sprintf("%d stored seed(s) reproduce under the mutant", c.Seeds)
	switch {
	case c.Error != "":
		what = "FAIL " + c.Error
	case c.Seeds == 0 && c.Test != "":
		what = "go test fails under the mutant: " + c.Test
	case c.Seeds == 0:
		what = "equivalent: not checked"
	case c.Drifted > 0:
		what += fmt.Sprintf(" (%d drifted: re-derive with --save-seeds)", c.Drifted)
	}
	if c.Error == "" && c.Seeds > 0 && c.Test != "" {
		what += "; for its engines without one, go test fails under it: " + c.Test
	}
	return fmt.Sprintf("%-40s %5.1fs %s", c.Name, c.Seconds, what)
}

// printSeedChecks prints the summary and returns the exit code: 1 when any
// mutant's stored seed or test no longer finds it.
func printSeedChecks(checks []SeedCheck, seconds float64, stdout, stderr io.Writer) int {
	failed, seeds, tests, drifted := 0, 0, 0, 0
	for _, c := range checks {
		seeds += c.Seeds
		drifted += c.Drifted
		if c.Test != "" {
			tests++
		}
		if c.Error != "" {
			failed++
		}
	}
	fmt.Fprintf(stdout, "leasesim mutants --check-seeds: %d mutants, %d stored seeds replayed under their mutants (%d drifted but still reproduce), %d tests run under theirs, %d failed (%.0f s)\n",
		len(checks), seeds, drifted, tests, failed, seconds)
	if failed > 0 {
		fmt.Fprintf(stderr, "leasesim mutants: %d mutant(s) no longer found by their stored seed or test\n", failed)
		return campaign.ExitViolation
	}
	return campaign.ExitOK
}
