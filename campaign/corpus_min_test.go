package campaign

import (
	"context"
	"slices"
	"testing"
)

func TestGreedyCover(t *testing.T) {
	for _, c := range []struct {
		name   string
		sets   [][]uint64
		limit  int
		chosen []int
		points int
	}{
		{"empty corpus", nil, 0, nil, 0},
		{"one set covers the rest", [][]uint64{{1}, {1, 2, 3}, {2}}, 0, []int{1}, 3},
		{"the largest gain first, then what is left", [][]uint64{{1, 2}, {3}, {2, 3, 4}}, 0, []int{2, 0}, 4},
		{"a tie goes to the first", [][]uint64{{1, 2}, {3, 4}}, 0, []int{0, 1}, 4},
		{"a set with nothing new is never taken", [][]uint64{{1, 2}, {2}, {1}}, 0, []int{0}, 2},
		{"a limit keeps the first picks", [][]uint64{{1}, {2, 3, 4}, {5, 6}}, 2, []int{1, 2}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			chosen, points := greedyCover(c.sets, c.limit)
			if !slices.Equal(chosen, c.chosen) || points != c.points {
				t.Fatalf("greedyCover = %v, %d points; want %v, %d", chosen, points, c.chosen, c.points)
			}
		})
	}
}

// TestMinimizeCorpusKeepsEveryPoint: the cover of a guided campaign's
// corpus is smaller and reaches every point the whole corpus reaches; with
// a limit it keeps that many entries and reaches fewer; the check of the
// union is not vacuous (the cover minus its last pick loses points).
func TestMinimizeCorpusKeepsEveryPoint(t *testing.T) {
	o := guidedOptions("selftest", 300)
	o.Corpus = NewCorpus()
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	all := o.Corpus.Entries("selftest")
	kept, covers, err := MinimizeCorpus(context.Background(), o, o.Corpus, 0)
	if err != nil {
		t.Fatal(err)
	}
	cover := covers[0]
	union := pointsOf(t, o, all)
	if cover.Entries != len(all) || cover.Kept != len(kept.Entries("selftest")) || cover.Kept >= cover.Entries {
		t.Fatalf("cover %+v of %d entries kept %d: want fewer", cover, len(all), len(kept.Entries("selftest")))
	}
	if got := pointsOf(t, o, kept.Entries("selftest")); got != union || cover.Points != union {
		t.Fatalf("the cover reaches %d points (reported %d), the corpus %d", got, cover.Points, union)
	}
	short := kept.Entries("selftest")[:cover.Kept-1]
	if pointsOf(t, o, short) >= union {
		t.Fatal("the cover without its last pick reaches every point: the union check cannot fail")
	}
	limited, covers, err := MinimizeCorpus(context.Background(), o, o.Corpus, 2)
	if err != nil || len(limited.Entries("selftest")) != 2 || covers[0].Points >= union {
		t.Fatalf("limit 2: %d entries, %+v, %v", len(limited.Entries("selftest")), covers, err)
	}
}

// pointsOf replays entries and counts the distinct points they reach.
func pointsOf(t *testing.T, o Options, entries []Spec) int {
	t.Helper()
	e, err := o.Catalog.Lookup("selftest")
	if err != nil {
		t.Fatal(err)
	}
	pool := newRunPool(1)
	defer pool.close()
	sets, err := entryPoints(context.Background(), e, "selftest", entries, o.Signal, pool)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, set := range sets {
		for _, h := range set {
			seen[h] = true
		}
	}
	return len(seen)
}
