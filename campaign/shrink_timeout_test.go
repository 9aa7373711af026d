package campaign

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/sim"
)

// timeoutToyEngine is clockToyEngine (with a deadline no run reaches) whose
// history check runs out of time on its first timeouts calls and decides
// in time afterwards, as a porcupine check does on a loaded machine.
func timeoutToyEngine(timeouts int) *Engine {
	e := clockToyEngine(time.Hour)
	e.Name = "toytimeout"
	calls := 0
	e.Check = func(sim.Result, bool) Verdict {
		calls++
		if calls <= timeouts {
			return Verdict{Message: "porcupine timeout: the check ran out of time"}
		}
		return Verdict{OK: true}
	}
	return e
}

// A check that ran out of time is not reproducible: a shrink whose final
// rerun checks in time returns an error (it used to panic as a broken
// determinism invariant), and a hunt does not credit it as a detection.
func TestCheckTimeoutIsNoVerdict(t *testing.T) {
	catalog := NewCatalog(timeoutToyEngine(2)) // the first run and the shrink's rerun of it time out; its final rerun does not
	o := Options{Catalog: catalog, Engines: []string{"toytimeout"}, Scheduler: "random", Params: Params{"steps": 5}}
	spec, err := o.SpecFor("toytimeout", 1)
	require.NoError(t, err)
	_, first, _, err := catalog.Execute(spec, nil, false)
	require.NoError(t, err)
	require.True(t, first.CheckTimedOut(), "%v", first)
	_, err = catalog.Shrink(spec, first, ShrinkOptions{RunsMax: 1})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "machine's load"), err.Error())

	catalog = NewCatalog(timeoutToyEngine(2))
	o.Catalog = catalog
	hunt, err := Hunt(context.Background(), HuntOptions{Campaign: o, SeedsMax: 4, Shrink: ShrinkOptions{RunsMax: -1}})
	require.NoError(t, err)
	require.False(t, hunt.Found, "a check timeout is not a detection: %+v", hunt)
	require.Equal(t, 2, hunt.CheckTimeouts)
}
