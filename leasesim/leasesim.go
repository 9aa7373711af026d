// Package leasesim is the leasesim command line as a library: it runs
// simulation campaigns of a catalog's engines, and replays, shrinks and
// explains the seed files they write. cmd/leasesim is Main over leasekit's
// catalog. See docs/LEASESIM.md.
//
//	leasesim run [flags]             run a campaign (exit 0 ok, 1 violation,
//	                                 2 usage, 3 liveness, 4 nondeterminism,
//	                                 5 tool error)
//	leasesim merge [--json] FILE...  merge shard reports (--json output of run)
//	leasesim replay FILE|SEED        replay bit-exactly with a readable trace
//	leasesim shrink FILE             shrink a seed file further
//	leasesim explain FILE            summarise what a seed file finds
//	leasesim reseed FILE             re-derive a drifted seed file on today's code
//	leasesim explore [flags]         enumerate every schedule and crash point
//	                                 of a small scenario, to a bound
//	leasesim mutants [flags]         build with each planted bug (mutants/)
//	                                 and time its detection
//	leasesim bench [flags]           measure steps/s, seeds/s and scaling
package leasesim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/simgc"
)

// exitToolError is the exit code of an I/O failure of the tool itself
// (a seed file could not be written), distinct from every finding.
const exitToolError = 5

// Main runs the command line (os.Args) over the catalog's engines and exits
// with its code: a user's own leasesim is
//
//	func main() { leasesim.Main(campaign.NewCatalog(mylock.Engine())) }
func Main(catalog *campaign.Catalog) {
	(&Command{Catalog: catalog}).Main()
}

// Command is the leasesim command line over one catalog of engines. Its zero
// Package is filled in from the running binary's build information.
type Command struct {
	// Catalog lists the engines the command knows (required).
	Catalog *campaign.Catalog
	// Package is the main package as go run and go build name it from the
	// module root ("./cmd/leasesim"): replay commands print it and mutants
	// builds it with each planted bug. Empty: the running binary's main
	// package (MainPackage).
	Package string
}

// Main runs the command line (os.Args) and exits with its code.
func (c *Command) Main() {
	simgc.Tune() // GOGC 400 unless the environment sets one
	os.Exit(c.Run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: leasesim <command> [flags]

commands:
  run       run a simulation campaign over N seeds or a time budget
  merge     merge the --json reports of sharded runs
  replay    replay a seed file (or a seed number) bit-exactly, with a trace
  shrink    shrink a seed file further
  explain   summarise a seed file and what it finds now
  reseed    re-derive a drifted seed file on today's code
  explore   enumerate every schedule and crash point of a small scenario, to a bound
  mutants   build leasesim with each planted bug (mutants/) and time its detection
  bench     measure steps/s, seeds/s, porcupine share, scaling and fsyncs (docs/BENCH.md)

exit codes: 0 ok, 1 violation, 2 usage error, 3 liveness failure,
            4 nondeterminism, 5 tool error (I/O)
run 'leasesim <command> -h' for the command's flags.
`

// Run is Main without the process: it runs the command line args (without
// the program name) and returns the exit code.
func (c *Command) Run(args []string, stdout, stderr io.Writer) int {
	if c.Catalog == nil {
		fmt.Fprintln(stderr, "leasesim: no engine catalog (Command.Catalog is nil)")
		return campaign.ExitUsage
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return campaign.ExitUsage
	}
	commands := map[string]func([]string, io.Writer, io.Writer) int{
		"run": c.cmdRun, "merge": c.cmdMerge, "replay": c.cmdReplay, "shrink": c.cmdShrink, "explain": c.cmdExplain, "reseed": c.cmdReseed,
		"mutants": c.cmdMutants, "hunt": c.cmdHunt, "explore": c.cmdExplore, "bench": c.cmdBench,
	}
	command, ok := commands[args[0]]
	if !ok {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			fmt.Fprint(stdout, usage)
			return campaign.ExitOK
		}
		fmt.Fprintf(stderr, "leasesim: unknown command %q\n%s", args[0], usage)
		return campaign.ExitUsage
	}
	return command(args[1:], stdout, stderr)
}

// fail prints err and returns its exit code: usage for bad input, the tool
// error code otherwise.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "leasesim: %v\n", err)
	var usage *campaign.UsageError
	if errors.As(err, &usage) || errors.Is(err, os.ErrNotExist) {
		return campaign.ExitUsage
	}
	return exitToolError
}

// specFlags are the knobs that decide a run's Spec from a seed, shared by
// run and by replay SEED.
type specFlags struct {
	engine    string
	scheduler string
	pctDepth  int
	stepsMax  int
	faults    string
	params    paramFlag
	catalog   *campaign.Catalog
}

func (f *specFlags) register(set *flag.FlagSet, engineDefault string, catalog *campaign.Catalog) {
	f.catalog = catalog
	set.StringVar(&f.engine, "engine", engineDefault, "engines: a name, a comma list, or all (known: "+
		strings.Join(catalog.Names(false), ", ")+")")
	set.StringVar(&f.scheduler, "scheduler", "mix", "scheduler: random, pct, sticky, or mix (decided per seed)")
	set.IntVar(&f.pctDepth, "pct-depth", 3, "PCT bug depth d")
	set.IntVar(&f.stepsMax, "steps-max", 0, "per-run step budget (0: the engine's own)")
	set.StringVar(&f.faults, "faults", "swarm", "fault plan: swarm (drawn per seed), none, or name=p pairs after swarm, (e.g. swarm,crash=0)")
	set.Var(&f.params, "param", "workload knob name=value (repeatable), e.g. --param processes=3")
}

func (f *specFlags) options() (campaign.Options, error) {
	names, err := f.catalog.ResolveEngines(f.engine)
	if err != nil {
		return campaign.Options{}, err
	}
	faults, err := campaign.ParseFaultSetting(f.faults)
	if err != nil {
		return campaign.Options{}, err
	}
	return campaign.Options{Catalog: f.catalog, Engines: names, Scheduler: f.scheduler, PCTDepth: f.pctDepth, StepsMax: f.stepsMax,
		Faults: faults, Params: campaign.Params(f.params)}, nil
}

// paramFlag collects --param name=value.
type paramFlag campaign.Params

func (p *paramFlag) String() string { return fmt.Sprint(map[string]int(*p)) }

func (p *paramFlag) Set(text string) error {
	name, value, ok := strings.Cut(text, "=")
	n, err := strconv.Atoi(value)
	if !ok || err != nil {
		return fmt.Errorf("%q is not name=integer", text)
	}
	if *p == nil {
		*p = paramFlag{}
	}
	(*p)[name] = n
	return nil
}

// parseShard parses "i/n".
func parseShard(text string) (int, int, error) {
	i, n, ok := strings.Cut(text, "/")
	shard, err1 := strconv.Atoi(i)
	shards, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || shards < 1 || shard < 0 || shard >= shards {
		return 0, 0, &campaign.UsageError{Message: fmt.Sprintf("--shard %q is not i/n with 0 <= i < n", text)}
	}
	return shard, shards, nil
}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	set := flag.NewFlagSet(name, flag.ContinueOnError)
	set.SetOutput(stderr)
	set.Usage = func() {
		fmt.Fprintf(stderr, "usage: leasesim %s\n", synopsis)
		set.PrintDefaults()
	}
	return set
}

// parseFlags parses and maps -h to exit 0 and errors to usage.
func parseFlags(set *flag.FlagSet, args []string) (int, bool) {
	if err := set.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return campaign.ExitOK, false
		}
		return campaign.ExitUsage, false
	}
	return 0, true
}

// runFlags are run's own flags beyond the spec knobs.
type runFlags struct {
	seeds, workers, determinism, shrinkRuns, shrinkMax int
	duration, shrinkTime, progress                     time.Duration
	baseSeed                                           uint64
	shard, out, resume                                 string
	json, probes                                       bool
	// args are run's arguments, for the replay commands of the summary.
	args []string
}

func (f *runFlags) register(set *flag.FlagSet) {
	set.IntVar(&f.seeds, "seeds", 0, "number of seed indices (each runs every engine); 0 with --duration: until time is up")
	set.DurationVar(&f.duration, "duration", 0, "time budget (e.g. 10m); the campaign stops at --seeds or --duration, whichever first")
	set.Uint64Var(&f.baseSeed, "base-seed", 1, "index i runs seed base-seed+i")
	set.StringVar(&f.shard, "shard", "0/1", "run shard i of n: the indices with index % n == i")
	set.StringVar(&f.resume, "resume", "", "continue the campaign of this merged --json report: the --seeds indices after those it covers (same flags)")
	set.IntVar(&f.workers, "workers", 0, "parallel runs, on as many cores (0: every core)")
	set.IntVar(&f.determinism, "determinism-sample", 100, "run every K-th index twice and compare hash streams (0: never)")
	set.BoolVar(&f.json, "json", false, "print the mergeable JSON report instead of the summary")
	set.BoolVar(&f.probes, "probes", false, "also list every probe hit with its count (the --json report has them too)")
	set.DurationVar(&f.progress, "progress", 0, "print a progress line to stderr this often (e.g. 30s) when stdout is not a terminal, as in CI logs (on a terminal a live line is always shown)")
	set.StringVar(&f.out, "out", "testdata/seeds", "directory for shrunk seed files (<out>/<engine>/<name>.seed)")
	set.IntVar(&f.shrinkRuns, "shrink-runs", campaign.ShrinkRunsDefault, "run budget of each shrink")
	set.IntVar(&f.shrinkMax, "shrink-max", 3, "shrink at most this many distinct failures (0: none)")
	set.DurationVar(&f.shrinkTime, "shrink-time", 20*time.Second, "time limit of each shrink (0: only --shrink-runs); 'leasesim shrink FILE' goes on")
}

func (c *Command) cmdRun(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("run", "run [flags]", stderr)
	var spec specFlags
	spec.register(set, "all", c.Catalog)
	var flags runFlags
	flags.register(set)
	var profile cpuProfileFlag
	profile.register(set)
	var search searchFlags
	search.register(set)
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	if set.NArg() > 0 {
		fmt.Fprintf(stderr, "leasesim run: unexpected argument %q\n", set.Arg(0))
		return campaign.ExitUsage
	}
	flags.args = args
	o, err := spec.options()
	if err != nil {
		return fail(stderr, err)
	}
	if flags.seeds == 0 && flags.duration == 0 {
		flags.seeds = 1000
	}
	o.Seeds, o.Duration, o.BaseSeed, o.Workers, o.DeterminismSample = flags.seeds, flags.duration, flags.baseSeed,
		flags.workers, flags.determinism
	defer campaign.OnCores(flags.workers)()
	if o.Shard, o.Shards, err = parseShard(flags.shard); err != nil {
		return fail(stderr, err)
	}
	if flags.resume != "" {
		if err := resume(&o, flags.resume); err != nil {
			return fail(stderr, err)
		}
	}
	if err := search.apply(&o); err != nil {
		return fail(stderr, err)
	}
	progress := isTerminal(stdout) && !flags.json
	planned := o.Seeds * len(o.Engines) / o.Shards
	switch {
	case progress:
		o.Progress = func(p campaign.Progress) { writeProgress(stdout, p, planned) }
	case flags.progress > 0:
		o.ProgressPeriod = flags.progress
		o.Progress = func(p campaign.Progress) { writeProgressLine(stderr, p, planned) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stopProfile, err := profile.start()
	if err != nil {
		return fail(stderr, err)
	}
	report, err := campaign.Run(ctx, o)
	if stopErr := stopProfile(); err == nil {
		err = stopErr
	}
	if err != nil {
		return fail(stderr, err)
	}
	if progress {
		fmt.Fprint(stdout, "\r\033[K")
	}
	if err := search.save(o, stderr); err != nil {
		return fail(stderr, err)
	}
	return c.finishRun(report, o, &flags, stdout, stderr)
}

// resume makes o continue the campaign of the report at path.
func resume(o *campaign.Options, path string) error {
	report, err := readReport(path)
	if err != nil {
		return err
	}
	if err := o.Resume(report); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readReport reads a --json report file.
func readReport(path string) (*campaign.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	report, err := campaign.ReadReport(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return report, nil
}

// finishRun shrinks the failures, prints the report and returns the exit
// code; the summary's last line is the paste-ready replay command.
func (c *Command) finishRun(report *campaign.Report, o campaign.Options, flags *runFlags, stdout, stderr io.Writer) int {
	var errs []error
	if flags.shrinkMax > 0 && len(report.Failures) > 0 {
		if !flags.json {
			fmt.Fprintf(stdout, "shrinking %d distinct failure(s)...\n", min(flags.shrinkMax, len(report.FirstFailures())))
		}
		errs = campaign.ShrinkFailures(report, o, flags.out, flags.shrinkMax,
			campaign.ShrinkOptions{RunsMax: flags.shrinkRuns, Time: flags.shrinkTime}, c.replayCommand)
	}
	if flags.json {
		if err := report.WriteJSON(stdout); err != nil {
			return fail(stderr, err)
		}
	} else {
		summary := summaryOptions{probes: flags.probes, replayArgs: knobArgs(flags.args), guided: o.Search == "guided"}
		c.writeRunSummary(stdout, report, summary)
		if firsts := report.FirstFailures(); len(firsts) > 0 {
			fmt.Fprintf(stdout, "\nreplay the first failure:\n  %s\n", c.failureReplay(firsts[0], summary))
		}
	}
	for _, err := range errs {
		fmt.Fprintf(stderr, "leasesim: %v\n", err)
	}
	if code := report.ExitCode(); code != campaign.ExitOK || len(errs) == 0 {
		return code
	}
	return exitToolError
}

// isTerminal reports whether w is a character device (a terminal), so CI
// logs never get progress lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

func writeProgress(w io.Writer, p campaign.Progress, planned int) {
	fmt.Fprint(w, "\r\033[K"+progressText(p, planned))
}

// writeProgressLine is writeProgress for a log: one plain line a call.
func writeProgressLine(w io.Writer, p campaign.Progress, planned int) {
	fmt.Fprintln(w, "progress: "+progressText(p, planned))
}

func progressText(p campaign.Progress, planned int) string {
	rate := 0.0
	if p.Elapsed > 0 {
		rate = float64(p.Runs) / p.Elapsed.Seconds()
	}
	of := ""
	if planned > 0 {
		of = fmt.Sprintf("/%d", planned)
	}
	return fmt.Sprintf("%d%s seeds  %.0f/s  violations %d  liveness %d  nondeterminism %d  probes hit %d  %s",
		p.Runs, of, rate, p.Violations, p.Liveness, p.Nondeterminism, p.ProbesHit, p.Elapsed.Round(time.Second))
}

func (c *Command) cmdMerge(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("merge", "merge [--json] REPORT.json... | merge --corpus DIR [--minimize] SHARD-DIR...", stderr)
	jsonOutput := set.Bool("json", false, "print the merged JSON report instead of the summary")
	probes := set.Bool("probes", false, "also list every probe hit with its count")
	corpus := set.String("corpus", "", "merge guided corpus directories (the arguments) into this one instead")
	minimize := set.Bool("minimize", false, "with --corpus: write only the entries a greedy set cover needs to reach every coverage point of the arguments (afl-cmin), into a new directory")
	signalName := set.String("signal", campaign.SignalCalls, "with --minimize: the coverage signal to cover (calls or operations)")
	entriesMax := set.Int("entries-max", 0, "with --minimize: keep at most N entries per engine, the cover's first picks (0: all the cover needs)")
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	if *corpus != "" && *minimize {
		return c.cmdMinimizeCorpus(*corpus, set.Args(), *signalName, *entriesMax, stdout, stderr)
	}
	if *corpus != "" {
		return cmdMergeCorpus(*corpus, set.Args(), stdout, stderr)
	}
	if set.NArg() == 0 {
		set.Usage()
		return campaign.ExitUsage
	}
	var reports []*campaign.Report
	for _, path := range set.Args() {
		report, err := readReport(path)
		if err != nil {
			return fail(stderr, err)
		}
		reports = append(reports, report)
	}
	merged, err := campaign.Merge(reports)
	if err != nil {
		return fail(stderr, err)
	}
	if *jsonOutput {
		if err := merged.WriteJSON(stdout); err != nil {
			return fail(stderr, err)
		}
	} else {
		c.writeRunSummary(stdout, merged, summaryOptions{probes: *probes})
	}
	return merged.ExitCode()
}

func (c *Command) cmdReplay(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("replay", "replay [flags] FILE.seed | SEED", stderr)
	var spec specFlags
	spec.register(set, c.replayEngineDefault(), c.Catalog)
	htmlPath := set.String("html", "", "also write a single HTML page (fault timeline, porcupine visualization) to this file")
	quiet := set.Bool("quiet", false, "print only the verdict, not the trace")
	save := set.String("save", "", "also write the replayed run as a seed file under this directory (<dir>/<engine>/), e.g. to pin a rare-state run in testdata/seeds")
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	if set.NArg() != 1 {
		set.Usage()
		return campaign.ExitUsage
	}
	target, expect, err := resolveTarget(set.Arg(0), &spec)
	if err != nil {
		return fail(stderr, err)
	}
	replay, err := c.Catalog.ReplayTwice(target)
	if err != nil && replay == nil {
		return fail(stderr, err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "leasesim: NONDETERMINISM: %v\n", err)
		return campaign.ExitNondeterminism
	}
	if *htmlPath != "" {
		if code := c.writeHTML(*htmlPath, target, stderr); code != 0 {
			return code
		}
		fmt.Fprintf(stdout, "wrote %s\n", *htmlPath)
	}
	if *save != "" {
		path, err := c.Catalog.SaveRun(*save, replay, c.replayCommand)
		if err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	if *quiet {
		replay.WriteVerdict(stdout)
	} else {
		replay.WriteText(stdout)
	}
	fmt.Fprintln(stdout, "replayed twice, traced and untraced: the same run")
	if file, err := campaign.ReadSeedFile(set.Arg(0)); err == nil {
		fmt.Fprintln(stdout, c.Catalog.DriftReport(file, replay))
	}
	if expect != nil {
		if replay.Finding.Same(*expect) {
			fmt.Fprintf(stdout, "reproduces the recorded finding: %v\n", *expect)
		} else {
			fmt.Fprintf(stdout, "DIFFERS from the recorded finding %v\n", *expect)
		}
	}
	return campaign.ExitCodeOf(replay.Finding)
}

func (c *Command) writeHTML(path string, target campaign.Spec, stderr io.Writer) int {
	if _, err := c.Catalog.WriteHTMLFile(path, target); err != nil {
		return fail(stderr, err)
	}
	return 0
}

// resolveTarget reads a seed file, or builds the spec of a seed number from
// the flags (exactly as `leasesim run` with those flags would).
func resolveTarget(arg string, spec *specFlags) (campaign.Spec, *campaign.Finding, error) {
	if _, err := os.Stat(arg); err == nil || strings.HasSuffix(arg, ".seed") {
		file, err := campaign.ReadSeedFile(arg)
		if err != nil {
			return campaign.Spec{}, nil, err
		}
		return file.Spec, &file.Expect, nil
	}
	seed, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		return campaign.Spec{}, nil, &campaign.UsageError{Message: fmt.Sprintf("%q is neither a seed file nor a seed number", arg)}
	}
	o, err := spec.options()
	if err != nil {
		return campaign.Spec{}, nil, err
	}
	if len(o.Engines) != 1 {
		return campaign.Spec{}, nil, &campaign.UsageError{Message: "replay SEED needs one --engine"}
	}
	s, err := o.SpecFor(o.Engines[0], seed)
	return s, nil, err
}

func (c *Command) cmdShrink(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("shrink", "shrink [flags] FILE.seed", stderr)
	runs := set.Int("runs", 4*campaign.ShrinkRunsDefault, "run budget")
	limit := set.Duration("time", 0, "time limit (0: only --runs)")
	verbose := set.Bool("v", false, "print each accepted candidate")
	out := set.String("out", "", "seed directory to write to (default: the one FILE is in, <out>/<engine>/)")
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	if set.NArg() != 1 {
		set.Usage()
		return campaign.ExitUsage
	}
	file, err := campaign.ReadSeedFile(set.Arg(0))
	if err != nil {
		return fail(stderr, err)
	}
	if file.Expect.OK() {
		return fail(stderr, &campaign.UsageError{Message: set.Arg(0) + " records no failure to shrink"})
	}
	dir := *out
	if dir == "" {
		dir = parentDir(parentDir(set.Arg(0)))
	}
	options := campaign.ShrinkOptions{RunsMax: *runs, Time: *limit}
	if *verbose {
		options.Log = stdout
	}
	path, shrunk, err := c.Catalog.ShrinkToFile(file.Spec, file.Expect, dir, options, c.replayCommand)
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stdout, "%v: %d decisions (%d choices) -> %d decisions (%d choices) in %d runs\nwrote %s\n\n%s\n",
		shrunk.Finding, shrunk.DecisionsBefore, shrunk.ChoicesBefore, shrunk.DecisionsAfter, shrunk.ChoicesAfter,
		shrunk.Runs, path, c.replayCommand(path))
	return campaign.ExitCodeOf(shrunk.Finding)
}

func parentDir(path string) string {
	i := strings.LastIndex(strings.TrimSuffix(path, "/"), "/")
	if i < 0 {
		return "."
	}
	if i == 0 {
		return "/"
	}
	return path[:i]
}

func (c *Command) cmdReseed(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("reseed", "reseed [flags] FILE.seed", stderr)
	o := campaign.ReseedOptions{Command: c.replayCommand}
	set.IntVar(&o.RunsMax, "runs", campaign.ReseedRunsDefault, "search budget (runs)")
	set.DurationVar(&o.Shrink.Time, "shrink-time", 30*time.Second, "time limit of the shrink of a failing run found")
	pass := set.Bool("pass", false, "search for a passing run (a regression seed of a fixed bug) instead of the recorded finding")
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	if set.NArg() != 1 {
		set.Usage()
		return campaign.ExitUsage
	}
	if *pass {
		o.Want = &campaign.Passing
	}
	path, result, err := c.Catalog.ReseedFile(set.Arg(0), o)
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stdout, "was: %s\nwrote %s: %s after %d runs; probes lost: %v\n", result.Before, path, result.How, result.Runs, result.ProbesLost)
	return campaign.ExitOK
}

func (c *Command) cmdExplain(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("explain", "explain [flags] FILE.seed", stderr)
	tail := set.Int("tail", 25, "trace lines to show before the end")
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	if set.NArg() != 1 {
		set.Usage()
		return campaign.ExitUsage
	}
	file, err := campaign.ReadSeedFile(set.Arg(0))
	if err != nil {
		return fail(stderr, err)
	}
	for _, line := range file.Summary {
		fmt.Fprintf(stdout, "# %s\n", line)
	}
	if err := c.Catalog.Explain(stdout, file, *tail); err != nil {
		return fail(stderr, err)
	}
	return campaign.ExitOK
}
