package lease

import "testing"

// safePathPart maps each rune outside [A-Za-z0-9._-] to one '_' (an
// invalid byte counts as a rune), and returns a safe value unchanged.
func TestSafePathPart(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000a"},
		{"Gen_1.2-x", "Gen_1.2-x"},
		{"a/b", "a_b"},
		{"../x", ".._x"},
		{"é", "_"},
		{"a\xffb", "a_b"},
		{"日本-1", "__-1"},
		{"a b\x00", "a_b_"},
	} {
		if got := safePathPart(tc.in); got != tc.want {
			t.Errorf("safePathPart(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
