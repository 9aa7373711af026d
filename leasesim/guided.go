package leasesim

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/leasekit/leasekit/campaign"
)

// searchFlags are --search and --corpus of `run` and `hunt`.
type searchFlags struct {
	search, corpus, signal string
}

func (f *searchFlags) register(set *flag.FlagSet) {
	set.StringVar(&f.search, "search", "random", "search: random (seed indices in order) or guided (coverage-guided mutation of kept runs' decision lists; see docs/LEASESIM.md)")
	set.StringVar(&f.signal, "signal", "", "guided search: its coverage signal, calls (the default: operations and each process's call trace) or operations (operation boundaries only)")
	set.StringVar(&f.corpus, "corpus", "", "guided search: corpus directory to start from and add to (<dir>/<engine>/*.seed, e.g. testdata/corpus)")
}

// apply sets o's search and loads the corpus.
func (f *searchFlags) apply(o *campaign.Options) error {
	o.Search, o.Signal = f.search, f.signal
	if f.corpus == "" || f.search != "guided" {
		return nil
	}
	corpus, err := campaign.LoadCorpus(f.corpus, o.Engines)
	if err != nil {
		return err
	}
	o.Corpus = corpus
	return nil
}

// save writes the corpus back (new entries only) and says so on w.
func (f *searchFlags) save(o campaign.Options, w io.Writer) error {
	if f.corpus == "" || o.Corpus == nil {
		return nil
	}
	n, err := o.Corpus.Save(f.corpus)
	if err == nil {
		fmt.Fprintf(w, "corpus %s: %d entries, %d new\n", f.corpus, o.Corpus.Len(), n)
	}
	return err
}

// ExploreHunt hunts with the explore search (`hunt --search explore`, a
// mutation's "search: explore" line): the deep explorer over each engine's
// scenario, with the explore flags given (a mutation's "explore:" line) or
// the engines' defaults (explore_hunt.go). nil makes such a hunt a usage
// error.
var ExploreHunt func(ctx context.Context, o campaign.HuntOptions, exploreFlags string) (campaign.HuntResult, error) = HuntExplore

// hunt runs a hunt with the search o names.
func searchHunt(ctx context.Context, search string, o campaign.HuntOptions, exploreFlags string) (campaign.HuntResult, error) {
	switch search {
	case "", "random", "guided":
		o.Campaign.Search = search
		return campaign.Hunt(ctx, o)
	case "explore":
		if ExploreHunt == nil {
			return campaign.HuntResult{}, &campaign.UsageError{Message: "--search explore: this build has no explore search"}
		}
		return ExploreHunt(ctx, o, exploreFlags)
	}
	return campaign.HuntResult{}, &campaign.UsageError{Message: fmt.Sprintf("--search %q: random, guided or explore", search)}
}

// cmdMergeCorpus is `merge --corpus DST SRC...`: the union of shards'
// corpus directories.
func cmdMergeCorpus(dst string, sources []string, stdout, stderr io.Writer) int {
	if len(sources) == 0 {
		fmt.Fprintln(stderr, "leasesim merge --corpus DIR: give the shards' corpus directories")
		return campaign.ExitUsage
	}
	added, err := campaign.MergeCorpus(dst, sources...)
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stdout, "merged %d corpus director(ies) into %s: %d entries added\n", len(sources), dst, added)
	return campaign.ExitOK
}

// cmdCoverageBench is `bench --coverage`: random and guided search side by
// side, the distinct coverage points each reaches in the same time on one
// core.
func (c *Command) cmdCoverageBench(args []string, stdout, stderr io.Writer) int {
	set := newFlagSet("bench --coverage", "bench --coverage [--engine E] [--time D] [flags]", stderr)
	set.Bool("coverage", true, "the coverage benchmark")
	var spec specFlags
	spec.register(set, "all", c.Catalog)
	seconds := set.Duration("time", 30*time.Second, "CPU time of each search, per engine (one core)")
	baseSeed := set.Uint64("base-seed", 1, "campaign seed")
	asJSON := set.Bool("json", false, "print JSON")
	var profile cpuProfileFlag
	profile.register(set)
	if code, ok := parseFlags(set, args); !ok {
		return code
	}
	o, err := spec.options()
	if err != nil {
		return fail(stderr, err)
	}
	o.BaseSeed = *baseSeed
	defer campaign.OnCores(1)()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stopProfile, err := profile.start()
	if err != nil {
		return fail(stderr, err)
	}
	rows, err := campaign.CoverageBench(ctx, o, *seconds)
	if stopErr := stopProfile(); err == nil {
		err = stopErr
	}
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		err = encoder.Encode(rows)
	} else {
		err = campaign.WriteCoverageTable(stdout, rows)
	}
	if err != nil {
		return fail(stderr, err)
	}
	return campaign.ExitOK
}
