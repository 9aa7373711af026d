package simgc

import (
	"runtime/debug"
	"testing"
)

// TestTuneLeavesAnEnvironmentGOGC: Tune sets Percent, unless GOGC is set.
func TestTuneLeavesAnEnvironmentGOGC(t *testing.T) {
	cases := []struct {
		env  string
		want int
	}{
		{"", Percent},
		{"150", 100}, // the environment's GOGC: Tune leaves the current target
	}
	for _, tc := range cases {
		t.Run("GOGC="+tc.env, func(t *testing.T) {
			t.Setenv("GOGC", tc.env)
			previous := debug.SetGCPercent(100)
			defer debug.SetGCPercent(previous)
			Tune()
			if got := debug.SetGCPercent(100); got != tc.want {
				t.Fatalf("GOGC %q: target %d after Tune, want %d", tc.env, got, tc.want)
			}
		})
	}
}
