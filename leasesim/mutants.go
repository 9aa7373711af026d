package leasesim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/mutant"
)

// huntFlags are the budget flags shared by `hunt` and `mutants`.
type huntFlags struct {
	seedsMax, shrinkRuns int
	duration, shrinkTime time.Duration
	baseSeed             uint64
	json                 bool
	// search is the hunt's search (`mutants` sets it per mutant).
	search string
	// explore is the explore flags of an explore hunt ("": the engines'
	// defaults; `mutants` takes a mutant's explore: line).
	explore string
	// engines, in `mutants`, is --engine: the engines of each mutant's
	// engine: line to hunt ("": every one it lists), so one engine of a
	// mutant is hunted again without the others.
	engines string
}

func (f *huntFlags) register(set *flag.FlagSet) {
	set.IntVar(&f.seedsMax, "seeds-max", 100_000, "seed indices to try before giving up (--duration usually ends the search first)")
	set.DurationVar(&f.duration, "duration", 60*time.Second, "wall-time budget of the search (0: none)")
	set.Uint64Var(&f.baseSeed, "base-seed", 1, "the first seed")
	set.IntVar(&f.shrinkRuns, "shrink-runs", 2000, "run budget of the shrink of the first failure (-1: no shrink)")
	set.DurationVar(&f.shrinkTime, "shrink-time", 15*time.Second, "time limit of the shrink")
	set.BoolVar(&f.json, "json", false, "print JSON instead of a table")
	set.StringVar(&f.explore, "explore", "", "explore search: the deep explorer's flags, as leasesim explore takes them (e.g. \"--procs 3 --crashes 1 --choices-max 2\"; default: each engine's, see docs/MUTANTS.md; mutants: a mutant's explore: line)")
}

func (f *huntFlags) args() []string {
	return []string{"--seeds-max", strconv.Itoa(f.seedsMax), "--duration", f.duration.String(),
		"--base-seed", strconv.FormatUint(f.baseSeed, 10), "--shrink-runs", strconv.Itoa(f.shrinkRuns),
		"--shrink-time", f.shrinkTime.String(), "--search", cmp.Or(f.search, "random"), "--explore", f.explore}
}

// cmdHunt runs one hunt (seeds in order, one core, until the first failure;
// then a shrink) with the engine compiled into this binary. `leasesim
// mutants` runs it inside each mutant's build; it is not in the usage text.
func (c *Command) cmdHunt(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("hunt", "hunt [flags]", stderr)
	var spec specFlags
	spec.register(set, "all", c.Catalog)
	var flags huntFlags
	flags.register(set)
	var search searchFlags
	search.register(set)
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	o, err := spec.options()
	if err != nil {
		return fail(stderr, err)
	}
	o.BaseSeed = flags.baseSeed
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := search.apply(&o); err != nil {
		return fail(stderr, err)
	}
	hunt, err := searchHunt(ctx, search.search, campaign.HuntOptions{Campaign: o, SeedsMax: flags.seedsMax, Duration: flags.duration,
		Shrink: campaign.ShrinkOptions{RunsMax: flags.shrinkRuns, Time: flags.shrinkTime}, Corpus: o.Corpus}, flags.explore)
	if err != nil {
		return fail(stderr, err)
	}
	if flags.json {
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		if err := encoder.Encode(hunt); err != nil {
			return fail(stderr, err)
		}
	} else {
		fmt.Fprintf(stdout, "found=%v seeds=%d seconds=%.2f %s %s\n", hunt.Found, hunt.Seeds, hunt.Seconds, hunt.Outcome, hunt.Class)
	}
	if !hunt.Found {
		return campaign.ExitViolation
	}
	return campaign.ExitOK
}

// MutantRow is one line of the `leasesim mutants` table.
type MutantRow struct {
	Name string `json:"name"`
	// Engines are the mutant's engine: line; Engine is the one this row's
	// hunt ran (empty on a row of the whole mutant: one that could not be
	// built, or an equivalent one not hunted).
	Engines []string `json:"engines"`
	Engine  string   `json:"engine,omitempty"`
	File    string   `json:"file"`
	Bug     string   `json:"bug"`
	// Faults is the hunt's fault setting (the mutant's own, or --faults).
	Faults string `json:"faults"`
	// Error is set when the mutant could not be built or hunted (a stale
	// old block, a compile error): that is a failure of the catalog.
	Error string              `json:"error,omitempty"`
	Hunt  campaign.HuntResult `json:"hunt"`
	// FoundBy is "campaign" when the hunt found the mutant, "go test" when
	// the hunt missed it but its test: line (Test) fails under it, and
	// empty when it is missed.
	FoundBy string `json:"found_by,omitempty"`
	Test    string `json:"test,omitempty"`
	// BuildSeconds is the go build -overlay time (not in Hunt.Seconds).
	BuildSeconds float64 `json:"build_seconds"`
	// Confounded counts detections the unmutated build also fails (they
	// are skipped: the hunt goes on from the next seed).
	Confounded int `json:"confounded,omitempty"`
	// ConfoundedSeeds are those detections' seeds, for a rerun on the real
	// build (each is a failure of today's code, or of the harness).
	ConfoundedSeeds []uint64 `json:"confounded_seeds,omitempty"`
	// ConfoundedInputs are their inputs as seed-file text, when the seed
	// alone does not rerun them (a guided or explore detection): save one
	// as a .seed file and `leasesim replay` it on the real build.
	ConfoundedInputs []string `json:"confounded_inputs,omitempty"`
	// EngineFindings are the hunt's detections, unshrunk or shrunk, that
	// the unmutated build fails too: findings in the engine (or harness),
	// never credited to the mutant.
	EngineFindings []EngineFinding `json:"engine_findings,omitempty"`
	// Equivalent is the mutant's equivalent: line: why no sound checker
	// can find it. Such a mutant is hunted only when --only names it, and
	// never counts as missed.
	Equivalent string `json:"equivalent,omitempty"`
	// Search is the hunt's search; Searches, under --search with several,
	// are each search's row side by side (this row is the first found).
	Search   string      `json:"search,omitempty"`
	Searches []MutantRow `json:"searches,omitempty"`
}

// confoundedMax bounds how often a hunt restarts after a detection the
// unmutated build shares.
const confoundedMax = 3

// cmdMutants builds leasesim with each planted bug (go build -overlay) and
// hunts it: found or not, seeds and wall seconds to the first detection,
// the shrunk run's choices and trace steps, the kind. It exits 1 if any
// mutant is not found (or cannot be built).
func (c *Command) cmdMutants(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("mutants", "mutants [--only NAME,...] [flags]", stderr)
	only := set.String("only", "", "comma list of mutants (default: every mutants/*/mutation.txt)")
	root := set.String("root", "", "root of the module to overlay and build (default: the go.mod of this binary's main module, found from the working directory up)")
	mainPkg := set.String("package", "", "main package to build with each mutant, relative to --root (default: this binary's, e.g. ./cmd/leasesim)")
	faults := set.String("faults", "swarm", "fault plan of the hunts (as run --faults); a mutant's faults: line overrides swarm")
	searches := set.String("search", "", "searches to hunt with, side by side: a comma list of random, guided, explore (default: each mutant's search: line, else random)")
	checkSeeds := set.Bool("check-seeds", false, "instead of hunting, replay every mutant's stored seed under its mutant (each must reproduce its recorded finding) or run its test: line (which must fail there); CI's check that no mutant is lost")
	workers := set.Int("workers", 2, "--check-seeds: mutants built and checked at once")
	saveSeeds := set.String("save-seeds", "", "write each engine's shrunk failure of a found mutant as its seed under DIR/<mutant>/<engine>/ (replacing that engine's older ones, keeping other engines'): re-derives campaign/testdata/mutant-seeds")
	var flags huntFlags
	flags.register(set)
	set.StringVar(&flags.engines, "engine", "", "comma list: hunt only these engines of each mutant's engine: line (default: every engine it lists)")
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	if *root == "" {
		found, err := moduleRoot(mainModule())
		if err != nil {
			return fail(stderr, err)
		}
		*root = found
	}
	pkg := *mainPkg
	if pkg == "" {
		pkg = c.mainPackage()
	}
	if err := checkMutantsInput(*root, pkg); err != nil {
		return fail(stderr, err)
	}
	names, err := selectMutants(*root, *only)
	if err != nil {
		return fail(stderr, err)
	}
	if *checkSeeds {
		started := time.Now()
		checks := checkMutantSeeds(*root, pkg, names, *workers, stderr)
		return printSeedChecks(checks, time.Since(started).Seconds(), stdout, stderr)
	}
	work, err := os.MkdirTemp("", "leasesim-mutants-")
	if err != nil {
		return fail(stderr, err)
	}
	defer os.RemoveAll(work)
	var rows []MutantRow
	for _, name := range names {
		for _, row := range c.huntMutantSearches(*root, pkg, name, work, *faults, flags, *only != "", *searches) {
			if !flags.json {
				fmt.Fprintln(stderr, mutantLine(row))
			}
			if path, err := saveMutantSeed(*saveSeeds, row); err != nil {
				return fail(stderr, err)
			} else if path != "" {
				fmt.Fprintf(stderr, "%-40s seed %s\n", "", path)
			}
			rows = append(rows, row)
		}
	}
	return printMutants(rows, flags.json, stdout, stderr)
}

// selectMutants returns the names of --only, or every mutant.
func selectMutants(root, only string) ([]string, error) {
	all, err := mutant.Names(root)
	if err != nil {
		return nil, err
	}
	if only == "" {
		return all, nil
	}
	var names []string
	for _, name := range strings.Split(only, ",") {
		if !slices.Contains(all, name) {
			return nil, &campaign.UsageError{Message: fmt.Sprintf("no mutant %q under %s/mutants (have: %s)",
				name, root, strings.Join(all, ", "))}
		}
		names = append(names, name)
	}
	return names, nil
}

// huntMutant builds the mutant and hunts it once per engine of its engine:
// line, each hunt a campaign of that engine alone, so every engine's row
// says whether that engine's campaign finds the mutant (a hunt of all its
// engines at once stops at whichever finds it first, and the others' checks
// go unproven). Each hunt restarts past detections that the unmutated build
// (this process) shares. A mutant that cannot be loaded or built, or an
// equivalent one not named, gives one row without an Engine.
func (c *Command) huntMutant(root, pkg, name, work, faults string, flags huntFlags, named bool) []MutantRow {
	m, err := mutant.Load(root, name)
	if err != nil {
		return []MutantRow{{Name: name, Error: err.Error()}}
	}
	flags.search = cmp.Or(flags.search, m.Search, "random")
	flags.explore = cmp.Or(flags.explore, m.Explore)
	row := MutantRow{Name: name, Engines: m.Engines, File: m.File, Bug: m.Bug, Equivalent: m.Equivalent, Search: flags.search}
	if m.Equivalent != "" && !named {
		return []MutantRow{row}
	}
	engines := huntedEngines(m.Engines, flags.engines)
	if len(engines) == 0 {
		return nil
	}
	started := time.Now()
	binary, err := buildMutant(root, pkg, m, work)
	row.BuildSeconds = time.Since(started).Seconds()
	if err != nil {
		row.Error = err.Error()
		return []MutantRow{row}
	}
	if m.Faults != "" && faults == "swarm" {
		faults = m.Faults
	}
	row.Faults = faults
	rows := c.huntEngines(row, binary, engines, flags)
	judgeByTest(rows, root, m, work)
	return rows
}

// huntEngines hunts the mutant's build on each engine alone: a row each.
func (c *Command) huntEngines(row MutantRow, binary string, engines []string, flags huntFlags) []MutantRow {
	var rows []MutantRow
	for _, engine := range engines {
		hunted := row
		hunted.Engine = engine
		c.huntPastEngineFindings(&hunted, flags, func(next huntFlags) (campaign.HuntResult, error) {
			return runHunt(binary, engine, row.Faults, next)
		})
		if hunted.Hunt.Found && hunted.Error == "" {
			hunted.FoundBy = foundByCampaign
		}
		rows = append(rows, hunted)
	}
	return rows
}

// huntedEngines are the engines of an engine: line that --engine (only, a
// comma list; "": all) selects.
func huntedEngines(listed []string, only string) []string {
	if only == "" {
		return listed
	}
	selected := strings.Split(only, ",")
	return slices.DeleteFunc(slices.Clone(listed), func(engine string) bool {
		return !slices.Contains(selected, engine)
	})
}

// checkMutantsInput refuses, naming what is missing, a root without a
// catalog of planted bugs or without the main package to build.
func checkMutantsInput(root, pkg string) error {
	names, err := mutant.Names(root)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return &campaign.UsageError{Message: fmt.Sprintf("mutants: no catalog of planted bugs: no %s (one directory per mutant, see docs/MUTANTS.md)",
			filepath.Join(root, "mutants", "<name>", "mutation.txt"))}
	}
	info, err := os.Stat(filepath.Join(root, pkg))
	if err != nil || !info.IsDir() {
		return &campaign.UsageError{Message: fmt.Sprintf("mutants: no main package %s under %s to build with each mutant; pass --package", pkg, root)}
	}
	return nil
}

// buildMutant builds the main package pkg (relative to root) with the
// mutant's overlay into work, with the go command on PATH (not
// runtime.GOROOT's: the root this binary was built in means nothing once the
// binary is copied to another machine).
func buildMutant(root, pkg string, m mutant.Mutation, work string, flags ...string) (string, error) {
	overlay, err := m.WriteOverlay(root, work)
	if err != nil {
		return "", err
	}
	binary := filepath.Join(work, "leasesim-"+m.Name)
	if _, err := os.Stat(binary); err == nil {
		return binary, nil // built for another search of the same mutant
	}
	build := exec.Command("go", append(append([]string{"build", "-overlay", overlay}, flags...), "-o", binary, pkg)...)
	build.Dir = root
	if output, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -overlay (mutant %s): %v\n%s", m.Name, err, output)
	}
	return binary, nil
}

// runHunt runs `binary hunt --json` and decodes its result.
func runHunt(binary, engines, faults string, flags huntFlags) (campaign.HuntResult, error) {
	args := append([]string{"hunt", "--json", "--engine", engines, "--faults", faults}, flags.args()...)
	command := exec.Command(binary, args...)
	var stderr strings.Builder
	command.Stderr = &stderr
	output, err := command.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == campaign.ExitViolation) {
		return campaign.HuntResult{}, fmt.Errorf("%s hunt: %v: %s", filepath.Base(binary), err, stderr.String())
	}
	var hunt campaign.HuntResult
	if err := json.Unmarshal(output, &hunt); err != nil {
		return campaign.HuntResult{}, fmt.Errorf("%s hunt: reading its JSON: %v: %s", filepath.Base(binary), err, stderr.String())
	}
	return hunt, nil
}

// mutantLine is the progress line of one mutant's hunt of one engine (to
// stderr).
func mutantLine(row MutantRow) string {
	label := fmt.Sprintf("%-40s %-9s", row.Name, rowEngine(row))
	if row.Error != "" {
		return fmt.Sprintf("%s ERROR %s", label, row.Error)
	}
	if row.Equivalent != "" && row.Hunt.Seeds == 0 {
		return fmt.Sprintf("%s equivalent (not hunted): %s", label, row.Equivalent)
	}
	line := fmt.Sprintf("%s found=%v seeds=%d %.2fs %s", label, row.Hunt.Found, row.Hunt.Seeds, row.Hunt.Seconds, kind(row.Hunt))
	if row.FoundBy == foundByGoTest {
		line += " (found by go test: " + row.Test + ")"
	}
	if row.Confounded > 0 {
		// Say it on the line: a failing seed of today's code cuts a long
		// check short, and found=false alone would hide that.
		line += fmt.Sprintf(" (skipped %d detection(s) the real build also fails, seeds %v: rerun them on the real build; --json has their inputs)", row.Confounded, row.ConfoundedSeeds)
	}
	for _, f := range row.EngineFindings {
		line += fmt.Sprintf("\n%-40s ENGINE FINDING (the unmutated build fails it too%s): %s: %s", "", shrunkNote(f), f.Engine, f.Class)
	}
	for _, s := range row.Searches {
		line += fmt.Sprintf(" | %s %s %d %.2fs", s.Search, searchFound(s), s.Hunt.Runs, s.Hunt.Seconds)
	}
	return line
}

// rowEngine is the engine a row hunted, or the mutant's engine line on a
// row of the whole mutant.
func rowEngine(row MutantRow) string {
	return cmp.Or(row.Engine, strings.Join(row.Engines, ","))
}

func kind(h campaign.HuntResult) string {
	if !h.Found {
		return "-"
	}
	return h.Outcome + ": " + h.Class
}

// printMutants prints the table (or JSON) with the median and worst time
// to detection, and returns the exit code. A mutant counts as found only
// when every engine it lists finds it: an engine line names the campaigns
// that check the mutant's rule, and one that misses it proves nothing.
func printMutants(rows []MutantRow, asJSON bool, stdout, stderr io.Writer) int {
	v := judgeMutants(rows)
	if asJSON {
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		if err := encoder.Encode(rows); err != nil {
			return fail(stderr, err)
		}
	} else if len(rows) > 0 && len(rows[0].Searches) > 1 {
		writeSearchTable(stdout, rows)
	} else {
		writeMutantTable(stdout, rows)
		v.writeSummary(stdout)
	}
	code := campaign.ExitOK
	if len(v.missed) > 0 {
		fmt.Fprintf(stderr, "leasesim mutants: %d of %d mutants not found by every engine they list: %s\n",
			len(v.missed), v.hunted, strings.Join(v.missed, "; "))
		code = campaign.ExitViolation
	}
	if findings := writeEngineFindings(stderr, rows); findings > 0 {
		code = campaign.ExitViolation
	}
	return code
}

// mutantsVerdict sums the rows of `leasesim mutants` up per mutant.
type mutantsVerdict struct {
	hunted, equivalent, byCampaign int
	// missed names each mutant some engine missed, with the engines that
	// found it ("name: found by dirlease only").
	missed []string
	// seconds are the hunts' wall seconds, one per engine hunted.
	seconds []float64
}

// judgeMutants groups rows by mutant (each of its engines' rows).
func judgeMutants(rows []MutantRow) mutantsVerdict {
	var v mutantsVerdict
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end].Name == rows[start].Name {
			end++
		}
		v.add(rows[start:end])
		start = end
	}
	sort.Float64s(v.seconds)
	return v
}

// add counts one mutant's rows.
func (v *mutantsVerdict) add(rows []MutantRow) {
	if rows[0].Equivalent != "" && !slices.ContainsFunc(rows, func(r MutantRow) bool { return r.Error != "" }) {
		v.equivalent++
		return
	}
	v.hunted++
	var found, missed []string
	for _, row := range rows {
		v.seconds = append(v.seconds, row.Hunt.Seconds)
		if row.Error == "" && row.FoundBy != "" {
			found = append(found, row.Engine)
		} else {
			missed = append(missed, rowEngine(row))
		}
	}
	switch {
	case len(missed) > 0:
		v.missed = append(v.missed, rows[0].Name+": "+foundByEngines(found, missed))
	case !slices.ContainsFunc(rows, func(r MutantRow) bool { return r.FoundBy != foundByCampaign }):
		v.byCampaign++
	}
}

// foundByEngines says which engines found a mutant and which missed it.
func foundByEngines(found, missed []string) string {
	verdict := "missed by " + strings.Join(missed, " and ")
	if len(found) > 0 {
		verdict = "found by " + strings.Join(found, " and ") + " only, " + verdict
	}
	return verdict
}

// writeSummary writes the lines under the table.
func (v mutantsVerdict) writeSummary(w io.Writer) {
	found := v.hunted - len(v.missed)
	if len(v.seconds) > 0 {
		fmt.Fprintf(w, "\n%d mutants hunted (%d hunts, one per engine of each), %d found by every engine they list (%d by campaign, %d only by go test); seconds to detection: median %.2f, worst %.2f (one core)\n",
			v.hunted, len(v.seconds), found, v.byCampaign, found-v.byCampaign, v.seconds[len(v.seconds)/2], v.seconds[len(v.seconds)-1])
	}
	for _, missed := range v.missed {
		fmt.Fprintf(w, "not found by every engine: %s\n", missed)
	}
	if v.equivalent > 0 {
		fmt.Fprintf(w, "%d equivalent mutants listed, not hunted (their equivalent: lines say why)\n", v.equivalent)
	}
}

// writeEngineFindings prints each hunt detection the unmutated build also
// fails, with its seed file to replay on the real build, and returns their
// count: they are findings in the engine, not the mutants'.
func writeEngineFindings(w io.Writer, rows []MutantRow) int {
	count := 0
	for _, row := range rows {
		for _, f := range row.EngineFindings {
			count++
			fmt.Fprintf(w, "\nFINDING IN THE ENGINE (hunting %s; the unmutated build fails it too%s): %s: %s\n%s\n",
				row.Name, shrunkNote(f), f.Engine, f.Message, strings.TrimRight(f.Seed, "\n"))
		}
	}
	if count > 0 {
		fmt.Fprintf(w, "leasesim mutants: %d finding(s) in the engine: save each seed above as a .seed file and `leasesim replay` it\n", count)
	}
	return count
}

// shrunkNote says when only the shrunk seed fails on the unmutated build.
func shrunkNote(f EngineFinding) string {
	if f.Shrunk {
		return "; its shrink drifted there"
	}
	return ""
}

// writeMutantTable writes the Markdown table docs/MUTANTS.md carries.
func writeMutantTable(w io.Writer, rows []MutantRow) {
	table := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintln(table, "| mutant\t| engine\t| file\t| found by\t| seeds\t| seconds\t| shrunk choices / steps\t| kind\t|")
	fmt.Fprintln(table, "|---\t|---\t|---\t|---\t|---:\t|---:\t|---:\t|---\t|")
	for _, row := range rows {
		h := row.Hunt
		found := cmp.Or(row.FoundBy, "missed")
		switch {
		case row.Error != "":
			found = "ERROR"
		case row.Equivalent != "" && h.Seeds == 0:
			found = "equivalent"
		}
		shrunk := "-"
		if h.Found && h.ShrinkRuns > 0 {
			shrunk = fmt.Sprintf("%d / %d", h.ShrunkChoices, h.ShrunkSteps)
		}
		fmt.Fprintf(table, "| `%s`\t| %s\t| `%s`\t| %s\t| %d\t| %.2f\t| %s\t| %s\t|\n", row.Name, rowEngine(row), row.File, found,
			h.Seeds, h.Seconds, shrunk, strings.ReplaceAll(kind(h), "|", "/"))
	}
	table.Flush()
}
