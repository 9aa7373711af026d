package campaign

import "testing"

// TestReknobMovesOnlyFreeKnobs: reknob redraws knobs the campaign left
// free within [Min, Max], and never one the campaign set.
func TestReknobMovesOnlyFreeKnobs(t *testing.T) {
	o := guidedOptions("vault", 100)
	o.Params = Params{"turns": 5}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	g := newGuidedSearch(&o, "vault", nil)
	moved := 0
	for range 200 {
		spec := g.fresh(0)
		g.reknob(&spec, 2)
		if spec.Params["turns"] != 5 {
			t.Fatalf("reknob changed turns, which the campaign set: %v", spec.Params)
		}
		processes := spec.Params["processes"]
		if processes < 1 || processes > 8 {
			t.Fatalf("processes %d, want within [1, 8] (the knob's Min and Max)", processes)
		}
		if processes != 3 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("reknob never moved the free knob")
	}
}
