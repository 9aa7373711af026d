package statecas

import (
	"errors"
	"os"
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestRemoveIfUnchangedAfter: act runs only while target holds the
// expected bytes, under target's mutation claim (an owner's write from
// another process during act is refused as active), and target is unlinked
// only after act succeeded.
func TestRemoveIfUnchangedAfter(t *testing.T) {
	one, two := []byte("{\"v\":1}\n"), []byte("{\"v\":2}\n")
	actFailed := errors.New("act failed")
	cases := []struct {
		name        string
		content     []byte // nil: target absent
		actErr      error
		wantRan     bool
		wantRemoved bool
		wantErr     error
	}{
		{"unchanged", one, nil, true, true, nil},
		{"changed", two, nil, false, false, nil},
		{"absent", nil, nil, false, false, nil},
		{"act fails", one, actFailed, true, false, actFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.content != nil {
				must(t, os.WriteFile(f.target(), tc.content, 0o600))
			}
			other := f.env
			other.Inspector = f.inspector.As(leasetest.IdentityOf(1001, f.uid, "501"))
			ran := false
			removed, err := RemoveIfUnchangedAfter(f.env, f.target(), statefile.SHA256Hex(one), func() error {
				ran = true
				written, err := WriteIfUnchanged(other, f.target(), two, statefile.SHA256Hex(one))
				if written || KindOf(err) != ErrMutationActive {
					t.Errorf("a write during act: want ErrMutationActive, got %v %v", written, err)
				}
				return tc.actErr
			})
			if ran != tc.wantRan || removed != tc.wantRemoved || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("ran=%v removed=%v err=%v", ran, removed, err)
			}
			_, statErr := os.Lstat(f.target())
			if present := statErr == nil; present != (tc.content != nil && !tc.wantRemoved) {
				t.Fatalf("target present=%v after removed=%v", present, removed)
			}
			if _, err := os.Lstat(ClaimPath(f.target())); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the mutation claim is left: %v", err)
			}
		})
	}
}
