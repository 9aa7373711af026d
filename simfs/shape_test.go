package simfs

import "testing"

func TestFoldName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"receiver.lock", "receiver.lock"},
		{"guard.3", "guard.#"},
		{"s12-p3", "s#-p#"},
		{"intent-deadbeefcafe", "intent-#"},
		{"cafe", "#"}, {"abc", "abc"}, {"x-adbe-1f", "x-#-#"},
	} {
		if got := foldName(c.in); got != c.want {
			t.Errorf("foldName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
