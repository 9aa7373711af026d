package campaign

import "testing"

// TestReknobGrowsOnlyFreeKnobs: reknob moves one knob the campaign left
// free into [Default, min(Max, 2*Default)], and never one the campaign set.
func TestReknobGrowsOnlyFreeKnobs(t *testing.T) {
	o := guidedOptions("vault", 100)
	o.Params = Params{"turns": 5}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	g := newGuidedSearch(&o, "vault", nil)
	moved := 0
	for range 200 {
		spec := g.fresh(0)
		g.reknob(&spec)
		if spec.Params["turns"] != 5 {
			t.Fatalf("reknob changed turns, which the campaign set: %v", spec.Params)
		}
		processes := spec.Params["processes"]
		if processes < 3 || processes > 6 {
			t.Fatalf("processes %d, want within [3, 6] (default 3)", processes)
		}
		if processes != 3 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("reknob never grew the free knob")
	}
}
