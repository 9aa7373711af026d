package statecas

import (
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
)

// BootDigest answers from its kept digests exactly as hashing does, for
// ids that share a slot and ids that come back.
func TestBootDigestIsTheHash(t *testing.T) {
	ids := []string{"", "a", "b-1", "c-1", "a", "", "b-1", "0000-9", "1111-9", "0000-9", "a"}
	for i, id := range ids {
		if got, want := BootDigest(id), statefile.SHA256Hex([]byte(id)); got != want {
			t.Fatalf("id %d %q: BootDigest %s, SHA256Hex %s", i, id, got, want)
		}
	}
	if BootDigest("") != UnknownBootDigest {
		t.Fatal("the empty boot id is not UnknownBootDigest")
	}
}
