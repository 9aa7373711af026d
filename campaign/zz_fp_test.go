package campaign

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/leasekit/leasekit/sim"
)

func TestZZFingerprint(t *testing.T) {
	for _, name := range Names(false) {
		e, _ := Lookup(name)
		for _, faults := range []FaultSetting{{Swarm: true}, {Swarm: true, Overrides: map[string]float64{"powerloss": 0.02, "crash": 0.02}}, {Swarm: true, Overrides: map[string]float64{"clockstep": 0.05, "pidchurn": 0.05, "zombie": 0.05}}} {
			options := Options{Faults: faults}
			h := fnv.New64a()
			steps := 0
			for i := 1; i <= 300; i++ {
				spec, err := options.SpecFor(name, uint64(i))
				if err != nil {
					t.Fatal(err)
				}
				r := sim.Run(spec.Config(e, nil))
				steps += r.Steps
				fmt.Fprintf(h, "%d|%d|%d|%d|%x|%s|%s\n", i, r.Outcome, r.Steps, len(r.History), r.Hash, sim.FormatDecisions(r.Decisions), r.Message)
			}
			fmt.Printf("FP %s %v %x steps=%d\n", name, faults.Overrides, h.Sum64(), steps)
		}
	}
}
