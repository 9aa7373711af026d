package leasesim

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"

	"github.com/leasekit/leasekit/campaign"
)

// cmdMinimizeCorpus is `merge --corpus DST --minimize SRC...`: the union
// of the sources, cut to the entries a greedy set cover needs to reach
// every coverage point the union reaches (campaign.MinimizeCorpus, as
// afl-cmin), written into DST. DST must be new or empty: the sources are
// never changed, so nothing is lost, and a cover written into an old corpus
// would no longer be minimal.
func (c *Command) cmdMinimizeCorpus(dst string, sources []string, signalName string, entriesMax int, stdout, stderr io.Writer) int {
	if len(sources) == 0 {
		fmt.Fprintln(stderr, "leasesim merge --corpus DIR --minimize: give the corpus directories to minimise")
		return campaign.ExitUsage
	}
	if entries, err := os.ReadDir(dst); err == nil && len(entries) > 0 {
		return fail(stderr, &campaign.UsageError{Message: fmt.Sprintf("--minimize writes a new corpus: %s is not empty (give a new directory; the sources stay as they are)", dst)})
	}
	union, engines, err := loadCorpora(sources)
	if err != nil {
		return fail(stderr, err)
	}
	for _, engine := range engines {
		if _, err := c.Catalog.Lookup(engine); err != nil {
			return fail(stderr, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := campaign.Options{Catalog: c.Catalog, Engines: engines, Workers: 1, Signal: signalName}
	kept, covers, err := campaign.MinimizeCorpus(ctx, o, union, entriesMax)
	if err != nil {
		return fail(stderr, err)
	}
	if _, err := kept.Save(dst); err != nil {
		return fail(stderr, err)
	}
	for _, cover := range covers {
		fmt.Fprintf(stdout, "%s: %d entries -> %d, reaching %d points\n", cover.Engine, cover.Entries, cover.Kept, cover.Points)
	}
	return campaign.ExitOK
}

// loadCorpora unions corpus directories; it returns the union and the
// engines (subdirectories) it found, sorted.
func loadCorpora(sources []string) (*campaign.Corpus, []string, error) {
	set := map[string]bool{}
	for _, source := range sources {
		entries, err := os.ReadDir(source)
		if err != nil {
			return nil, nil, err
		}
		for _, entry := range entries {
			if entry.IsDir() && entry.Name()[0] != '.' {
				set[entry.Name()] = true
			}
		}
	}
	engines := make([]string, 0, len(set))
	for engine := range set {
		engines = append(engines, engine)
	}
	sort.Strings(engines)
	union := campaign.NewCorpus()
	for _, source := range sources {
		c, err := campaign.LoadCorpus(source, engines)
		if err != nil {
			return nil, nil, err
		}
		for _, engine := range engines {
			for _, spec := range c.Entries(engine) {
				union.Add(spec)
			}
		}
	}
	return union, engines, nil
}
