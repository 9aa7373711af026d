// Package simtest runs leasekit's simulation campaigns from go test, for any
// campaign.Engine (one of leasekit's, or a user's own, e.g. built by
// lockwork.Engine):
//
//	func TestMyLock(t *testing.T) { simtest.Run(t, myEngine(), simtest.Options{}) }
//	func FuzzMyLock(f *testing.F) { simtest.Fuzz(f, myEngine()) }
//
// Run first replays the seed files stored under testdata/<engine>/ (each a
// failure found earlier, kept as a regression test: it must pass now), then
// runs a campaign. On a failure it shrinks the failing run, writes it as a
// seed file under testdata/<engine>/, and fails the test with one line that
// ends in the command replaying it. Progress goes to t.Log.
//
// The campaign's size comes from Options, overridden by the test flags
// -simtest.seeds, -simtest.duration and -simtest.shard (i/n), or, for CI, by
// the environment variables LEASEKIT_SEEDS, LEASEKIT_DURATION and
// LEASEKIT_SHARD (a flag given on the command line wins). -simtest.replay
// FILE replays one seed file with its step-by-step trace instead.
// -simtest.skip-stored (LEASEKIT_SKIP_STORED=1) runs the campaign even
// while stored seed files still fail, reporting only findings unlike
// theirs, and -simtest.html FILE (LEASEKIT_HTML) writes a failing run's
// page (history, fault timeline, trace) to FILE.
//
// The run, shrink, seed-file and replay code is package campaign's; this
// package only wires it to testing.
package simtest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/campaign"
)

var (
	flagSeeds    = flag.Int("simtest.seeds", 0, "simtest: seeds per campaign (0: Options.Seeds, or $LEASEKIT_SEEDS)")
	flagDuration = flag.Duration("simtest.duration", 0, "simtest: campaign time budget (0: Options.Duration, or $LEASEKIT_DURATION)")
	flagShard    = flag.String("simtest.shard", "", "simtest: run shard i/n of the seeds (or $LEASEKIT_SHARD)")
	flagReplay   = flag.String("simtest.replay", "", "simtest: replay this seed file with its trace instead of a campaign")
	flagSkip     = flag.Bool("simtest.skip-stored", false, "simtest: run the campaign even while stored seeds still fail, reporting only findings unlike theirs (or $LEASEKIT_SKIP_STORED=1)")
	flagHTML     = flag.String("simtest.html", "", "simtest: on a failure, write the failing run's page (porcupine's visualization of its history, fault timeline, trace) to this file (or $LEASEKIT_HTML)")
)

// Defaults of Options.
const (
	SeedsDefault      = 200
	ShrinkRunsDefault = 2_000
	SeedDirDefault    = "testdata"
)

// Options sizes a campaign. The zero value is a 200-seed campaign with
// swarm faults.
type Options struct {
	// Seeds is the number of seeds; 0 means SeedsDefault (unless Duration
	// is set).
	Seeds int
	// Duration bounds the campaign's time; 0 means none.
	Duration time.Duration
	// Shard and Shards select the seeds i with i%Shards == Shard.
	Shard, Shards int
	// BaseSeed is the first seed.
	BaseSeed uint64
	// Faults is a campaign fault setting (see campaign.ParseFaultSetting);
	// "" means "swarm".
	Faults string
	// Params overrides the engine's knobs.
	Params campaign.Params
	// Workers is the number of goroutines; 0 means one per CPU.
	Workers int
	// SeedDir is where seed files are read and written (under
	// <SeedDir>/<engine>/); "" means SeedDirDefault, relative to the test's
	// package directory.
	SeedDir string
	// ShrinkRuns bounds the shrink of a failure; 0 means ShrinkRunsDefault.
	ShrinkRuns int
	// ReplayCommand renders the command printed (and written into the seed
	// file) for a stored failure; nil means go test's -simtest.replay of
	// the failing test. An engine that leasesim's catalog also holds can
	// name `leasesim replay` instead (see workload's fuzz targets).
	ReplayCommand campaign.ReplayCommand
	// HTML, when set, is the file a failure's page is written to: the
	// failing run's porcupine visualization of its history, its fault
	// timeline and trace (the page of `leasesim replay --html`). A second
	// failure's page is named with -2 before the extension, and so on.
	// -simtest.html and $LEASEKIT_HTML set it too.
	HTML string
	// SkipStored lets Run look past stored seeds that still fail: they
	// still fail the test, but the campaign runs anyway, and a failure of
	// the same kind (outcome and class) as a still-failing stored seed's
	// is a known finding: logged, not shrunk, not reported again.
	// -simtest.skip-stored and $LEASEKIT_SKIP_STORED set it too.
	SkipStored bool
	// Known are findings the campaign treats as known (as SkipStored
	// does a stored seed's): Run and Find log a failure of the same kind,
	// and report only the others.
	Known []campaign.Finding
}

// Failure is a failure a campaign found, shrunk and stored.
type Failure struct {
	// Class is the stable name of the failure (the shrinker kept it), e.g.
	// "invariant two holders (clock step)".
	Class string
	// Message is the shrunk run's full finding.
	Message string
	// Seed is the campaign seed that found it.
	Seed uint64
	// SeedFile is the path of the shrunk seed file.
	SeedFile string
	// Choices is the shrunk run's number of non-zero decisions.
	Choices int
	// HTML is the absolute path of the failure's page (Options.HTML), if
	// one was written.
	HTML string
}

// Run replays the engine's stored seed files, then runs a campaign, and
// fails t on any failure (shrunk and written as a seed file first).
func Run(t *testing.T, engine *campaign.Engine, o Options) {
	t.Helper()
	run(t, engine, o)
}

// reporter is the part of testing.TB that Run uses.
type reporter interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Failed() bool
}

func run(t reporter, engine *campaign.Engine, o Options) {
	t.Helper()
	o = o.resolve()
	catalog := campaign.NewCatalog(engine)
	pages := &htmlPages{path: o.HTML, catalog: catalog}
	if *flagReplay != "" {
		replayOne(t, catalog, *flagReplay, pages)
		return
	}
	stored := replaySeeds(t, engine, o, pages)
	if t.Failed() && !o.SkipStored {
		return
	}
	o.Known = append(o.Known, stored...)
	command := o.replayCommand(t)
	failures, err := find(catalog, engine, o, t.Logf, command, pages)
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	for _, f := range failures {
		if f.SeedFile == "" {
			t.Errorf("simtest: %s found %s at seed %d: %s", engine.Name, f.Class, f.Seed, firstLine(f.Message))
			continue
		}
		t.Errorf("simtest: %s found %s (seed %d, shrunk to %d choices): %s; replay: %s%s",
			engine.Name, f.Class, f.Seed, f.Choices, firstLine(f.Message), command(f.SeedFile), htmlNote(f.HTML))
	}
}

// Find runs a campaign of the engine with o (the test flags and variables
// applied) and returns every distinct failure it found, each shrunk and
// written as a seed file under o.SeedDir (and its page to o.HTML). It is
// Run without the testing.T: for tests that expect a lock to be broken.
// log receives progress lines.
//
// With o.SkipStored, Find first replays the stored seed files under
// <SeedDir>/<engine>/ (logging each) and takes the findings of those that
// still fail as known (Options.Known): it returns only failures unlike
// them.
func Find(engine *campaign.Engine, o Options, log func(format string, args ...any)) ([]Failure, error) {
	o = o.resolve()
	catalog := campaign.NewCatalog(engine)
	pages := &htmlPages{path: o.HTML, catalog: catalog}
	if o.SkipStored {
		if o.ReplayCommand == nil { // Find knows no test name to run
			o.ReplayCommand = func(path string) string { return "-simtest.replay=" + path }
		}
		o.Known = append(o.Known, replaySeeds(&logReporter{name: engine.Name, log: log}, engine, o, pages)...)
	}
	return find(catalog, engine, o, log, nil, pages)
}

// logReporter is Find's reporter: what Run would report goes to the log.
type logReporter struct {
	name   string
	log    func(string, ...any)
	failed bool
}

func (l *logReporter) Helper()                           {}
func (l *logReporter) Name() string                      { return l.name }
func (l *logReporter) Logf(format string, args ...any)   { l.log(format, args...) }
func (l *logReporter) Errorf(format string, args ...any) { l.failed = true; l.log(format, args...) }
func (l *logReporter) Fatalf(format string, args ...any) { l.Errorf(format, args...) }
func (l *logReporter) Failed() bool                      { return l.failed }

func find(catalog *campaign.Catalog, engine *campaign.Engine, o Options, log func(string, ...any),
	command campaign.ReplayCommand, pages *htmlPages) ([]Failure, error) {
	options, err := o.campaign(catalog, engine, log)
	if err != nil {
		return nil, err
	}
	report, err := campaign.Run(context.Background(), options)
	if err != nil {
		return nil, err
	}
	log("simtest: %s: %d runs, %d failing, %.1fs", engine.Name, report.Runs, len(report.Failures), report.ElapsedSeconds)
	if len(report.Failures) > 0 && setKnownAside(report, o.Known, engine.Name, log) {
		return nil, nil
	}
	if len(report.Failures) == 0 {
		if missing := engine.MissingProbes(report.Probes); len(missing) > 0 && o.Duration == 0 {
			// A campaign that never reached a declared state tested nothing there.
			return []Failure{{Class: "missing probes", Message: fmt.Sprintf("%d runs never fired the declared probes %v",
				report.Runs, missing)}}, nil
		}
		return nil, nil
	}
	errs := campaign.ShrinkFailures(report, options, o.SeedDir, len(report.FirstFailures()),
		campaign.ShrinkOptions{RunsMax: o.ShrinkRuns}, command)
	if len(errs) > 0 {
		return nil, fmt.Errorf("shrinking: %v", errs[0])
	}
	var failures []Failure
	for _, f := range report.FirstFailures() {
		if f.SeedFile == "" { // nondeterminism is not shrunk
			failures = append(failures, Failure{Class: f.Outcome + " (" + f.Class + ")", Message: f.Message, Seed: f.Seed})
			continue
		}
		failure, err := storedFailure(catalog, f, pages)
		if err != nil {
			return nil, err
		}
		log("simtest: %s seed %d: %s, shrunk to %d decisions (%d choices) in %s", engine.Name, f.Seed, f.Class,
			f.DecisionsShrunk, f.ChoicesShrunk, f.SeedFile)
		failures = append(failures, failure)
	}
	return failures, nil
}

// setKnownAside drops the report's failures of a known kind, logging each
// kind with its count, and reports whether every failure was known.
func setKnownAside(report *campaign.Report, known []campaign.Finding, engine string, log func(string, ...any)) bool {
	if len(known) == 0 {
		return false
	}
	counts := make([]int, len(known))
	firsts := make([]uint64, len(known))
	fresh := report.Failures[:0:0]
	for _, f := range report.Failures {
		i := slices.IndexFunc(known, func(k campaign.Finding) bool { return f.Is(k) })
		if i < 0 {
			fresh = append(fresh, f)
			continue
		}
		if counts[i] == 0 {
			firsts[i] = f.Seed
		}
		counts[i]++
	}
	for i, k := range known {
		if counts[i] > 0 {
			log("simtest: %s: known finding %v again in %d runs (first at seed %d); not reported again", engine, k,
				counts[i], firsts[i])
		}
	}
	report.Failures = fresh
	if len(fresh) == 0 {
		log("simtest: %s: the campaign found only known findings", engine)
		return true
	}
	return false
}

// storedFailure is the Failure of a campaign failure shrunk into a seed
// file, with the shrunk run's finding, and its page written if asked.
func storedFailure(catalog *campaign.Catalog, f *campaign.Failure, pages *htmlPages) (Failure, error) {
	file, err := campaign.ReadSeedFile(f.SeedFile)
	if err != nil {
		return Failure{}, err
	}
	_, finding, _, err := catalog.Execute(file.Spec, nil, false)
	if err != nil {
		return Failure{}, err
	}
	page, err := pages.write(file.Spec)
	if err != nil {
		return Failure{}, err
	}
	return Failure{Class: finding.Class, Message: finding.Message, Seed: f.Seed, SeedFile: f.SeedFile,
		Choices: campaign.Choices(file.Spec.Decisions), HTML: page}, nil
}

// ReplaySeeds replays every seed file under <SeedDir>/<engine>/ and fails t
// for each one that still finds a failure: a stored failure is a regression
// test once fixed.
func ReplaySeeds(t *testing.T, engine *campaign.Engine, o Options) {
	t.Helper()
	o = o.resolve()
	replaySeeds(t, engine, o, &htmlPages{path: o.HTML, catalog: campaign.NewCatalog(engine)})
}

// replaySeeds replays the stored seeds (ReplaySeeds) and returns the
// findings of those that still fail.
func replaySeeds(t reporter, engine *campaign.Engine, o Options, pages *htmlPages) []campaign.Finding {
	t.Helper()
	var failing []campaign.Finding
	catalog := campaign.NewCatalog(engine)
	paths, _ := filepath.Glob(filepath.Join(o.SeedDir, engine.Name, "*.seed"))
	sort.Strings(paths)
	for _, path := range paths {
		file, err := campaign.ReadSeedFile(path)
		if err != nil {
			t.Errorf("simtest: %v", err)
			continue
		}
		_, finding, _, err := catalog.Execute(file.Spec, nil, false)
		switch {
		case err != nil:
			t.Errorf("simtest: %s: %v", path, err)
		case !finding.OK():
			page, err := pages.write(file.Spec)
			if err != nil {
				t.Errorf("simtest: %s: %v", path, err)
			}
			t.Errorf("simtest: %s still finds %v: %s; replay: %s%s", path, finding, firstLine(finding.Message),
				o.replayCommand(t)(path), htmlNote(page))
			failing = append(failing, finding)
		default:
			t.Logf("simtest: %s passes (it found %v when written)", path, file.Expect)
		}
	}
	return failing
}

// replayOne replays one seed file with its trace into the test log.
func replayOne(t reporter, catalog *campaign.Catalog, path string, pages *htmlPages) {
	file, err := campaign.ReadSeedFile(path)
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	replay, err := catalog.ReplaySpec(file.Spec, false)
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	var text strings.Builder
	replay.WriteText(&text)
	t.Logf("\n%s", text.String())
	if !replay.Finding.OK() {
		page, err := pages.write(file.Spec)
		if err != nil {
			t.Errorf("simtest: %s: %v", path, err)
		}
		t.Fatalf("simtest: %s: %v: %s%s", path, replay.Finding, firstLine(replay.Finding.Message), htmlNote(page))
	}
}

// htmlPages writes the failure pages of one Run or Find: the first to
// Options.HTML, the next ones beside it as NAME-2.EXT, NAME-3.EXT, ...
type htmlPages struct {
	path    string
	catalog *campaign.Catalog
	written int
}

// write writes spec's page and returns its absolute path; "" when no page
// was asked for.
func (p *htmlPages) write(spec campaign.Spec) (string, error) {
	if p.path == "" {
		return "", nil
	}
	p.written++
	path := p.path
	if p.written > 1 {
		ext := filepath.Ext(path)
		path = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(path, ext), p.written, ext)
	}
	if _, err := p.catalog.WriteHTMLFile(path, spec); err != nil {
		return "", err
	}
	return filepath.Abs(path)
}

// htmlNote is the failure message's pointer to its page.
func htmlNote(page string) string {
	if page == "" {
		return ""
	}
	return "; html: " + page
}

// replayCommand is the one-line command that replays a seed file of t.
func replayCommand(t reporter) campaign.ReplayCommand {
	name := strings.SplitN(t.Name(), "/", 2)[0]
	return func(path string) string {
		return fmt.Sprintf("go test -run '^%s$' -simtest.replay=%s", name, path)
	}
}

// replayCommand is o.ReplayCommand, or else the go test command replaying
// a seed file in t's test.
func (o Options) replayCommand(t reporter) campaign.ReplayCommand {
	if o.ReplayCommand != nil {
		return o.ReplayCommand
	}
	return replayCommand(t)
}

// resolve applies the defaults, the environment and the flags.
func (o Options) resolve() Options {
	if v := os.Getenv("LEASEKIT_SEEDS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			o.Seeds = n
		}
	}
	if v := os.Getenv("LEASEKIT_DURATION"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			o.Duration = d
		}
	}
	if v, err := strconv.ParseBool(os.Getenv("LEASEKIT_SKIP_STORED")); err == nil && v {
		o.SkipStored = true
	}
	if *flagSkip {
		o.SkipStored = true
	}
	if v := os.Getenv("LEASEKIT_HTML"); v != "" {
		o.HTML = v
	}
	shard := os.Getenv("LEASEKIT_SHARD")
	if *flagSeeds != 0 {
		o.Seeds = *flagSeeds
	}
	if *flagDuration != 0 {
		o.Duration = *flagDuration
	}
	if *flagHTML != "" {
		o.HTML = *flagHTML
	}
	if *flagShard != "" {
		shard = *flagShard
	}
	if shard != "" {
		i, n, _ := strings.Cut(shard, "/")
		o.Shard, _ = strconv.Atoi(i)
		o.Shards, _ = strconv.Atoi(n)
	}
	if o.Seeds == 0 && o.Duration == 0 {
		o.Seeds = SeedsDefault
	}
	if o.SeedDir == "" {
		o.SeedDir = SeedDirDefault
	}
	if o.ShrinkRuns == 0 {
		o.ShrinkRuns = ShrinkRunsDefault
	}
	if o.Faults == "" {
		o.Faults = "swarm"
	}
	return o
}

// campaign returns the campaign options of o.
func (o Options) campaign(catalog *campaign.Catalog, engine *campaign.Engine, log func(string, ...any)) (campaign.Options, error) {
	faults, err := campaign.ParseFaultSetting(o.Faults)
	if err != nil {
		return campaign.Options{}, err
	}
	return campaign.Options{Catalog: catalog, Engines: []string{engine.Name}, Seeds: o.Seeds, Duration: o.Duration,
		BaseSeed: o.BaseSeed, Shard: o.Shard, Shards: o.Shards, Workers: o.Workers, Faults: faults, Params: o.Params,
		ProgressPeriod: 2 * time.Second,
		Progress: func(p campaign.Progress) {
			log("simtest: %s: %d runs, %d violations, %d liveness, %v", engine.Name, p.Runs, p.Violations, p.Liveness,
				p.Elapsed.Round(time.Millisecond))
		}}, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
