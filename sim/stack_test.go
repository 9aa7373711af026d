package sim

import (
	"strings"
	"testing"
)

// panickingRun runs one process that panics at its third clock read and
// returns the run's failure message.
func panickingRun(t *testing.T) string {
	t.Helper()
	result := Run(Config{Seed: 1, Faults: &FaultPlan{}, Setup: func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, err := w.Spawn(h, ProcSpec{Name: "reader"}, func(p *Proc) {
			for i := range 5 {
				p.Clock().Now()
				if i == 2 {
					panic("reader: planted panic at its third clock read")
				}
			}
		})
		return err
	}})
	if result.Outcome != OutcomeViolation {
		t.Fatalf("outcome %v, want a violation", result.Outcome)
	}
	return result.Message
}

// A process's panic is a finding whose message, with its stack, must be
// the same in every run of the seed (replay compares traces bit for bit; a
// goroutine number or an argument address in it made a catalog mutant's
// seed replay as NONDETERMINISM). The stack still locates the panic.
func TestPanicMessageIsDeterministic(t *testing.T) {
	first := panickingRun(t)
	for range 3 {
		if again := panickingRun(t); again != first {
			t.Fatalf("two runs of one seed panicked with different messages:\n%s\n---\n%s", first, again)
		}
	}
	if !strings.Contains(first, "planted panic at its third clock read") || !strings.Contains(first, "stack_test.go:") {
		t.Fatalf("the message lost the panic or its frame:\n%s", first)
	}
	if strings.Contains(first, "(0x") || strings.Contains(first, "{0x") {
		t.Fatalf("the message keeps an argument word:\n%s", first)
	}
}

func TestStableStack(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"goroutine 21 [running]:\n", "goroutine [running]:\n"},
		{"main.f(0xc000012345, 0x1)\n", "main.f(...)\n"},
		{"main.g({0x1234, 0x5}, ...)\n", "main.g(...)\n"},
		{"sim.(*Proc).run(0x0?, 0x2f76723db728?)\n", "sim.(*Proc).run(...)\n"},
		// Elided arguments (_) beside heap addresses: a frame the compiler
		// did not inline, as under -gcflags=-l.
		{"lease.(*Manager).createOwner(0x15de00888600, 0x15de00916dc0, {{0x7df6e8?, 0x0?}, {_, _}}, _)\n",
			"lease.(*Manager).createOwner(...)\n"},
		{"main.(*T).f.func1()\n", "main.(*T).f.func1()\n"},
		{"main.h()\n\t/x/y.go:3 +0x5e\n", "main.h()\n\t/x/y.go:3 +0x5e\n"},
		{"created by main.k in goroutine 7\n", "created by main.k in goroutine\n"},
	} {
		if got := string(stableStack([]byte(tc.in))); got != tc.want {
			t.Errorf("stableStack(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
