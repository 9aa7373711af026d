package sim

import (
	"math/rand/v2"
	"testing"
)

// TestIntNEqualsRandIntN holds intN, which Intn draws with, to math/rand/v2's
// Rand.IntN on the same source: the same value and the same number of
// source words consumed, for bounds that take the mask, the multiply and
// the rejection loop (a bound just above a power of two rejects often).
func TestIntNEqualsRandIntN(t *testing.T) {
	bounds := []uint64{2, 3, 4, 5, 7, 8, 10, 16, 100, 1000, 1 << 20, 1<<31 + 1, 1<<32 + 1, 1<<62 + 1, 1<<63 + 1, 1<<64 - 1}
	for seed := uint64(1); seed <= 50; seed++ {
		for _, n := range bounds {
			ours, theirs := rand.NewPCG(seed, n), rand.NewPCG(seed, n)
			library := rand.New(theirs)
			for i := 0; i < 200; i++ {
				if got, want := intN(ours, n), uint64(library.Uint64N(n)); got != want {
					t.Fatalf("seed %d bound %d draw %d: intN %d, rand.IntN %d", seed, n, i, got, want)
				}
				if ours.Uint64() != theirs.Uint64() {
					t.Fatalf("seed %d bound %d draw %d: the two sources drifted apart", seed, n, i)
				}
			}
		}
	}
}

// TestChanceOfEqualsFloat64 holds chanceOf to rand.Rand.Float64() < p on
// the same source.
func TestChanceOfEqualsFloat64(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for _, p := range []float64{1e-9, 0.001, 0.01, 0.25, 0.5, 0.999, 1} {
			ours, theirs := rand.NewPCG(seed, 7), rand.NewPCG(seed, 7)
			library := rand.New(theirs)
			for i := 0; i < 500; i++ {
				if got, want := chanceOf(ours, p) == 1, library.Float64() < p; got != want {
					t.Fatalf("seed %d p %g draw %d: chanceOf %v, Float64 < p %v", seed, p, i, got, want)
				}
			}
		}
	}
}

// hashPathReference is hashPath with its tail read a byte at a time, as
// before the tail took word loads: run hashes depend on every bit of it.
func hashPathReference(s string) uint64 {
	h := (uint64(len(s)) ^ 0x9e3779b97f4a7c15) * hashMultiplier
	for ; len(s) >= 8; s = s[8:] {
		h = (h ^ littleEndian64(s)) * hashMultiplier
	}
	var tail uint64
	for i := 0; i < len(s); i++ {
		tail |= uint64(s[i]) << (8 * i)
	}
	return mix64(h ^ tail)
}

// TestHashPathEqualsByteTail holds hashPath to the byte-at-a-time tail for
// every length up to 40 and bytes of every value.
func TestHashPathEqualsByteTail(t *testing.T) {
	source := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 40; n++ {
		for range 50 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(source.Uint32())
			}
			if got, want := hashPath(string(b)), hashPathReference(string(b)); got != want {
				t.Fatalf("hashPath(%q) = %x, want %x", b, got, want)
			}
		}
	}
}
