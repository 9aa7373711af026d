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

// A redrawn world's step budget grows with it: the default world keeps the
// engine's budget, a larger one gets that budget times how much larger it
// is, up to stepsMaxScaleMax.
func TestScaledStepsMax(t *testing.T) {
	e := &Engine{StepsMax: 1000, Params: []Param{
		{Name: "procs", Default: 2, Min: 1, Max: 8},
		{Name: "ops", Default: 8, Min: 1, Max: 64},
	}}
	for _, tc := range []struct {
		params Params
		want   int
	}{
		{Params{"procs": 2, "ops": 8}, 1000},
		{Params{"procs": 1, "ops": 4}, 1000},
		{Params{"procs": 4, "ops": 8}, 2000},
		{Params{"procs": 3, "ops": 9}, 4000},
		{Params{"procs": 8, "ops": 59}, 32000},
		{Params{"procs": 6, "ops": 16}, 6000},
	} {
		if got := scaledStepsMax(e, tc.params); got != tc.want {
			t.Errorf("scaledStepsMax(%v) = %d, want %d", tc.params, got, tc.want)
		}
	}
	e.Params[1].Max = 1000
	if got := scaledStepsMax(e, Params{"procs": 8, "ops": 1000}); got != 1000*stepsMaxScaleMax {
		t.Errorf("the scale is not bounded: %d", got)
	}
}
