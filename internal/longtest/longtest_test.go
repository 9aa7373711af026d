package longtest

import "testing"

func TestEnabledUnderCIOrLeasekitLong(t *testing.T) {
	for _, tc := range []struct {
		ci, long string
		want     bool
	}{
		{"", "", false},
		{"true", "", true},
		{"", "1", true},
		{"", "0", false},
		{"1", "0", true},
	} {
		t.Setenv("CI", tc.ci)
		t.Setenv("LEASEKIT_LONG", tc.long)
		if got := Enabled(); got != tc.want {
			t.Errorf("CI=%q LEASEKIT_LONG=%q: Enabled() = %v, want %v", tc.ci, tc.long, got, tc.want)
		}
	}
}

func TestRequireSkipsUnlessEnabled(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("LEASEKIT_LONG", "")
	ran := false
	t.Run("off", func(t *testing.T) {
		Require(t, "a long check")
		ran = true
	})
	if ran {
		t.Fatal("Require ran a long test with neither CI nor LEASEKIT_LONG set")
	}
	t.Setenv("LEASEKIT_LONG", "1")
	t.Run("on", func(t *testing.T) {
		Require(t, "a long check")
		ran = true
	})
	if !ran && !testing.Short() {
		t.Fatal("Require skipped with LEASEKIT_LONG=1")
	}
}

func TestPickIsLongOnlyWhenEnabled(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("LEASEKIT_LONG", "")
	if got := Pick(3000, 1000); got != 1000 {
		t.Fatalf("Pick without the long tests = %d, want the short 1000", got)
	}
	t.Setenv("LEASEKIT_LONG", "1")
	if got := Pick(3000, 1000); got != 3000 {
		t.Fatalf("Pick with LEASEKIT_LONG=1 = %d, want the long 3000", got)
	}
}
