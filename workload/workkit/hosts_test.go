package workkit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasekit/leasekit/sim"
)

// TestPlacesDealAndName builds two hosts with two and three namespaces and
// checks the dealing order, the PID 1 of each namespace, the collision of
// low PIDs across namespaces, the mapping from a record's namespace id
// back to its place, and which owner records fire the container probes.
func TestPlacesDealAndName(t *testing.T) {
	var failure error
	fail := func(format string, args ...any) {
		if failure == nil {
			failure = fmt.Errorf(format, args...)
		}
	}
	setup := func(w *sim.World) error {
		volume := w.AddVolume("disk0")
		var places Places
		for i, namespaces := range []int{2, 3} {
			places.Hosts = append(places.Hosts, w.AddHost(sim.HostSpec{Name: fmt.Sprintf("host%d", i), PIDMax: 40,
				Volume: volume, Namespaces: namespaces}))
		}
		want := []Place{{places.Hosts[0], 0}, {places.Hosts[1], 0}, {places.Hosts[0], 1}, {places.Hosts[1], 1},
			{places.Hosts[1], 2}, {places.Hosts[0], 0}}
		var procs []*sim.Proc
		for i, w0 := range want {
			if got := places.Deal(i); got != w0 {
				fail("Deal(%d) = %s ns %d, want %s ns %d", i, got.Host.Name(), got.NS, w0.Host.Name(), w0.NS)
			}
			if i == len(want)-1 {
				break
			}
			p, err := w.Spawn(w0.Host, w0.Spec(sim.ProcSpec{Name: fmt.Sprintf("p%d", i)}), func(p *sim.Proc) {
				_ = p.Clock().Sleep(context.Background(), time.Millisecond)
			})
			if err != nil {
				return err
			}
			procs = append(procs, p)
			if p.Table().PID != 1 || !w0.Same(p) {
				fail("the first process of %s ns %d has PID %d (same place %t)", w0.Host.Name(), w0.NS, p.Table().PID, w0.Same(p))
			}
		}
		h1 := places.Hosts[1]
		if got, ok := places.Named("host1", h1.Table().NamespaceID(2)); !ok || got != (Place{h1, 2}) {
			fail("Named(host1, ns 2) = %v, %t", got, ok)
		}
		if _, ok := places.Named("host2", h1.Table().NamespaceID(0)); ok {
			fail("Named found a host that does not exist")
		}
		// p3 runs in host1 ns 1; judge records it could meet.
		me := procs[3]
		cases := []struct {
			host, ns  string
			pid       int
			elsewhere bool
			probes    []string
		}{
			{"host1", h1.Table().NamespaceID(1), 1, false, nil}, // its own namespace
			{"host1", h1.Table().NamespaceID(2), 1, true, []string{ProbeContainerPID1, ProbeContainerPIDCollision}},
			{"host1", h1.Table().NamespaceID(0), 7, true, nil},                        // no PID 7 here
			{"host0", h1.Table().NamespaceID(1), 1, true, []string{ProbeRemoteOwner}}, // another host
		}
		for i, c := range cases {
			before := map[string]int{}
			for _, name := range []string{ProbeContainerPID1, ProbeContainerPIDCollision, ProbeRemoteOwner} {
				before[name] = w.ProbeCount(name)
			}
			if got := NoteOwnerMet(w, me, c.host, c.ns, c.pid); got != c.elsewhere {
				fail("case %d: elsewhere %t, want %t", i, got, c.elsewhere)
			}
			for name, count := range before {
				fired := w.ProbeCount(name) > count
				wanted := false
				for _, probe := range c.probes {
					wanted = wanted || probe == name
				}
				if fired != wanted {
					fail("case %d: probe %s fired %t, want %t", i, name, fired, wanted)
				}
			}
		}
		return nil
	}
	r := sim.Run(sim.Config{Seed: 1, Setup: setup})
	if r.Outcome != sim.OutcomeOK {
		t.Fatalf("%v: %s", r.Outcome, r.Message)
	}
	if failure != nil {
		t.Fatal(failure)
	}
}
