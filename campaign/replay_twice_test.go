package campaign

import (
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// alternatingToyEngine is the toy lock whose every other run has one more
// client: a leak that the traced runs (the first and third of ReplayTwice)
// share and the untraced second run does not, the shape of a run that
// tracing changes.
func alternatingToyEngine() *Engine {
	runs := 0
	return driftingToyEngine("toylock-alternating", func() int {
		runs++
		return 1 + runs%2
	})
}

func TestReplayTwiceTellsADivergence(t *testing.T) {
	catalog := NewCatalog(toyEngine("toylock", false, toyCheck), leakyToyEngine(), alternatingToyEngine())
	cases := []struct {
		engine string
		want   string // "" for agreeing runs
	}{
		{"toylock", ""},
		{"toylock-leaky", "replays diverge at trace line "},
		{"toylock-alternating", "tracing changes the run"},
	}
	for _, c := range cases {
		t.Run(c.engine, func(t *testing.T) {
			spec, err := Options{Catalog: catalog}.SpecFor(c.engine, 7)
			require.NoError(t, err)
			replay, err := catalog.ReplayTwice(spec)
			require.NotNil(t, replay)
			require.NotEmpty(t, replay.Trace, "the first replay is traced")
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
		})
	}
}

func TestFirstDifferenceNamesTheLine(t *testing.T) {
	cases := []struct {
		a, b   string
		line   int
		la, lb string
	}{
		{"x\ny\n", "x\ny\n", 0, "", ""},
		{"x\ny\nz\n", "x\nq\nz\n", 2, "y", "q"},
		{"x\ny\n", "x\ny\nz\n", 3, "", "z"},
		{"x\ny\nz", "x\ny", 3, "z", "(end of trace)"},
	}
	for _, c := range cases {
		line, la, lb, ok := firstDifference([]byte(c.a), []byte(c.b))
		require.Equal(t, c.line != 0, ok, "%q %q", c.a, c.b)
		require.Equal(t, c.line, line)
		require.Equal(t, c.la, la)
		require.Equal(t, c.lb, lb)
	}
}
